package io.devalloc.replay.cli;

import static io.devalloc.replay.cli.TraceReplays.count;

import io.devalloc.api.units.ByteSize;
import io.devalloc.replay.GroundTruthComparability;
import io.devalloc.replay.ReplayResult;
import java.io.PrintWriter;
import java.util.ArrayList;
import java.util.List;

/**
 * The summary {@code devalloc replay} leads with for a snapshot of several devices: one line per device replayed (its
 * events, how it compares with the recording, its peak, the out-of-memory errors of the recording and of the
 * replay), the devices never used, and the device that reserved the most. Stateless.
 */
final class DeviceSummary {

    private DeviceSummary() {
    }

    /**
     * The device whose replay reserved the most at its peak (a device with only its end state counts its end state);
     * the first of equals.
     */
    static TraceReplays.DeviceReplay mostReserved(TraceReplays.DeviceReplays file) {
        TraceReplays.DeviceReplay most = file.devices().getFirst();
        for (TraceReplays.DeviceReplay r : file.devices()) {
            if (r.outcome().result().peakReservedBytes() > most.outcome().result().peakReservedBytes()) {
                most = r;
            }
        }
        return most;
    }

    static void print(PrintWriter out, String trace, TraceReplays.DeviceReplays file) {
        int with = 0;
        for (TraceReplays.DeviceReplay r : file.devices()) {
            with += r.history() ? 1 : 0;
        }
        int endState = file.devices().size() - with;
        out.println("Devices of " + trace + ": " + with + " with a history" + (endState == 0 ? "" : ", " + endState
                + " with only an end state") + (file.unusedDevices().isEmpty() ? ""
                : ", " + file.unusedDevices().size() + " unused"));
        out.println();
        TextTable t = TextTable.withHeaders("DEVICE", "EVENTS", "VS THE TRACE", "PEAK RESERVED", "OOMS\nRECORDED",
                "OOMS\nREPLAYED");
        for (int c : new int[] {1, 3, 4, 5}) {
            t.align(c, TextTable.Align.RIGHT);
        }
        for (TraceReplays.DeviceReplay r : file.devices()) {
            ReplayResult result = r.outcome().result();
            ReplayResult.GroundTruth g = result.groundTruth();
            String versus = !r.history() ? "END STATE ONLY" : g == null ? "-"
                    : !GroundTruthComparability.comparable(result.allocator()) ? TraceReplays.NOT_COMPARABLE
                    : g.match() ? "MATCH" : "DIFFERS";
            t.row(r.label(), count(result.events()), versus, ByteSize.format(result.peakReservedBytes())
                    + (r.history() ? "" : " at its end"), count(r.traceOoms()), count(result.ooms()));
        }
        t.print(out, "  ");
        if (!file.unusedDevices().isEmpty()) {
            List<String> names = new ArrayList<>();
            for (int i : file.unusedDevices()) {
                names.add("cuda:" + i);
            }
            TextWrap.print(out, "  ", "  ", "unused: " + String.join(", ", names) + " (no trace entry, no segment:"
                    + " GPUs the process could see and never used)");
        }
        TraceReplays.DeviceReplay most = mostReserved(file);
        TextWrap.print(out, "  ", "  ", most.label() + " needs the most memory in this replay: "
                + ByteSize.format(most.outcome().result().peakReservedBytes()) + " reserved at its "
                + (most.history() ? "peak" : "end state") + (most.traceOoms() > 0 ? " (the recording ran out of"
                + " memory there; 'devalloc advise' says what gets past it)" : "") + ".");
    }
}
