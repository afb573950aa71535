package io.devalloc.caching;

import io.devalloc.api.device.DeviceEvent;
import io.devalloc.api.device.DeviceMemory;
import io.devalloc.api.device.DeviceStream;
import io.devalloc.api.device.VirtualMemory;
import io.devalloc.api.error.DeviceException;
import java.util.Arrays;

/**
 * One reserved address range of a (stream, pool) whose pages are mapped on demand: PyTorch's
 * {@code struct ExpandableSegment}. It knows its pages and makes the device calls ({@code map}, {@code unmap},
 * unmapping everything at close); the arena keeps the blocks inside it, the pools and every count (PyTorch's
 * {@code map_block} and {@code unmap_block} do the same around {@code ExpandableSegment::map} and {@code unmap}).
 *
 * <p>The pages are whole pieces of {@link #pageSize} bytes (2 MiB in the small pool, {@code large_segment_size} in
 * the large one): PyTorch creates one {@code cuMemCreate} handle per page and maps a run of them in one go; on CUDA
 * the port does exactly that, so any whole-page part can be unmapped later, which is all this class ever unmaps.
 *
 * <p>Not thread-safe: the arena's lock guards it.
 */
final class ExpandableSegment {

    /** The id that the segment's blocks carry in {@link BlockTable#expandable}. */
    final int id;
    final long stream;
    final boolean small;
    /** The first address of the reserved range. */
    final long base;
    final long pageSize;
    /** The bytes of the range that hold pages: a whole number of pages (the reservation may be a little larger). */
    final long size;
    private final DeviceMemory device;
    private final boolean[] pages;

    ExpandableSegment(int id, DeviceMemory device, long stream, boolean small, long base, long pageSize, long size) {
        this.id = id;
        this.device = device;
        this.stream = stream;
        this.small = small;
        this.base = base;
        this.pageSize = pageSize;
        this.size = size;
        this.pages = new boolean[(int) (size / pageSize)];
    }

    /** Whether {@code address} lies in the pages of this segment. */
    boolean holds(long address) {
        return address - base >= 0 && address - base < size;
    }

    /**
     * PyTorch's {@code ExpandableSegment::map}: maps the whole pages covering [ptr, ptr + bytes) in one device call,
     * in pieces of one page.
     *
     * @return the mapped size, 0 when there is nothing to map or the device is out of memory; the device was called
     *         exactly when the result is not 0
     */
    long map(long ptr, long bytes) {
        int begin = (int) ((ptr - base) / pageSize);
        int end = (int) ((ptr + bytes - base + pageSize - 1) / pageSize);
        if (begin == end) {
            return 0;
        }
        VirtualMemory vm = device.virtualMemory().orElseThrow();
        if (!vm.map(base + begin * pageSize, (end - begin) * pageSize, pageSize)) {
            return 0;
        }
        Arrays.fill(pages, begin, end, true);
        return (end - begin) * pageSize;
    }

    /** The whole pages inside [ptr, ptr + bytes), as {start, size} (size 0 when there are none). */
    long[] pagesInside(long ptr, long bytes) {
        long begin = (ptr - base + pageSize - 1) / pageSize;
        long end = (ptr + bytes - base) / pageSize;
        if (begin >= end) {
            return new long[] {ptr, 0};
        }
        return new long[] {base + begin * pageSize, (end - begin) * pageSize};
    }

    /**
     * The first half of PyTorch's {@code ExpandableSegment::unmap}: waits for the segment's stream, since queued
     * work may still use the pages. When the device no longer has the stream (destroyed since the segment was
     * made), it waits for the whole device instead, as upstream does for a segment without a stream
     * ({@code cudaDeviceSynchronize}): work the stream queued before its destruction still finishes. A failure
     * changes nothing, and the event made for the wait is destroyed whatever happens.
     */
    void synchronizeStream() {
        DeviceStream s = new DeviceStream(stream);
        if (!device.hasStream(s)) {
            device.synchronize();
            return;
        }
        DeviceEvent e = device.createEvent();
        RuntimeException failure = null;
        try {
            device.recordEvent(e, s);
            device.synchronizeEvent(e);
        } catch (RuntimeException ex) {
            failure = ex;
        }
        try {
            device.destroyEvent(e);
        } catch (RuntimeException ex) {
            if (failure == null) {
                failure = ex;
            } else {
                failure.addSuppressed(ex);
            }
        }
        if (failure != null) {
            throw failure;
        }
    }

    /**
     * The second half of PyTorch's {@code ExpandableSegment::unmap}: unmaps the pages {@link #pagesInside} found, in
     * one device call. A failure other than refused arguments ({@link IllegalArgumentException}, which changes
     * nothing) still leaves the pages unmapped here, as the port says they are afterwards (their memory may be lost;
     * a {@link DeviceException} from a conforming device, or whatever a failing device throws), and is rethrown.
     */
    void unmap(long start, long bytes) {
        int begin = (int) ((start - base) / pageSize);
        int end = (int) ((start + bytes - base) / pageSize);
        try {
            device.virtualMemory().orElseThrow().unmap(start, bytes);
        } catch (IllegalArgumentException refused) {
            throw refused;
        } catch (RuntimeException failed) {
            Arrays.fill(pages, begin, end, false);
            throw failed;
        }
        Arrays.fill(pages, begin, end, false);
    }

    /**
     * Unmaps the first run of mapped pages at or after page {@code from} in one device call (PyTorch's destructor
     * unmaps each run of handles in turn; the arena calls this until it returns -1, at close).
     *
     * @return the page after the run, where the next call starts, or -1 when no page from {@code from} on is mapped
     * @throws RuntimeException what the unmap threw; the run counts as unmapped all the same (at close nothing is
     *                          tried twice), so that calling again from {@code from} goes on with the next run
     */
    int unmapNextRun(VirtualMemory vm, int from) {
        int i = from;
        while (i < pages.length && !pages[i]) {
            i++;
        }
        if (i == pages.length) {
            return -1;
        }
        int j = i;
        while (j < pages.length && pages[j]) {
            j++;
        }
        try {
            vm.unmap(base + i * pageSize, (j - i) * pageSize);
        } finally {
            Arrays.fill(pages, i, j, false);
        }
        return j;
    }
}
