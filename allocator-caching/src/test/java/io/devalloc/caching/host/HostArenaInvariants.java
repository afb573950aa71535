package io.devalloc.caching.host;

import java.util.List;

/**
 * Test fixture: checks a {@link HostCachingArena}'s bookkeeping against itself, under its lock: every block is in
 * exactly one place (handed out, waiting for its events, or on the free list of its size), and PyTorch's counters
 * and the common stats agree with the blocks. Kept out of the allocator, which needs none of it to run.
 */
final class HostArenaInvariants {

    private HostArenaInvariants() {
    }

    /**
     * Checks {@code a}'s bookkeeping.
     *
     * @throws IllegalStateException naming the first inconsistency
     */
    static void check(HostCachingArena a) {
        a.underLock(() -> checkLocked(a));
    }

    private static void checkLocked(HostCachingArena a) {
        long blocks = 0;
        long bytes = 0;
        long active = 0;
        long activeSize = 0;
        long liveCount = 0;
        long liveExtent = 0;
        long requested = 0;
        long ownReserved = 0;
        long pieces = 0;
        for (int h = 0; h < a.tableSize; h++) {
            Block b = a.table[h];
            if (b == null) {
                continue;
            }
            expect(b.handle == h, "block handle " + b.handle + " stored at " + h);
            expect(a.byAddress.get(b.ptr, -1) == h, "address map does not lead to block " + h);
            blocks++;
            bytes += b.size;
            if (b.reserve) {
                pieces += b.extent;
            } else {
                ownReserved += b.size;
                expect(b.extent == b.size, "a device block's extent differs from its size");
            }
            if (b.state != Block.FREE) {
                active++;
                activeSize += b.size;
            }
            if (b.state == Block.ALLOCATED) {
                liveCount++;
                liveExtent += b.extent;
                requested += b.requested;
                expect(b.eventCount == 0, "a live block has pending events");
            } else {
                expect(b.streamCount == 0, "a freed block still lists streams");
            }
            expect(b.state == Block.PENDING ? b.eventCount > 0 : b.eventCount == 0,
                    "block state " + b.state + " with " + b.eventCount + " events");
        }
        expect(a.byAddress.size() == blocks, "address map holds " + a.byAddress.size() + " entries for " + blocks
                + " blocks");
        long free = 0;
        for (BlockStack s : a.allFreeLists()) {
            for (int i = 0; i < s.count; i++) {
                Block b = s.items[i];
                expect(b.state == Block.FREE && a.table[b.handle] == b, "free list holds a block that is not free");
                expect(a.freeList(b.size, false) == s, "block of " + b.size + " on the wrong free list");
                free++;
            }
        }
        long pendingOfBlocks = 0;
        for (int h = 0; h < a.tableSize; h++) {
            Block b = a.table[h];
            if (b != null) {
                if (b.state == Block.FREE) {
                    free--;
                }
                pendingOfBlocks += b.eventCount;
            }
        }
        expect(free == 0, "free lists and free blocks differ by " + free);
        expect(pendingOfBlocks == a.pendingCount, a.pendingCount + " pending events but blocks count "
                + pendingOfBlocks);
        for (int i = 0; i < a.pendingCount; i++) {
            Block b = a.pendingBlocks[(a.pendingHead + i) % a.pendingBlocks.length];
            expect(b.state == Block.PENDING && a.table[b.handle] == b,
                    "a pending event for a block that is not pending");
        }
        expect(a.hostStats.blocks() == blocks, "allocations.current " + a.hostStats.blocks() + " but " + blocks
                + " blocks");
        expect(a.hostStats.blockBytes() == bytes, "allocated_bytes.current " + a.hostStats.blockBytes() + " but "
                + bytes);
        expect(a.hostStats.activeRequests() == active, "active_requests.current "
                + a.hostStats.activeRequests() + " but " + active + " active blocks");
        expect(a.hostStats.activeBytes() == activeSize, "active_bytes.current " + a.hostStats.activeBytes()
                + " but " + activeSize);
        expect(a.live == liveCount && a.liveBytes == liveExtent && a.requestedBytes == requested,
                "common stats disagree with the live blocks");
        long reserve = a.reserveBase == 0 ? 0 : a.options.reserveSegmentSize();
        expect(a.reservedBytes == ownReserved + reserve, "reserved " + a.reservedBytes + " but blocks hold "
                + ownReserved + " + reserve " + reserve);
        expect(pieces == a.reserveUsed, "reserve pieces cover " + pieces + " bytes but " + a.reserveUsed
                + " were carved");
    }

    private static void expect(boolean condition, String message) {
        if (!condition) {
            throw new IllegalStateException(message);
        }
    }
}
