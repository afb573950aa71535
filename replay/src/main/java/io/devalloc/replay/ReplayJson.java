package io.devalloc.replay;

import io.devalloc.trace.text.JsonWriter;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * Replay outcomes as JSON, the form {@code devalloc replay --json} prints (one object) and {@code devalloc compare
 * --json} prints (an array of them). Keys, in this order:
 *
 * <p>{@code trace}, {@code format}, {@code allocator}, {@code device}, {@code device_name}, {@code conf} (the
 * configuration given, with what came from environment variables such as {@code PYTORCH_CUDA_ALLOC_CONF} marked
 * {@code (from VARIABLE)}: {@link ReplayResult#conf()}),
 * {@code warm_start} ({@code none}, {@code restored}, {@code malloc}), {@code events}, {@code allocs}, {@code frees},
 * {@code unknown_frees}, {@code device_mallocs}, {@code device_frees}, {@code peak_reserved_bytes},
 * {@code peak_allocated_bytes}, {@code peak_requested_bytes}, {@code end_reserved_bytes}, {@code ooms},
 * {@code alloc_retries}, {@code fragmentation} (1 − allocated / reserved at the reserved peak),
 * {@code requested_fragmentation} (1 − requested / reserved there), {@code events_per_second},
 * {@code empty_cache_calls}, {@code streams}, {@code timeline_points}, then {@code peak} (the moment of the reserved
 * peak, {@link ReplayResult.Peak}): {@code event} (after which event, 0 before the first), {@code reserved_bytes},
 * {@code allocated_bytes}, {@code requested_bytes} and {@code exact} (false when the allocator's bytes were sampled);
 * {@code waste_at_peak} (from the peak snapshot, {@link WasteAtPeak}; null without one): {@code rounding},
 * {@code unsplit_remainder}, {@code free_in_used_segments}, {@code free_segments}, {@code unmapped_page_tails} and
 * {@code total} (reserved &minus; requested bytes at the peak); {@code first_oom} (the first allocation that failed
 * with out of memory, {@link ReplayResult.OomPoint}; null when none did): {@code event}, {@code request_bytes},
 * {@code reserved_bytes}, {@code allocated_bytes}; {@code stopped_at_oom} (the replay stopped there); then for
 * PyTorch traces {@code ground_truth}: {@code device_mallocs}, {@code device_frees}, {@code peak_reserved_bytes},
 * {@code comparable} (whether this allocator can be compared with what the trace recorded, see
 * {@link GroundTruthComparability}), {@code reason} (why not, null when comparable), {@code match} and
 * {@code first_difference} (null on a match; both null when not comparable, where a difference would say nothing);
 * and last {@code notes}, a list of sentences.
 * {@code events_per_second} is the replay's wall-clock speed on this machine, JVM warm-up included, not a figure of
 * the allocator.
 */
public final class ReplayJson {

    private ReplayJson() {
    }

    /** One outcome as an ordered map of JSON values. */
    public static Map<String, Object> toMap(ReplayOutcome outcome) {
        ReplayResult r = outcome.result();
        ReplayResult.Peak peak = r.peak();
        Map<String, Object> m = JsonWriter.object(
                "trace", r.trace(),
                "format", outcome.format().name().toLowerCase(Locale.ROOT),
                "allocator", r.allocator(),
                "device", r.device(),
                "device_name", outcome.deviceName(),
                "conf", r.conf(),
                "warm_start", outcome.warmStart().name().toLowerCase(Locale.ROOT),
                "events", r.events(),
                "allocs", r.allocs(),
                "frees", r.frees(),
                "unknown_frees", outcome.unknownFrees(),
                "device_mallocs", r.deviceMallocs(),
                "device_frees", r.deviceFrees(),
                "peak_reserved_bytes", r.peakReservedBytes(),
                "peak_allocated_bytes", r.peakAllocatedBytes(),
                "peak_requested_bytes", r.peakRequestedBytes(),
                "end_reserved_bytes", r.endReservedBytes(),
                "ooms", r.ooms(),
                "alloc_retries", r.allocRetries(),
                "fragmentation", r.fragmentation(),
                "requested_fragmentation", r.requestedFragmentation(),
                "events_per_second", Math.rint(r.eventsPerSecond()),
                "empty_cache_calls", outcome.emptyCacheCalls(),
                "streams", (long) outcome.streams(),
                "timeline_points", (long) r.timeline().size(),
                "peak", peak == null ? null : JsonWriter.object(
                        "event", peak.event(),
                        "reserved_bytes", peak.reservedBytes(),
                        "allocated_bytes", peak.allocatedBytes(),
                        "requested_bytes", peak.requestedBytes(),
                        "exact", peak.exact()),
                "waste_at_peak", wasteMap(peak),
                "first_oom", oomMap(r.firstOom()),
                "stopped_at_oom", r.stoppedAtOom());
        ReplayResult.GroundTruth g = r.groundTruth();
        if (g != null) {
            boolean comparable = GroundTruthComparability.comparable(r.allocator());
            m.put("ground_truth", JsonWriter.object(
                    "device_mallocs", g.deviceMallocs(),
                    "device_frees", g.deviceFrees(),
                    "peak_reserved_bytes", g.peakReservedBytes(),
                    "comparable", comparable,
                    "reason", comparable ? null : GroundTruthComparability.whyNot(r.allocator()),
                    "match", comparable ? g.match() : null,
                    "first_difference", comparable ? g.firstDifference() : null));
        }
        m.put("notes", outcome.notes());
        return m;
    }

    /**
     * The waste at the peak by cause, in the JSON's key order: {@code rounding}, {@code unsplit_remainder},
     * {@code free_in_used_segments}, {@code free_segments}, {@code unmapped_page_tails}, {@code total}.
     */
    public static Map<String, Object> wasteMap(WasteAtPeak waste) {
        return JsonWriter.object(
                "rounding", waste.rounding(),
                "unsplit_remainder", waste.unsplitRemainder(),
                "free_in_used_segments", waste.freeInUsedSegments(),
                "free_segments", waste.freeSegments(),
                "unmapped_page_tails", waste.unmappedPageTails(),
                "total", waste.total());
    }

    /** {@link #wasteMap(WasteAtPeak)} of the peak's waste; null without a peak or without its waste. */
    public static Map<String, Object> wasteMap(ReplayResult.Peak peak) {
        return peak == null || peak.waste() == null ? null : wasteMap(peak.waste());
    }

    /**
     * The first out-of-memory error, in the JSON's key order: {@code event}, {@code request_bytes},
     * {@code reserved_bytes}, {@code allocated_bytes}; null for none.
     */
    public static Map<String, Object> oomMap(ReplayResult.OomPoint oom) {
        return oom == null ? null : JsonWriter.object(
                "event", oom.event(),
                "request_bytes", oom.requestBytes(),
                "reserved_bytes", oom.reservedBytes(),
                "allocated_bytes", oom.allocatedBytes());
    }

    /** One outcome as one line of JSON (or indented, when {@code pretty}). */
    public static String toJson(ReplayOutcome outcome, boolean pretty) {
        return JsonWriter.toString(toMap(outcome), pretty);
    }

    /** Outcomes as a JSON array. */
    public static String toJson(List<ReplayOutcome> outcomes, boolean pretty) {
        List<Object> list = new ArrayList<>(outcomes.size());
        for (ReplayOutcome o : outcomes) {
            list.add(toMap(o));
        }
        return JsonWriter.toString(list, pretty);
    }
}
