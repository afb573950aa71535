package io.devalloc.replay;

import io.devalloc.trace.text.JsonWriter;
import java.util.ArrayList;
import java.util.LinkedHashMap;
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
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("trace", r.trace());
        m.put("format", outcome.format().name().toLowerCase(Locale.ROOT));
        m.put("allocator", r.allocator());
        m.put("device", r.device());
        m.put("device_name", outcome.deviceName());
        m.put("conf", r.conf());
        m.put("warm_start", outcome.warmStart().name().toLowerCase(Locale.ROOT));
        m.put("events", r.events());
        m.put("allocs", r.allocs());
        m.put("frees", r.frees());
        m.put("unknown_frees", outcome.unknownFrees());
        m.put("device_mallocs", r.deviceMallocs());
        m.put("device_frees", r.deviceFrees());
        m.put("peak_reserved_bytes", r.peakReservedBytes());
        m.put("peak_allocated_bytes", r.peakAllocatedBytes());
        m.put("peak_requested_bytes", r.peakRequestedBytes());
        m.put("end_reserved_bytes", r.endReservedBytes());
        m.put("ooms", r.ooms());
        m.put("alloc_retries", r.allocRetries());
        m.put("fragmentation", r.fragmentation());
        m.put("requested_fragmentation", r.requestedFragmentation());
        m.put("events_per_second", Math.rint(r.eventsPerSecond()));
        m.put("empty_cache_calls", outcome.emptyCacheCalls());
        m.put("streams", (long) outcome.streams());
        m.put("timeline_points", (long) r.timeline().size());
        ReplayResult.Peak peak = r.peak();
        if (peak != null) {
            Map<String, Object> p = new LinkedHashMap<>();
            p.put("event", peak.event());
            p.put("reserved_bytes", peak.reservedBytes());
            p.put("allocated_bytes", peak.allocatedBytes());
            p.put("requested_bytes", peak.requestedBytes());
            p.put("exact", peak.exact());
            m.put("peak", p);
        } else {
            m.put("peak", null);
        }
        m.put("waste_at_peak", wasteMap(peak));
        m.put("first_oom", oomMap(r.firstOom()));
        m.put("stopped_at_oom", r.stoppedAtOom());
        ReplayResult.GroundTruth g = r.groundTruth();
        if (g != null) {
            Map<String, Object> gt = new LinkedHashMap<>();
            gt.put("device_mallocs", g.deviceMallocs());
            gt.put("device_frees", g.deviceFrees());
            gt.put("peak_reserved_bytes", g.peakReservedBytes());
            boolean comparable = GroundTruthComparability.comparable(r.allocator());
            gt.put("comparable", comparable);
            gt.put("reason", comparable ? null : GroundTruthComparability.whyNot(r.allocator()));
            gt.put("match", comparable ? g.match() : null);
            gt.put("first_difference", comparable ? g.firstDifference() : null);
            m.put("ground_truth", gt);
        }
        m.put("notes", outcome.notes());
        return m;
    }

    /**
     * The waste at the peak by cause, in the JSON's key order: {@code rounding}, {@code unsplit_remainder},
     * {@code free_in_used_segments}, {@code free_segments}, {@code unmapped_page_tails}, {@code total}.
     */
    public static Map<String, Object> wasteMap(WasteAtPeak waste) {
        Map<String, Object> w = new LinkedHashMap<>();
        w.put("rounding", waste.rounding());
        w.put("unsplit_remainder", waste.unsplitRemainder());
        w.put("free_in_used_segments", waste.freeInUsedSegments());
        w.put("free_segments", waste.freeSegments());
        w.put("unmapped_page_tails", waste.unmappedPageTails());
        w.put("total", waste.total());
        return w;
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
