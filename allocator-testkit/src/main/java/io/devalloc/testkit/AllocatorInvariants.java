package io.devalloc.testkit;

import io.devalloc.api.DeviceAllocator;
import io.devalloc.api.snapshot.BlockSnapshot;
import io.devalloc.api.snapshot.BlockState;
import io.devalloc.api.snapshot.MemorySnapshot;
import io.devalloc.api.snapshot.SegmentSnapshot;
import io.devalloc.api.spi.LiveBytes;
import io.devalloc.api.spi.SizeRounding;
import io.devalloc.api.stats.AllocatorStats;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;

/**
 * Checks that hold for every allocator at every quiet moment (Caffeine's "validation after every test"):
 * stats agree with each other and with what the test knows is live, and the snapshot tiles its segments and
 * shows exactly the live allocations. An allocator that offers {@link LiveBytes} reads the same figures as its stats,
 * and one that offers {@link SizeRounding} rounds each live request to at most its block's size.
 */
public final class AllocatorInvariants {

    private AllocatorInvariants() {
    }

    /**
     * Checks the allocator's stats and snapshot against each other and against {@code live}.
     *
     * @param allocator the allocator, not being used by other threads during the check
     * @param live      what the caller knows is live
     * @throws AssertionError naming the first broken invariant
     */
    public static void check(DeviceAllocator allocator, LiveSet live) {
        AllocatorStats s = allocator.stats();
        checkStats(s);
        if (allocator.device().virtualMemory().isEmpty()) {
            // Only a virtual-memory range mapped in one call can be given back in several calls.
            expect(s.deviceFrees() <= s.deviceMallocs(), "more device frees than mallocs: " + s);
        }
        expect(s.activeAllocations() == live.size(), "activeAllocations " + s.activeAllocations() + " but "
                + live.size() + " are live");
        expect(s.requestedBytes() == live.requestedBytes(), "requestedBytes " + s.requestedBytes() + " but "
                + live.requestedBytes() + " are live");
        allocator.unwrap(LiveBytes.class).ifPresent(liveBytes -> {
            expect(liveBytes.reservedBytes() == s.reservedBytes(), "LiveBytes reads " + liveBytes.reservedBytes()
                    + " reserved bytes but stats say " + s.reservedBytes());
            expect(liveBytes.allocatedBytes() == s.allocatedBytes(), "LiveBytes reads " + liveBytes.allocatedBytes()
                    + " allocated bytes but stats say " + s.allocatedBytes());
            expect(liveBytes.requestedBytes() == s.requestedBytes(), "LiveBytes reads " + liveBytes.requestedBytes()
                    + " requested bytes but stats say " + s.requestedBytes());
        });
        SizeRounding rounding = allocator.unwrap(SizeRounding.class).orElse(null);
        MemorySnapshot snap = allocator.snapshot();
        try {
            snap.checkInvariants();
        } catch (IllegalStateException e) {
            throw new AssertionError("snapshot invariant broken: " + e.getMessage(), e);
        }
        Set<Long> allocatedAddresses = new HashSet<>();
        long allocatedBytes = 0;
        long largestFree = 0;
        for (SegmentSnapshot seg : snap.segments()) {
            for (BlockSnapshot b : seg.blocks()) {
                if (b.state() == BlockState.ALLOCATED) {
                    allocatedAddresses.add(b.address());
                    allocatedBytes += b.size();
                    Long requested = live.asMap().get(b.address());
                    expect(requested != null, "snapshot shows an allocated block at 0x" + Long.toHexString(b.address())
                            + " that is not live");
                    expect(b.requestedSize() == requested, "block 0x" + Long.toHexString(b.address())
                            + " requested " + b.requestedSize() + " but " + requested + " was asked");
                    if (rounding != null) {
                        long rounded = rounding.roundedSize(b.requestedSize());
                        expect(rounded >= b.requestedSize() && rounded <= b.size(), "block 0x"
                                + Long.toHexString(b.address()) + " of " + b.size() + " B for a request of "
                                + b.requestedSize() + " B, which SizeRounding rounds to " + rounded + " B");
                    }
                } else if (b.state() == BlockState.FREE) {
                    largestFree = Math.max(largestFree, b.size());
                }
            }
        }
        for (Map.Entry<Long, Long> e : live.asMap().entrySet()) {
            expect(allocatedAddresses.contains(e.getKey()), "live allocation 0x" + Long.toHexString(e.getKey())
                    + " is missing from the snapshot");
        }
        expect(allocatedBytes == s.allocatedBytes(), "snapshot allocated bytes " + allocatedBytes
                + " but stats say " + s.allocatedBytes());
        long mapped = snap.totalSegmentBytes() - snap.bytesIn(BlockState.UNMAPPED);
        expect(mapped == s.reservedBytes(), "snapshot segments hold " + mapped + " mapped bytes but stats say "
                + s.reservedBytes() + " are reserved");
        expect(largestFree == s.largestFreeBlock(), "snapshot's largest free block is " + largestFree
                + " but stats say " + s.largestFreeBlock());
    }

    /** Checks relations between stats figures alone. */
    public static void checkStats(AllocatorStats s) {
        expect(s.activeAllocations() >= 0, "negative activeAllocations: " + s);
        expect(s.allocatedBytes() >= s.requestedBytes(), "allocated < requested: " + s);
        expect(s.reservedBytes() >= s.allocatedBytes(), "reserved < allocated: " + s);
        expect(s.peakAllocatedBytes() >= s.allocatedBytes(), "peak allocated < allocated: " + s);
        expect(s.peakReservedBytes() >= s.reservedBytes(), "peak reserved < reserved: " + s);
        expect(s.peakRequestedBytes() >= s.requestedBytes(), "peak requested < requested: " + s);
        expect(s.peakActiveAllocations() >= s.activeAllocations(), "peak active < active: " + s);
        expect(s.largestFreeBlock() <= s.cachedBytes() || s.cachedBytes() < 0, "largest free block > cached: " + s);
        // Not deviceFrees <= deviceMallocs: one virtual-memory map may be given back in several unmaps.
        expect(s.deviceMallocs() > 0 || s.reservedBytes() == 0, "memory reserved without a device call: " + s);
        expect(s.requestedBytes() >= 0 && s.allocatedBytes() >= 0 && s.reservedBytes() >= 0, "negative bytes: " + s);
    }

    private static void expect(boolean condition, String message) {
        if (!condition) {
            throw new AssertionError(message);
        }
    }
}
