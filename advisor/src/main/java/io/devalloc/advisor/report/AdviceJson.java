package io.devalloc.advisor.report;

import io.devalloc.advisor.Advice;
import io.devalloc.advisor.CapacityCheck;
import io.devalloc.advisor.Recommendation;
import io.devalloc.advisor.SettingResult;
import io.devalloc.advisor.TrustLine;
import io.devalloc.replay.ReplayJson;
import io.devalloc.replay.ReplayResult;
import io.devalloc.trace.text.JsonWriter;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * {@code devalloc advise --json}: one JSON object, whose schema docs/advisor.md documents and {@link #SCHEMA} numbers.
 * Keys are never renamed or removed within a schema version; new keys may be added. Bytes are integers, fractions
 * floats in [0, 1], absent figures {@code null}.
 */
public final class AdviceJson {

    /** The schema's version, the object's {@code schema} key. */
    public static final int SCHEMA = 1;

    private AdviceJson() {
    }

    /** The advice as JSON text, indented when {@code pretty}. */
    public static String toJson(Advice advice, boolean pretty) {
        return JsonWriter.toString(toMap(advice), pretty);
    }

    /** The advice as the value tree the JSON is written from. */
    public static Map<String, Object> toMap(Advice advice) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("schema", SCHEMA);
        m.put("trace", advice.trace());
        m.put("allocator", advice.allocator());
        m.put("objective", advice.objective().cliName());
        m.put("capacity_bytes", advice.capacityBytes() == -1 ? null : advice.capacityBytes());
        m.put("granularity_bytes", io.devalloc.advisor.Advisor.GRANULARITY);
        Map<String, Object> grid = new LinkedHashMap<>();
        grid.put("name", advice.grid().name());
        grid.put("problems", advice.grid().problems());
        m.put("grid", grid);
        m.put("baseline", baseline(advice));
        List<Object> settings = new ArrayList<>();
        int rank = 0;
        for (SettingResult s : advice.settings()) {
            settings.add(setting(s, s.fits() ? ++rank : null));
        }
        m.put("settings", settings);
        m.put("recommendation", recommendation(advice.recommendation()));
        m.put("notes", advice.notes());
        m.put("runs", advice.runs());
        m.put("threads", advice.threads());
        return m;
    }

    private static Map<String, Object> baseline(Advice advice) {
        TrustLine t = advice.trust();
        Map<String, Object> b = new LinkedHashMap<>();
        b.put("config", t.config());
        b.put("source", t.configSource());
        b.put("notes", t.notes());
        Map<String, Object> g = new LinkedHashMap<>();
        g.put("verdict", t.word());
        g.put("match", switch (t.verdict()) {
            case MATCH -> true;
            case DIFFERS -> false;
            case NOT_COMPARABLE, FAILED -> null;
        });
        g.put("first_difference", t.verdict() == TrustLine.Verdict.MATCH ? null : t.firstDifference());
        ReplayResult r = t.outcome() == null ? null : t.outcome().result();
        ReplayResult.GroundTruth truth = r == null ? null : r.groundTruth();
        g.put("trace_device_mallocs", truth == null ? null : truth.deviceMallocs());
        g.put("trace_device_frees", truth == null ? null : truth.deviceFrees());
        g.put("trace_peak_reserved_bytes", truth == null ? null : truth.peakReservedBytes());
        g.put("replay_device_mallocs", r == null ? null : r.deviceMallocs());
        g.put("replay_device_frees", r == null ? null : r.deviceFrees());
        g.put("replay_peak_reserved_bytes", r == null ? null : r.peakReservedBytes());
        b.put("ground_truth", g);
        return b;
    }

    private static Map<String, Object> setting(SettingResult s, Integer rank) {
        Map<String, Object> m = new LinkedHashMap<>();
        ReplayResult r = s.result();
        m.put("config", s.config());
        m.put("origin", s.entry().origin());
        m.put("recorded", s.recorded());
        m.put("rank", rank);
        m.put("error", s.error());
        m.put("peak_reserved_bytes", r == null ? null : r.peakReservedBytes());
        m.put("peak_allocated_bytes", r == null ? null : r.peakAllocatedBytes());
        m.put("peak_requested_bytes", r == null ? null : r.peakRequestedBytes());
        m.put("min_capacity_bytes", s.fits() ? s.minCapacityBytes() : null);
        m.put("device_mallocs", r == null ? null : r.deviceMallocs());
        m.put("device_frees", r == null ? null : r.deviceFrees());
        m.put("alloc_retries", r == null ? null : r.allocRetries());
        CapacityCheck c = s.atCapacity();
        m.put("ooms_at_capacity", c == null ? null : c.ooms());
        m.put("ooms_unlimited", r == null ? null : r.ooms());
        m.put("fragmentation", r == null ? null : r.fragmentation());
        m.put("requested_fragmentation", r == null ? null : r.requestedFragmentation());
        ReplayResult.Peak peak = r == null ? null : r.peak();
        m.put("peak_event", peak == null ? null : peak.event());
        m.put("waste_at_peak", peak == null || peak.waste() == null ? null : ReplayJson.wasteMap(peak.waste()));
        m.put("end_reserved_bytes", r == null ? null : r.endReservedBytes());
        m.put("search_runs", s.searchRuns());
        if (c != null) {
            Map<String, Object> at = new LinkedHashMap<>();
            at.put("capacity_bytes", c.capacityBytes());
            at.put("runs", c.runs());
            at.put("ooms", c.ooms());
            at.put("peak_reserved_bytes", c.peakReserved());
            at.put("first_oom", oom(c.firstOom()));
            m.put("at_capacity", at);
        }
        return m;
    }

    private static Map<String, Object> oom(ReplayResult.OomPoint oom) {
        if (oom == null) {
            return null;
        }
        Map<String, Object> o = new LinkedHashMap<>();
        o.put("event", oom.event());
        o.put("request_bytes", oom.requestBytes());
        o.put("reserved_bytes", oom.reservedBytes());
        o.put("allocated_bytes", oom.allocatedBytes());
        return o;
    }

    private static Map<String, Object> recommendation(Recommendation rec) {
        if (rec == null) {
            return null;
        }
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("config", rec.setting().config());
        m.put("env", rec.env());
        m.put("saving_bytes", rec.savingBytes());
        m.put("saving_fraction", rec.savingFraction());
        m.put("saving_device_calls", rec.savingDeviceCalls());
        m.put("saving_device_calls_fraction", rec.savingDeviceCallsFraction());
        m.put("already_best", rec.alreadyBest());
        m.put("reason", rec.reason());
        m.put("caveats", rec.caveats());
        return m;
    }
}
