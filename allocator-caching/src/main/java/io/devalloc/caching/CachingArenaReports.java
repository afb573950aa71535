package io.devalloc.caching;

import io.devalloc.api.device.MemoryInfo;
import io.devalloc.api.error.OutOfMemoryException;
import io.devalloc.caching.CachingAllocator.OomRejectionObserver;
import io.devalloc.caching.DeviceStats.Metric;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.atomic.AtomicLong;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What {@link CachingArena} says when an allocation fails, apart from the port of {@code DeviceCachingAllocator}
 * itself (as {@code BfcArenaDumps} is for BFC): upstream's out-of-memory error with its message and hints, the
 * rejection of {@code throw_on_cudamalloc_oom} with its once-a-minute warning and the dispatch of its observers, and
 * PyTorch's {@code format_size}. Every method runs under the arena's lock, as the arena calls it, except
 * {@link #notifyRejection} (after the lock is released) and {@link #dispatchRejection} (on a thread of its own, as
 * upstream's).
 */
final class CachingArenaReports {

    /** The arena's logger: what is logged here is the allocator's, as upstream logs it. */
    private static final Logger LOG = LoggerFactory.getLogger(CachingArena.class);

    private CachingArenaReports() {
    }

    /**
     * The exception of a malloc refused by {@code throw_on_cudamalloc_oom}: upstream's text, with the caller's
     * request; no {@code oom} arena.trace entry and no {@code num_ooms}, as upstream.
     */
    static OutOfMemoryException rejection(CachingArena arena, long size) {
        MemoryInfo info = arena.device().memoryInfo();
        long allocated = arena.stats.get(Metric.ALLOCATED_BYTES, DeviceStats.ALL, DeviceStats.CURRENT);
        long reserved = arena.stats.get(Metric.RESERVED_BYTES, DeviceStats.ALL, DeviceStats.CURRENT);
        return new OutOfMemoryException(OutOfMemoryException.Reason.LIMIT_REACHED, arena.device().descriptor().id(),
                size, info.freeBytes(), info.totalBytes(), reserved, allocated, arena.limit(),
                "CUDA out of memory. Allocation was preemptively rejected because it would exceed"
                        + " per_process_memory_fraction limit. Requested size: " + formatSize(size));
    }

    /** Upstream runs the rejection observers on a thread of their own, after the lock is released. */
    static void notifyRejection(CachingArena arena, long size, long total) {
        if (arena.oomRejectionObservers.isEmpty()) {
            return;
        }
        List<OomRejectionObserver> observers = List.copyOf(arena.oomRejectionObservers);
        int index = arena.device().descriptor().index();
        Thread.ofVirtual().name("devalloc-oom-rejection")
                .start(() -> dispatchRejection(observers, index, size, total, arena.deviceTotal));
    }

    /**
     * Calls the observers in order, as upstream's dispatch thread does: one try around the loop, so an observer that
     * throws is logged ("Exception in OOM rejection observer: ...") and the ones after it are not called.
     */
    static void dispatchRejection(List<OomRejectionObserver> observers, int device, long size, long totalAllocated,
                                  long deviceTotal) {
        try {
            for (OomRejectionObserver o : observers) {
                o.onRejection(device, size, totalAllocated, deviceTotal);
            }
        } catch (RuntimeException e) {
            LOG.error("Exception in OOM rejection observer: {}", e.getMessage(), e);
        } catch (Throwable t) { // upstream's catch (...): nothing an observer throws may end the dispatch thread unseen
            LOG.error("Unknown exception in OOM rejection observer", t);
        }
    }

    static OutOfMemoryException outOfMemory(CachingArena arena, long size, long rounded, long a, long stream) {
        MemoryInfo info = arena.device().memoryInfo();
        arena.trace.record(TraceAction.OOM, info.freeBytes(), rounded, stream);
        arena.stats.numOoms++;
        long allocated = arena.stats.get(Metric.ALLOCATED_BYTES, DeviceStats.ALL, DeviceStats.CURRENT);
        long reserved = arena.stats.get(Metric.RESERVED_BYTES, DeviceStats.ALL, DeviceStats.CURRENT);
        String message = "CUDA out of memory. Tried to allocate " + formatSize(a) + ". GPU "
                + arena.device().descriptor().index() + " has a total capacity of " + formatSize(info.totalBytes())
                + " of which " + formatSize(info.freeBytes()) + " is free. "
                + (arena.setFraction ? formatSize(arena.allowedMemoryMaximum) + " allowed; " : "")
                + "Of the allocated memory " + formatSize(allocated) + " is allocated by PyTorch, and "
                + formatSize(reserved - allocated) + " is reserved by PyTorch but unallocated."
                + expandableHints(arena, a, stream);
        OutOfMemoryException.Reason reason;
        if (arena.setFraction && arena.totalAllocatedMemory + a > arena.allowedMemoryMaximum) {
            reason = OutOfMemoryException.Reason.LIMIT_REACHED;
        } else if (a > info.totalBytes()) {
            reason = OutOfMemoryException.Reason.REQUEST_TOO_LARGE;
        } else if (reserved - allocated >= a) {
            reason = OutOfMemoryException.Reason.FRAGMENTATION;
        } else {
            reason = OutOfMemoryException.Reason.DEVICE_EXHAUSTED;
        }
        return new OutOfMemoryException(reason, arena.device().descriptor().id(), size, info.freeBytes(),
                info.totalBytes(), reserved, allocated, arena.limit(), message);
    }

    /**
     * The end of upstream's out-of-memory message. Without expandable segments: the advice to turn them on. With
     * them: the advice to raise the reserve when the request is larger than its segment's reserve (one allocation
     * cannot span segments) but would fit the device, otherwise the note that segments may over-reserve address
     * space.
     */
    private static String expandableHints(CachingArena arena, long a, long stream) {
        if (!arena.options.expandableSegments()) {
            return " If reserved but unallocated memory is large try setting PYTORCH_CUDA_ALLOC_CONF="
                    + "expandable_segments:True to avoid fragmentation.  See documentation for Memory Management "
                    + " (https://docs.pytorch.org/docs/stable/notes/cuda.html"
                    + "#optimizing-memory-usage-with-pytorch-cuda-alloc-conf)";
        }
        String reserveHint = "";
        if (a <= arena.deviceTotal) {
            String reserveClass = arena.reserveClasses.getOrDefault(stream, "");
            long reserve = ExpandableSegmentReserve.clamp(
                    arena.options.expandableSegmentsReserve().decision(reserveClass, arena.deviceTotal),
                    arena.deviceTotal + arena.deviceTotal / 8);
            if (reserve < a) {
                reserveHint = " This allocation exceeds the expandable-segment reserve of " + formatSize(reserve)
                        + (reserveClass.isEmpty() ? " for this stream" : " for stream reserve class '" + reserveClass
                        + "'") + ", and a single allocation cannot span expandable segments. Raise"
                        + " PYTORCH_CUDA_ALLOC_CONF expandable_segments_reserve or expandable_segments_reserve_by_class"
                        + " (or unset it) so that a segment is at least " + formatSize(a) + ".";
            }
        }
        if (!reserveHint.isEmpty()) {
            return reserveHint;
        }
        return " expandable_segments is enabled. If instead the process is running out of virtual address space"
                + " (VSZ), expandable segments may be over-reserving VA (each segment reserves ~9/8 of device memory,"
                + " times the number of streams); reduce it via PYTORCH_CUDA_ALLOC_CONF expandable_segments_reserve /"
                + " expandable_segments_reserve_by_class.";
    }

    /** PyTorch's {@code format_size}. */
    static String formatSize(long size) {
        if (size <= 1024) {
            return size + " bytes";
        }
        if (size <= 1048576) {
            return String.format(Locale.ROOT, "%.2f KiB", size / 1024.0);
        }
        if (size <= 1073741824L) {
            return String.format(Locale.ROOT, "%.2f MiB", size / 1048576.0);
        }
        return String.format(Locale.ROOT, "%.2f GiB", size / 1073741824.0);
    }

    /** When a refusal was last logged, for the whole process, as upstream's {@code C10_LOG_EVERY_MS}. */
    private static final AtomicLong LAST_REJECTION_WARNING = new AtomicLong(Long.MIN_VALUE);

    /**
     * Logs the refusal of {@code throw_on_cudamalloc_oom} of a segment of {@code size} bytes, at most once a minute
     * per process, as upstream ({@code C10_LOG_EVERY_MS(WARNING, 60000)}).
     */
    static void warnRejection(CachingArena arena, long size, long maxAllowed) {
        long now = System.nanoTime();
        long last = LAST_REJECTION_WARNING.get();
        if ((last != Long.MIN_VALUE && now - last < 60_000_000_000L)
                || !LAST_REJECTION_WARNING.compareAndSet(last, now)) {
            return;
        }
        LOG.warn("Preemptively rejecting allocation: requested {} but total_allocated_memory ({}) + requested size"
                        + " would exceed memory limit ({} = {}% of {}). Set throw_on_cudamalloc_oom:false to disable.",
                formatSize(size), formatSize(arena.totalAllocatedMemory), formatSize(maxAllowed),
                ostreamDouble(arena.options.perProcessMemoryFraction() * 100), formatSize(arena.deviceTotal));
    }

    /** A double as C++'s {@code ostream <<} prints it by default ({@code %g}, six significant digits): 100, 12.5. */
    static String ostreamDouble(double v) {
        String g = String.format(Locale.ROOT, "%.6g", v);
        int e = g.indexOf('e');
        String mantissa = e < 0 ? g : g.substring(0, e);
        if (mantissa.contains(".")) {
            mantissa = mantissa.replaceAll("0+$", "").replaceAll("\\.$", "");
        }
        return e < 0 ? mantissa : mantissa + g.substring(e);
    }
}
