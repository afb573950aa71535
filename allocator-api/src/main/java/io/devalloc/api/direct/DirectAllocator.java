package io.devalloc.api.direct;

import io.devalloc.api.collect.LongLongHashMap;
import io.devalloc.api.device.DeviceMemory;
import io.devalloc.api.device.DeviceStream;
import io.devalloc.api.device.MemoryInfo;
import io.devalloc.api.error.OutOfMemoryException;
import io.devalloc.api.internal.AlignedSizes;
import io.devalloc.api.snapshot.BlockSnapshot;
import io.devalloc.api.snapshot.BlockState;
import io.devalloc.api.snapshot.MemorySnapshot;
import io.devalloc.api.snapshot.SegmentSnapshot;
import io.devalloc.api.spi.AbstractDeviceAllocator;
import io.devalloc.api.spi.LiveBytes;
import io.devalloc.api.spi.SizeRounding;
import io.devalloc.api.stats.AllocatorStats;
import io.devalloc.api.units.ByteSize;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * No cache: each allocation is its own device malloc. One lock guards the address table and the counters; the
 * device call runs under it too, which is honest for a baseline (cudaMalloc and cudaFree serialise on the device
 * anyway).
 *
 * <p>What every allocator repeats (the argument checks, size 0, the check that it is open, and a close that
 * frees every live address past device failures, then closes an owned device, throwing the first failure) comes
 * from {@link AbstractDeviceAllocator}; this class keeps the address table and the figures.
 *
 * <p>Thread-safe: every method takes the one lock, {@link AbstractDeviceAllocator#lock}.
 *
 * <p>Sizes: "allocated" and "reserved" count the request rounded up to the device's alignment, which is what
 * the device takes; "requested" counts what callers asked. {@code recordStream} only checks the address: a device
 * free synchronises the device, so no stream can still be using the memory afterwards.
 *
 * <p>Capabilities for replays: {@link LiveBytes} (plain reads of the counters, without the lock: exact on the thread
 * that made the last call, as the interface says) and {@link SizeRounding} (the device's alignment).
 */
final class DirectAllocator extends AbstractDeviceAllocator implements LiveBytes, SizeRounding {

    private static final long ABSENT = -1;

    private final long limit;
    private final long alignment;
    /** Live address → requested bytes. */
    private final LongLongHashMap live = new LongLongHashMap(1024);
    /** Live address → stream handle, for snapshots. */
    private final LongLongHashMap liveStream = new LongLongHashMap(1024);
    /** Live address → allocation id. */
    private final LongLongHashMap liveId = new LongLongHashMap(1024);
    private long nextAllocationId = 1;

    private long allocationCount;
    private long freeCount;
    private long peakActive;
    private long allocatedBytes;
    private long peakAllocated;
    private long requestedBytes;
    private long peakRequested;
    private long peakReserved;
    private long largestAllocation;
    private long deviceMallocs;
    private long deviceFrees;
    private long outOfMemoryErrors;

    DirectAllocator(DeviceMemory device, boolean ownsDevice, long limit) {
        super(device, ownsDevice);
        this.limit = limit;
        this.alignment = device.alignment();
    }

    @Override
    public String name() {
        return DirectAllocatorProvider.NAME;
    }

    @Override
    public long malloc(long bytes, DeviceStream stream) {
        if (isNullRequest(bytes, stream)) {
            return DeviceMemory.NULL;
        }
        lock.lock();
        try {
            ensureOpen();
            long rounded = ByteSize.roundUp(bytes, alignment);
            long total = device().descriptor().totalBytes();
            if (rounded < 0 || rounded > total) {
                throw outOfMemory(OutOfMemoryException.Reason.REQUEST_TOO_LARGE, bytes);
            }
            if (rounded > limit - allocatedBytes) {
                throw outOfMemory(OutOfMemoryException.Reason.LIMIT_REACHED, bytes);
            }
            long address = device().malloc(bytes);
            if (address == DeviceMemory.NULL) {
                throw outOfMemory(OutOfMemoryException.Reason.DEVICE_EXHAUSTED, bytes);
            }
            live.put(address, bytes, ABSENT);
            liveStream.put(address, stream.handle(), ABSENT);
            liveId.put(address, nextAllocationId++, ABSENT);
            deviceMallocs++;
            allocationCount++;
            allocatedBytes += rounded;
            requestedBytes += bytes;
            peakAllocated = Math.max(peakAllocated, allocatedBytes);
            peakReserved = Math.max(peakReserved, allocatedBytes);
            peakRequested = Math.max(peakRequested, requestedBytes);
            peakActive = Math.max(peakActive, live.size());
            largestAllocation = Math.max(largestAllocation, bytes);
            return address;
        } finally {
            lock.unlock();
        }
    }

    private OutOfMemoryException outOfMemory(OutOfMemoryException.Reason reason, long bytes) {
        outOfMemoryErrors++;
        MemoryInfo info = device().memoryInfo();
        return new OutOfMemoryException(reason, device().descriptor().id(), bytes, info.freeBytes(), info.totalBytes(),
                allocatedBytes, allocatedBytes, limit, null);
    }

    /** The allocation's id is its handle: the ids are unique while the allocator lives. */
    @Override
    protected long liveAllocation(long address) {
        return liveId.get(address, ABSENT);
    }

    @Override
    protected long allocationIdOf(long allocation) {
        return allocation;
    }

    /** Frees a live address; the device call comes first so that a device error leaves everything as it was. */
    @Override
    protected void releaseAllocation(long address, long allocation) {
        device().free(address);
        long requested = live.remove(address, ABSENT);
        liveStream.remove(address, ABSENT);
        liveId.remove(address, ABSENT);
        deviceFrees++;
        freeCount++;
        allocatedBytes -= ByteSize.roundUp(requested, alignment);
        requestedBytes -= requested;
    }

    @Override
    public AllocatorStats stats() {
        return copyLocked(() -> AllocatorStats.builder()
                .allocationCount(allocationCount).freeCount(freeCount)
                .activeAllocations(live.size()).peakActiveAllocations(peakActive)
                .allocatedBytes(allocatedBytes).peakAllocatedBytes(peakAllocated)
                .requestedBytes(requestedBytes).peakRequestedBytes(peakRequested)
                // Every allocation is its own device malloc: reserved is allocated, and nothing is cached.
                .reservedBytes(allocatedBytes).peakReservedBytes(peakReserved)
                .largestAllocation(largestAllocation).largestFreeBlock(0)
                .deviceMallocs(deviceMallocs).deviceFrees(deviceFrees)
                .allocationRetries(0).outOfMemoryErrors(outOfMemoryErrors).limitBytes(limit)
                .build());
    }

    /** Reserved bytes are the allocated ones: every allocation is its own device malloc. */
    @Override
    public long reservedBytes() {
        return allocatedBytes;
    }

    @Override
    public long allocatedBytes() {
        return allocatedBytes;
    }

    @Override
    public long requestedBytes() {
        return requestedBytes;
    }

    /** The request rounded up to the device's alignment, which is what the device takes. */
    @Override
    public long roundedSize(long requested) {
        return AlignedSizes.roundedSize(requested, alignment);
    }

    @Override
    public void resetPeakStats() {
        lock.lock();
        try {
            peakActive = live.size();
            peakAllocated = allocatedBytes;
            peakReserved = allocatedBytes;
            peakRequested = requestedBytes;
            largestAllocation = 0;
        } finally {
            lock.unlock();
        }
    }

    @Override
    public void releaseCachedMemory() {
        // Nothing is cached: every free already went back to the device.
        runLocked(this::ensureOpen);
    }

    /**
     * One segment per live allocation. Settings: {@code memory_limit_bytes}, the configured limit
     * ({@code memory_limit_mb} in bytes), or -1 when there is none besides the device.
     */
    @Override
    public MemorySnapshot snapshot() {
        return copyLocked(() -> {
            List<SegmentSnapshot> segments = new ArrayList<>(live.size());
            for (long address : live.sortedKeys()) {
                long requested = live.get(address, ABSENT);
                long size = ByteSize.roundUp(requested, alignment);
                segments.add(new SegmentSnapshot(address, size, liveStream.get(address, 0), "direct",
                        List.of(new BlockSnapshot(address, size, requested, BlockState.ALLOCATED))));
            }
            return new MemorySnapshot(name(), device().descriptor(), segments, stats(),
                    Map.of("memory_limit_bytes", limit == Long.MAX_VALUE ? -1L : limit));
        });
    }

    /**
     * Frees every live address, in address order, even if some device frees fail, so that one error loses no other
     * memory; each counts as a free, and as a device free when the device took it back.
     */
    @Override
    protected void releaseAll(CloseFailures failures) {
        for (long address : live.sortedKeys()) {
            try {
                device().free(address);
                deviceFrees++;
            } catch (RuntimeException e) {
                failures.add(e);
            }
            freeCount++;
        }
        live.clear();
        liveStream.clear();
        liveId.clear();
        allocatedBytes = 0;
        requestedBytes = 0;
    }
}
