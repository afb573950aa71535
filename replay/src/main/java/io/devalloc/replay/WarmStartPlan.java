package io.devalloc.replay;

import io.devalloc.api.device.DeviceStream;
import io.devalloc.api.spi.PyTorchStateRestore;
import io.devalloc.replay.ReplayOutcome.WarmStartKind;
import java.util.ArrayList;
import java.util.List;
import java.util.function.LongFunction;

/**
 * How a replay starts from the state a trace recorded, decided once from its scan and the allocator's capability:
 * whether the state is restored (the allocator offers {@link PyTorchStateRestore}), allocated with malloc (it does
 * not), or not at all; the expandable layout of the presegments; and the addresses a simulated device hands out
 * first so that restored segments land where they were. The replaying pass and the replay up to the peak execute
 * the same plan ({@link #execute}), so neither works the warm start out again. Immutable.
 *
 * @param kind               how the state is set up
 * @param layout             the presegments as mapped ranges of expandable segments, or null
 * @param expandable         whether the restore follows {@code layout} (else ordinary segments)
 * @param scriptedAddresses  the addresses the device must hand out first, or null when it cannot place segments
 * @param restoredSegments   the presegments restored (0 unless restored)
 * @param preallocBlocks     the prealloc blocks allocated with malloc (0 unless {@link WarmStartKind#MALLOC})
 * @param notes              the notes; a restore's are preceded by the count of what it restored
 */
record WarmStartPlan(WarmStartKind kind, ExpandableLayout layout, boolean expandable, List<Long> scriptedAddresses,
                     long restoredSegments, long preallocBlocks, List<String> notes) {

    /** How the warm state was set up, with the notes that say so. */
    record Setup(WarmStartKind kind, long restoredSegments, long restoredBlocks, List<String> notes) {
    }

    /**
     * The plan for a replay with {@code options} of the trace {@code scan} describes.
     *
     * @param restore  the allocator's restore capability, or null when it has none
     * @param space    the simulated device's address space when it can be scripted with the recorded addresses,
     *                 else null
     * @param allocator the allocator's name, for the notes
     */
    static WarmStartPlan of(ReplayOptions options, TraceScan scan, PyTorchStateRestore restore,
                            ExpandableLayout.AddressSpace space, String allocator) {
        List<String> notes = new ArrayList<>();
        if (!options.warm()) {
            return new WarmStartPlan(WarmStartKind.NONE, null, false, null, 0, 0, List.of());
        }
        if (!scan.startsWarm()) {
            notes.add("--warm: the trace has no presegment or prealloc rows (it starts from an empty allocator)");
            return new WarmStartPlan(WarmStartKind.NONE, null, false, null, 0, 0, List.copyOf(notes));
        }
        if (restore == null) {
            notes.add("warm start: allocator '" + allocator + "' cannot restore the recorded state: the "
                    + scan.preallocs + " prealloc blocks were allocated with malloc and the " + scan.presegments
                    + " presegments were not restored");
            return new WarmStartPlan(WarmStartKind.MALLOC, null, false, null, 0, scan.preallocs, List.copyOf(notes));
        }
        // With expandable segments the presegments are the mapped ranges of expandable segments, unless the trace
        // shows it was recorded without them.
        ExpandableLayout layout = restore.expandableSegments() && !scan.presegmentRows.isEmpty()
                ? ExpandableLayout.plan(restore, scan, space) : null;
        boolean expandable = layout != null && layout.ordinaryReason() == null;
        List<Long> scripted = null;
        if (space != null && !scan.presegmentRows.isEmpty()) {
            scripted = expandable ? layout.scriptedAddresses() : presegmentAddresses(scan);
        }
        long restoredSegments = scan.presegmentRows.size();
        if (expandable) {
            notes.addAll(layout.notes());
        } else if (layout != null) {
            notes.add("warm start: the presegments were restored as ordinary (cudaMalloc'd) segments, not as mapped"
                    + " ranges of expandable segments: " + layout.ordinaryReason());
        } else if (restoredSegments > 0 && (scan.segmentMaps > 0 || scan.segmentUnmaps > 0)) {
            notes.add("warm start: the trace maps and unmaps expandable segments, but this replay runs without"
                    + " them: its presegments were restored as ordinary (cudaMalloc'd) segments");
        }
        return new WarmStartPlan(WarmStartKind.RESTORED, layout, expandable, scripted, restoredSegments, 0,
                List.copyOf(notes));
    }

    /**
     * Sets the warm state up on an allocator opened for this plan (over a device scripted with
     * {@link #scriptedAddresses} when there are some): restores the state, or allocates the prealloc blocks with
     * malloc (the dispatch does that as the replay starts), or nothing.
     *
     * @param restore the allocator's restore capability (null unless {@link WarmStartKind#RESTORED})
     * @throws IllegalArgumentException naming the row, if the rows do not describe a state PyTorch could have had
     */
    Setup execute(TraceScan scan, PyTorchStateRestore restore, LongFunction<DeviceStream> streams, KeyMap live) {
        if (kind != WarmStartKind.RESTORED) {
            return new Setup(kind, 0, preallocBlocks, notes);
        }
        long restoredBlocks = WarmStart.seed(restore, scan, expandable ? layout : null, streams, live).size();
        boolean placed = scriptedAddresses != null;
        String how = expandable ? ", the presegments as the mapped ranges of " + layout.segments().size()
                + " expandable segments" : "";
        List<String> said = new ArrayList<>();
        said.add("warm start: " + restoredSegments + " presegments and " + restoredBlocks
                + " prealloc blocks restored" + (placed ? " at their recorded addresses" + how
                : how + "; this device cannot place segments at the recorded addresses, so blocks keep their offsets"
                + " within their segments and ties between equal free blocks may go elsewhere"));
        said.addAll(notes);
        return new Setup(kind, restoredSegments, restoredBlocks, List.copyOf(said));
    }

    private static List<Long> presegmentAddresses(TraceScan scan) {
        List<Long> addresses = new ArrayList<>();
        for (TraceScan.Pre s : scan.presegmentRows) {
            addresses.add(s.address());
        }
        return addresses;
    }
}
