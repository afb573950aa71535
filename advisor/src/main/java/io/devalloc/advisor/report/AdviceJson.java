package io.devalloc.advisor.report;

import io.devalloc.advisor.Advice;
import io.devalloc.advisor.Advisor;
import io.devalloc.advisor.BoundsLadder;
import io.devalloc.advisor.CapacityCheck;
import io.devalloc.advisor.CardCapacity;
import io.devalloc.advisor.JobAdvice;
import io.devalloc.advisor.MinSaving;
import io.devalloc.advisor.OomPostMortem;
import io.devalloc.advisor.Recommendation;
import io.devalloc.advisor.SettingResult;
import io.devalloc.advisor.TrustLine;
import io.devalloc.replay.CacheFlushes;
import io.devalloc.replay.DeviceTrace;
import io.devalloc.replay.RecordedOom;
import io.devalloc.replay.ReplayJson;
import io.devalloc.replay.ReplayResult;
import io.devalloc.replay.bounds.IntervalCounts;
import io.devalloc.replay.bounds.LowerBound;
import io.devalloc.replay.bounds.OfflinePlan;
import io.devalloc.replay.bounds.PlanOrder;
import io.devalloc.trace.text.JsonWriter;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * {@code devalloc advise --json}: one JSON object, whose schema docs/advisor.md documents and {@link #SCHEMA} numbers:
 * the trace, then one object per device ({@code devices}), each with the device's index and every key of the
 * single-trace object of schema 1. Keys are never renamed or removed within a schema version; new keys may be added.
 * Bytes are integers, fractions floats in [0, 1], absent figures {@code null}.
 */
public final class AdviceJson {

    /** The schema's version, the object's {@code schema} key. */
    public static final int SCHEMA = 2;

    private AdviceJson() {
    }

    /** The advice as JSON text, indented when {@code pretty}. */
    public static String toJson(JobAdvice job, boolean pretty) {
        return JsonWriter.toString(toMap(job), pretty);
    }

    /** The advice on every device as the value tree the JSON is written from. */
    public static Map<String, Object> toMap(JobAdvice job) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("schema", SCHEMA);
        m.put("trace", job.trace());
        m.put("allocator", job.allocator());
        m.put("objective", job.objective().cliName());
        Advice first = job.devices().getFirst();
        m.put("capacity_bytes", first.capacityBytes() == -1 ? null : first.capacityBytes());
        m.put("min_saving", minSaving(first.minSaving()));
        m.put("granularity_bytes", Advisor.GRANULARITY);
        List<Object> devices = new ArrayList<>();
        for (Advice a : job.devices()) {
            devices.add(device(a));
        }
        m.put("devices", devices);
        m.put("unused_devices", job.unusedDevices());
        Advice most = job.mostMemory();
        m.put("most_memory_device", most.cudaDevice() == DeviceTrace.NO_DEVICE ? null : most.cudaDevice());
        m.put("runs", job.runs());
        m.put("threads", job.threads());
        return m;
    }

    /** One device's advice: its index and what it has, then every key of schema 1's object. */
    public static Map<String, Object> device(Advice advice) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("device", advice.cudaDevice() == DeviceTrace.NO_DEVICE ? null : advice.cudaDevice());
        m.put("history", advice.hasHistory());
        m.put("events", advice.events());
        m.put("recorded_peak_reserved_bytes", advice.recordedPeakReservedBytes());
        m.put("needed_bytes", advice.neededBytes());
        m.put("schema", SCHEMA);
        m.put("trace", advice.trace());
        m.put("allocator", advice.allocator());
        m.put("objective", advice.objective().cliName());
        m.put("capacity_bytes", advice.capacityBytes() == -1 ? null : advice.capacityBytes());
        m.put("card", card(advice.capacity()));
        m.put("min_saving", minSaving(advice.minSaving()));
        m.put("granularity_bytes", Advisor.GRANULARITY);
        Map<String, Object> grid = new LinkedHashMap<>();
        grid.put("name", advice.grid().name());
        grid.put("problems", advice.grid().problems());
        m.put("grid", grid);
        m.put("baseline", baseline(advice));
        m.put("flushes", flushes(advice.flushes()));
        m.put("oom", oom(advice.oom()));
        m.put("bounds", bounds(advice.ladder()));
        List<Object> settings = new ArrayList<>();
        int rank = 0;
        for (SettingResult s : advice.settings()) {
            settings.add(setting(s, AdviceText.ranked(s, advice) ? ++rank : null, advice.oom()));
        }
        m.put("settings", settings);
        m.put("recommendation", recommendation(advice.recommendation()));
        m.put("end_state", endState(advice));
        m.put("notes", advice.notes());
        m.put("runs", advice.runs());
        m.put("threads", advice.threads());
        return m;
    }

    private static Map<String, Object> minSaving(MinSaving margin) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("fraction", margin.fraction());
        m.put("bytes", margin.bytes());
        return m;
    }

    private static Map<String, Object> card(CardCapacity card) {
        if (card == null) {
            return null;
        }
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("capacity_bytes", card.bytes());
        m.put("source", card.source().jsonName());
        m.put("reason", card.reason());
        return m;
    }

    private static Map<String, Object> flushes(CacheFlushes f) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("program_empty_cache", f.programCalls());
        m.put("allocator_flushes", f.allocatorFlushes());
        m.put("told_by_frames", f.byFrames());
        m.put("told_by_oom", f.byOutOfMemory());
        m.put("told_by_no_device_malloc", f.byNoDeviceMalloc());
        m.put("told_by_capacity", f.byCapacity());
        m.put("assumed_program", f.assumedProgram());
        m.put("recorded_capacity_bytes", f.capacity() == null ? null : f.capacity().bytes());
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

    /** The post-mortem of a trace with {@code oom} entries; null for one without. */
    private static Map<String, Object> oom(OomPostMortem post) {
        if (post == null) {
            return null;
        }
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("entries", post.entries());
        List<Object> listed = new ArrayList<>();
        for (RecordedOom o : post.ooms()) {
            Map<String, Object> e = new LinkedHashMap<>();
            e.put("event", o.event());
            e.put("request_bytes", o.requestBytes() > 0 ? o.requestBytes() : null);
            e.put("reserved_bytes", o.reservedBytes());
            e.put("live_requested_bytes", o.liveRequestedBytes());
            e.put("device_free_bytes", o.deviceFreeBytes() < 0 ? null : o.deviceFreeBytes());
            e.put("capacity_bytes", o.capacityBytes() < 0 ? null : o.capacityBytes());
            listed.add(e);
        }
        m.put("listed", listed);
        m.put("card", card(post.card()));
        OomPostMortem.Reproduction r = post.reproduction();
        if (r == null) {
            m.put("reproduction", null);
        } else {
            Map<String, Object> rep = new LinkedHashMap<>();
            rep.put("reproduced", r.reproduced());
            rep.put("first_oom", ReplayJson.oomMap(r.replayed()));
            rep.put("sentence", r.sentence());
            m.put("reproduction", rep);
        }
        m.put("verdict", post.verdict());
        return m;
    }

    /** The bounds ladder; null for a device with only its end state. */
    private static Map<String, Object> bounds(BoundsLadder ladder) {
        if (ladder == null) {
            return null;
        }
        Map<String, Object> m = new LinkedHashMap<>();
        LowerBound b = ladder.bound();
        // Sizes that add up beyond a long give no figure: null, with "saturated" true.
        boolean saturated = ladder.saturated();
        m.put("requested_peak_bytes", saturated ? null : b.requestedPeakBytes());
        // Events numbered from 1, as everywhere in the reports (the bounds package numbers rows from 0).
        m.put("requested_peak_event", b.requestedPeakEvent() < 0 ? null : b.requestedPeakEvent() + 1);
        m.put("rounded_peak_bytes", saturated ? null : b.roundedPeakBytes());
        m.put("rounded_peak_event", b.roundedPeakEvent() < 0 ? null : b.roundedPeakEvent() + 1);
        m.put("rounding_allocator", ladder.roundingAllocator());
        OfflinePlan plan = ladder.plan();
        m.put("plan_bytes", saturated ? null : plan.bytes());
        m.put("plan_order", plan.bestOrder() == PlanOrder.BY_SIZE ? "by_size" : "by_lifetime");
        m.put("plan_by_size_bytes", saturated ? null : plan.bySizeBytes());
        m.put("plan_by_lifetime_bytes", saturated ? null : plan.byLifetimeBytes());
        m.put("plan_approximations", plan.approximations());
        m.put("refused_by_rounding", b.refusedByRounding());
        m.put("saturated", saturated);
        IntervalCounts c = ladder.counts();
        Map<String, Object> counts = new LinkedHashMap<>();
        counts.put("allocations", c.allocations());
        counts.put("warm_start_blocks", c.warmStartBlocks());
        counts.put("oom_instants", c.oomInstants());
        counts.put("ooms_without_request", c.oomsWithoutRequest());
        counts.put("unknown_frees", c.unknownFrees());
        counts.put("reallocated_live_keys", c.reallocatedLiveKeys());
        counts.put("never_freed", c.neverFreed());
        counts.put("negative_sizes", c.negativeSizes());
        m.put("intervals", counts);
        m.put("best", ladder.best() == null ? null : ladder.best().config());
        m.put("best_min_capacity_bytes", ladder.best() == null ? null : ladder.best().minCapacityBytes());
        m.put("recorded", ladder.recorded() == null ? null : ladder.recorded().config());
        m.put("recorded_min_capacity_bytes", ladder.recorded() == null || !ladder.recorded().fits() ? null
                : ladder.recorded().minCapacityBytes());
        m.put("baseline_is_recorded", ladder.recordedSetting());
        double closed = ladder.gapClosed();
        m.put("gap_closed", Double.isNaN(closed) ? null : closed);
        m.put("left_bytes", ladder.leftBytes() < 0 ? null : ladder.leftBytes());
        List<Object> rungs = new ArrayList<>();
        for (BoundsLadder.Rung r : ladder.rungs()) {
            Map<String, Object> e = new LinkedHashMap<>();
            e.put("rung", r.key());
            e.put("label", r.label());
            e.put("bytes", r.bytes() < 0 ? null : r.bytes());
            rungs.add(e);
        }
        m.put("rungs", rungs);
        m.put("reading", ladder.reading());
        return m;
    }

    private static Map<String, Object> setting(SettingResult s, Integer rank, OomPostMortem post) {
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
        m.put("retries_at_min_capacity", s.fits() ? s.retriesAtMinCapacity() : null);
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
        m.put("waste_at_peak", ReplayJson.wasteMap(peak));
        m.put("end_reserved_bytes", r == null ? null : r.endReservedBytes());
        m.put("search_runs", s.searchRuns());
        if (c != null) {
            ReplayResult at = c.result();
            Map<String, Object> card = new LinkedHashMap<>();
            card.put("capacity_bytes", c.capacityBytes());
            card.put("runs", c.runs());
            card.put("ooms", c.ooms());
            card.put("alloc_retries", c.flushes());
            card.put("peak_reserved_bytes", c.peakReserved());
            card.put("peak_allocated_bytes", at.peakAllocatedBytes());
            card.put("device_mallocs", at.deviceMallocs());
            card.put("device_frees", at.deviceFrees());
            card.put("end_reserved_bytes", at.endReservedBytes());
            card.put("waste_at_peak", ReplayJson.wasteMap(at.peak()));
            card.put("first_oom", ReplayJson.oomMap(c.firstOom()));
            if (post != null) {
                card.put("at_recorded_oom", post.passage(s).jsonName());
                card.put("oom_requests_served", c.servedOomRequests());
                long spare = post.spareBytes(s);
                card.put("spare_bytes", spare < 0 ? null : spare);
            }
            m.put("at_capacity", card);
        }
        return m;
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
        m.put("why", rec.why().jsonName());
        m.put("reason", rec.reason());
        m.put("runner_up", rec.runnerUp() == null ? null : rec.runnerUp().config());
        m.put("costs", rec.costs());
        m.put("caveats", rec.caveats());
        return m;
    }

    private static Map<String, Object> endState(Advice advice) {
        if (advice.hasHistory() || advice.endState() == null) {
            return null;
        }
        ReplayResult r = advice.endState().result();
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("reserved_bytes", r.peakReservedBytes());
        m.put("allocated_bytes", r.peakAllocatedBytes());
        m.put("requested_bytes", r.peakRequestedBytes());
        m.put("segments", r.peakSnapshot() == null ? null : r.peakSnapshot().segments().size());
        m.put("waste", ReplayJson.wasteMap(r.peak()));
        return m;
    }
}
