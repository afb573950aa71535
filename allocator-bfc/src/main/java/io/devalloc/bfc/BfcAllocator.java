package io.devalloc.bfc;

import io.devalloc.api.DeviceAllocator;
import io.devalloc.api.device.DeviceStream;
import java.util.List;

/**
 * TensorFlow's BFC allocator: a {@link DeviceAllocator} with BFC's own figures, dump and controls. Create one with
 * {@link BfcAllocatorProvider} (or as allocator {@code bfc} through {@code DeviceAllocators}, Guice or the
 * launcher). Thread-safe: one lock guards the arena, as upstream.
 */
public interface BfcAllocator extends DeviceAllocator {

    /**
     * Allocates with an alignment above the arena's 256 B (TensorFlow's current behaviour: a free chunk is used
     * from its first suitably aligned 256 B boundary, and the bytes before it stay a free chunk).
     *
     * @param alignment a power of two; values up to 256 change nothing
     */
    long malloc(long bytes, long alignment, DeviceStream stream);

    /**
     * One attempt with no waiting and no exception: returns 0 when it cannot be served (TensorFlow's
     * {@code retry_on_failure=false} for scratch memory that the caller can do without). Also 0 for 0 bytes.
     */
    long tryMalloc(long bytes, long alignment, DeviceStream stream);

    /** BFC's figures. */
    BfcStats bfcStats();

    /**
     * TensorFlow's {@code ClearStats}: the allocation count and the largest allocation go to 0 and the peak in use
     * to the bytes in use; pool peaks stay. ({@link #resetPeakStats()} resets every peak instead.)
     */
    void clearStats();

    /** The bytes asked for the allocation at {@code address} (throws for an address that is not live). */
    long requestedSize(long address);

    /** The chunk size of the allocation at {@code address} (throws for an address that is not live). */
    long allocatedSize(long address);

    /** TensorFlow's {@code RecordMemoryMap}: stats, bin summaries and every chunk. */
    BfcMemoryDump memoryDump();

    /**
     * TensorFlow's {@code DumpMemoryLog}, as lines: bin summaries, the free chunks of the bin that would serve
     * {@code forRequest} bytes, every region's chunks, in-use chunks by size, and stats.
     */
    List<String> memoryLog(long forRequest);

    /** TensorFlow's {@code RenderOccupancy}: 100 characters, {@code *} requested, {@code x} slack, {@code _} free. */
    String renderOccupancy();

    /**
     * Frees wholly unused regions (TensorFlow's {@code DeallocateFreeRegions(0)}), whether or not garbage collection
     * is on. Returns whether any region was freed. {@link #releaseCachedMemory()} does the same.
     */
    boolean deallocateFreeRegions();

    /** The size the next region extension aims for (TensorFlow's {@code curr_region_allocation_bytes_}). */
    long currentRegionAllocationBytes();

    /** Number of regions. */
    int regionCount();

    /**
     * Timestamped mode: checks the events recorded at frees and advances the safe frontier to the newest free
     * whose streams have finished their earlier work; such chunks become reusable by every stream and merge with
     * their neighbours. Allocations do this themselves; call it to merge eagerly. Returns the frontier.
     */
    long advanceSafeFrontier();

    /** The options in force. */
    BfcOptions options();
}
