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
        Advice first = job.devices().getFirst();
        List<Object> devices = new ArrayList<>();
        for (Advice a : job.devices()) {
            devices.add(device(a));
        }
        Advice most = job.mostMemory();
        return JsonWriter.object(
                "schema", SCHEMA,
                "trace", job.trace(),
                "allocator", job.allocator(),
                "objective", job.objective().cliName(),
                "capacity_bytes", first.capacityBytes() == -1 ? null : first.capacityBytes(),
                "min_saving", minSaving(first.minSaving()),
                "granularity_bytes", Advisor.GRANULARITY,
                "devices", devices,
                "unused_devices", job.unusedDevices(),
                "most_memory_device", most.cudaDevice() == DeviceTrace.NO_DEVICE ? null : most.cudaDevice(),
                "runs", job.runs(),
                "threads", job.threads());
    }

    /** One device's advice: its index and what it has, then every key of schema 1's object. */
    public static Map<String, Object> device(Advice advice) {
        List<Object> settings = new ArrayList<>();
        int rank = 0;
        for (SettingResult s : advice.settings()) {
            settings.add(setting(s, AdviceText.ranked(s, advice) ? ++rank : null, advice.oom()));
        }
        return JsonWriter.object(
                "device", advice.cudaDevice() == DeviceTrace.NO_DEVICE ? null : advice.cudaDevice(),
                "history", advice.hasHistory(),
                "events", advice.events(),
                "recorded_peak_reserved_bytes", advice.recordedPeakReservedBytes(),
                "needed_bytes", advice.neededBytes(),
                "schema", SCHEMA,
                "trace", advice.trace(),
                "allocator", advice.allocator(),
                "objective", advice.objective().cliName(),
                "capacity_bytes", advice.capacityBytes() == -1 ? null : advice.capacityBytes(),
                "card", card(advice.capacity()),
                "min_saving", minSaving(advice.minSaving()),
                "granularity_bytes", Advisor.GRANULARITY,
                "grid", JsonWriter.object("name", advice.grid().name(), "problems", advice.grid().problems()),
                "baseline", baseline(advice),
                "flushes", flushes(advice.flushes()),
                "oom", oom(advice.oom()),
                "bounds", bounds(advice.ladder()),
                "settings", settings,
                "recommendation", recommendation(advice.recommendation()),
                "end_state", endState(advice),
                "notes", advice.notes(),
                "runs", advice.runs(),
                "threads", advice.threads());
    }

    private static Map<String, Object> minSaving(MinSaving margin) {
        return JsonWriter.object("fraction", margin.fraction(), "bytes", margin.bytes());
    }

    private static Map<String, Object> card(CardCapacity card) {
        return card == null ? null : JsonWriter.object(
                "capacity_bytes", card.bytes(),
                "source", card.source().jsonName(),
                "reason", card.reason());
    }

    private static Map<String, Object> flushes(CacheFlushes f) {
        return JsonWriter.object(
                "program_empty_cache", f.programCalls(),
                "allocator_flushes", f.allocatorFlushes(),
                "told_by_frames", f.byFrames(),
                "told_by_oom", f.byOutOfMemory(),
                "told_by_no_device_malloc", f.byNoDeviceMalloc(),
                "told_by_capacity", f.byCapacity(),
                "assumed_program", f.assumedProgram(),
                "recorded_capacity_bytes", f.capacity() == null ? null : f.capacity().bytes());
    }

    private static Map<String, Object> baseline(Advice advice) {
        TrustLine t = advice.trust();
        ReplayResult r = t.outcome() == null ? null : t.outcome().result();
        ReplayResult.GroundTruth truth = r == null ? null : r.groundTruth();
        Boolean match = switch (t.verdict()) {
            case MATCH -> true;
            case DIFFERS -> false;
            case NOT_COMPARABLE, FAILED -> null;
        };
        return JsonWriter.object(
                "config", t.config(),
                "source", t.configSource(),
                "notes", t.notes(),
                "ground_truth", JsonWriter.object(
                        "verdict", t.word(),
                        "match", match,
                        "first_difference", t.verdict() == TrustLine.Verdict.MATCH ? null : t.firstDifference(),
                        "trace_device_mallocs", truth == null ? null : truth.deviceMallocs(),
                        "trace_device_frees", truth == null ? null : truth.deviceFrees(),
                        "trace_peak_reserved_bytes", truth == null ? null : truth.peakReservedBytes(),
                        "replay_device_mallocs", r == null ? null : r.deviceMallocs(),
                        "replay_device_frees", r == null ? null : r.deviceFrees(),
                        "replay_peak_reserved_bytes", r == null ? null : r.peakReservedBytes()));
    }

    /** The post-mortem of a trace with {@code oom} entries; null for one without. */
    private static Map<String, Object> oom(OomPostMortem post) {
        if (post == null) {
            return null;
        }
        List<Object> listed = new ArrayList<>();
        for (RecordedOom o : post.ooms()) {
            listed.add(JsonWriter.object(
                    "event", o.event(),
                    "request_bytes", o.requestBytes() > 0 ? o.requestBytes() : null,
                    "reserved_bytes", o.reservedBytes(),
                    "live_requested_bytes", o.liveRequestedBytes(),
                    "device_free_bytes", o.deviceFreeBytes() < 0 ? null : o.deviceFreeBytes(),
                    "capacity_bytes", o.capacityBytes() < 0 ? null : o.capacityBytes()));
        }
        OomPostMortem.Reproduction r = post.reproduction();
        return JsonWriter.object(
                "entries", post.entries(),
                "listed", listed,
                "card", card(post.card()),
                "reproduction", r == null ? null : JsonWriter.object(
                        "reproduced", r.reproduced(),
                        "first_oom", ReplayJson.oomMap(r.replayed()),
                        "sentence", r.sentence()),
                "verdict", post.verdict());
    }

    /** The bounds ladder; null for a device with only its end state. */
    private static Map<String, Object> bounds(BoundsLadder ladder) {
        if (ladder == null) {
            return null;
        }
        LowerBound b = ladder.bound();
        // Sizes that add up beyond a long give no figure: null, with "saturated" true.
        boolean saturated = ladder.saturated();
        OfflinePlan plan = ladder.plan();
        IntervalCounts c = ladder.counts();
        double closed = ladder.gapClosed();
        List<Object> rungs = new ArrayList<>();
        for (BoundsLadder.Rung r : ladder.rungs()) {
            rungs.add(JsonWriter.object(
                    "rung", r.key(),
                    "label", r.label(),
                    "bytes", r.bytes() < 0 ? null : r.bytes()));
        }
        return JsonWriter.object(
                "requested_peak_bytes", saturated ? null : b.requestedPeakBytes(),
                // Events numbered from 1, as everywhere in the reports (the bounds package numbers rows from 0).
                "requested_peak_event", b.requestedPeakEvent() < 0 ? null : b.requestedPeakEvent() + 1,
                "rounded_peak_bytes", saturated ? null : b.roundedPeakBytes(),
                "rounded_peak_event", b.roundedPeakEvent() < 0 ? null : b.roundedPeakEvent() + 1,
                "rounding_allocator", ladder.roundingAllocator(),
                "plan_bytes", saturated ? null : plan.bytes(),
                "plan_order", plan.bestOrder() == PlanOrder.BY_SIZE ? "by_size" : "by_lifetime",
                "plan_by_size_bytes", saturated ? null : plan.bySizeBytes(),
                "plan_by_lifetime_bytes", saturated ? null : plan.byLifetimeBytes(),
                "plan_approximations", plan.approximations(),
                "refused_by_rounding", b.refusedByRounding(),
                "saturated", saturated,
                "intervals", JsonWriter.object(
                        "allocations", c.allocations(),
                        "warm_start_blocks", c.warmStartBlocks(),
                        "oom_instants", c.oomInstants(),
                        "ooms_without_request", c.oomsWithoutRequest(),
                        "unknown_frees", c.unknownFrees(),
                        "reallocated_live_keys", c.reallocatedLiveKeys(),
                        "never_freed", c.neverFreed(),
                        "negative_sizes", c.negativeSizes()),
                "best", ladder.best() == null ? null : ladder.best().config(),
                "best_min_capacity_bytes", ladder.best() == null ? null : ladder.best().minCapacityBytes(),
                "recorded", ladder.recorded() == null ? null : ladder.recorded().config(),
                "recorded_min_capacity_bytes", ladder.recorded() == null || !ladder.recorded().fits() ? null
                        : ladder.recorded().minCapacityBytes(),
                "baseline_is_recorded", ladder.recordedSetting(),
                "gap_closed", Double.isNaN(closed) ? null : closed,
                "left_bytes", ladder.leftBytes() < 0 ? null : ladder.leftBytes(),
                "rungs", rungs,
                "reading", ladder.reading());
    }

    private static Map<String, Object> setting(SettingResult s, Integer rank, OomPostMortem post) {
        ReplayResult r = s.result();
        CapacityCheck c = s.atCapacity();
        ReplayResult.Peak peak = r == null ? null : r.peak();
        Map<String, Object> m = JsonWriter.object(
                "config", s.config(),
                "origin", s.entry().origin(),
                "recorded", s.recorded(),
                "rank", rank,
                "error", s.error(),
                "peak_reserved_bytes", r == null ? null : r.peakReservedBytes(),
                "peak_allocated_bytes", r == null ? null : r.peakAllocatedBytes(),
                "peak_requested_bytes", r == null ? null : r.peakRequestedBytes(),
                "min_capacity_bytes", s.fits() ? s.minCapacityBytes() : null,
                "retries_at_min_capacity", s.fits() ? s.retriesAtMinCapacity() : null,
                "device_mallocs", r == null ? null : r.deviceMallocs(),
                "device_frees", r == null ? null : r.deviceFrees(),
                "alloc_retries", r == null ? null : r.allocRetries(),
                "ooms_at_capacity", c == null ? null : c.ooms(),
                "ooms_unlimited", r == null ? null : r.ooms(),
                "fragmentation", r == null ? null : r.fragmentation(),
                "requested_fragmentation", r == null ? null : r.requestedFragmentation(),
                "peak_event", peak == null ? null : peak.event(),
                "waste_at_peak", ReplayJson.wasteMap(peak),
                "end_reserved_bytes", r == null ? null : r.endReservedBytes(),
                "search_runs", s.searchRuns());
        if (c != null) {
            ReplayResult at = c.result();
            Map<String, Object> card = JsonWriter.object(
                    "capacity_bytes", c.capacityBytes(),
                    "runs", c.runs(),
                    "ooms", c.ooms(),
                    "alloc_retries", c.flushes(),
                    "peak_reserved_bytes", c.peakReserved(),
                    "peak_allocated_bytes", at.peakAllocatedBytes(),
                    "device_mallocs", at.deviceMallocs(),
                    "device_frees", at.deviceFrees(),
                    "end_reserved_bytes", at.endReservedBytes(),
                    "waste_at_peak", ReplayJson.wasteMap(at.peak()),
                    "first_oom", ReplayJson.oomMap(c.firstOom()));
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
        return rec == null ? null : JsonWriter.object(
                "config", rec.setting().config(),
                "env", rec.env(),
                "saving_bytes", rec.savingBytes(),
                "saving_fraction", rec.savingFraction(),
                "saving_device_calls", rec.savingDeviceCalls(),
                "saving_device_calls_fraction", rec.savingDeviceCallsFraction(),
                "already_best", rec.alreadyBest(),
                "why", rec.why().jsonName(),
                "reason", rec.reason(),
                "runner_up", rec.runnerUp() == null ? null : rec.runnerUp().config(),
                "costs", rec.costs(),
                "caveats", rec.caveats());
    }

    private static Map<String, Object> endState(Advice advice) {
        if (advice.hasHistory() || advice.endState() == null) {
            return null;
        }
        ReplayResult r = advice.endState().result();
        return JsonWriter.object(
                "reserved_bytes", r.peakReservedBytes(),
                "allocated_bytes", r.peakAllocatedBytes(),
                "requested_bytes", r.peakRequestedBytes(),
                "segments", r.peakSnapshot() == null ? null : r.peakSnapshot().segments().size(),
                "waste", ReplayJson.wasteMap(r.peak()));
    }
}
