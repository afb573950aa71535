package io.devalloc.bfc;

import static io.devalloc.bfc.ChunkTable.NONE;

/**
 * The arena's structural invariants, checked by every test that changes an arena: regions tiled by their chunks,
 * no two adjacent free chunks outside timestamped mode, every free chunk in the right bin and no used chunk binned,
 * bytes in use and pool bytes equal to their sums, the pool within the limit. A test fixture rather than arena code,
 * so that the arena ships only what it runs; it reads the arena's package-private fields with the arena's lock
 * held.
 */
final class BfcArenaInvariants {

    private BfcArenaInvariants() {
    }

    /**
     * Checks every invariant of {@code arena}.
     *
     * @throws IllegalStateException naming the first violation
     */
    static void check(BfcArena arena) {
        arena.whileLocked(() -> checkLocked(arena));
    }

    private static void checkLocked(BfcArena a) {
        ChunkTable chunks = a.chunks;
        long used = 0;
        long pool = 0;
        int free = 0;
        for (int r = 0; r < a.regionCount; r++) {
            pool += a.regionSize[r];
            long cursor = a.regionBase[r];
            int prev = NONE;
            for (int h = (int) a.handles.get(a.regionBase[r], -1); h != NONE; h = chunks.next[h]) {
                require(chunks.ptr[h] == cursor, "chunk " + h + " at " + Long.toHexString(chunks.ptr[h])
                        + " but the previous chunk ended at " + Long.toHexString(cursor));
                require(chunks.prev[h] == prev, "chunk " + h + " has prev " + chunks.prev[h] + ", expected " + prev);
                require(chunks.size[h] > 0 && chunks.size[h] % BfcArena.MIN == 0,
                        "chunk " + h + " size " + chunks.size[h]);
                require(a.handles.get(chunks.ptr[h], -1) == h, "chunk " + h + " is not registered at its address");
                if (chunks.inUse(h)) {
                    used += chunks.size[h];
                    require(chunks.bin[h] == NONE, "used chunk " + h + " is binned");
                } else {
                    free++;
                    require(chunks.bin[h] == Bins.binFor(chunks.size[h]), "free chunk " + h + " of size "
                            + chunks.size[h] + " is in bin " + chunks.bin[h]);
                    if (!a.options.timestamped() && prev != NONE) {
                        require(chunks.inUse(prev), "adjacent free chunks " + prev + " and " + h);
                    }
                }
                cursor += chunks.size[h];
                prev = h;
            }
            long end = a.regionBase[r] + a.regionSize[r];
            require(cursor == end, "region " + r + " chunks end at " + Long.toHexString(cursor) + ", region ends at "
                    + Long.toHexString(end));
        }
        require(used == a.bytesInUse, "bytes in use " + a.bytesInUse + " but used chunks sum to " + used);
        require(pool == a.poolBytes, "pool bytes " + a.poolBytes + " but regions sum to " + pool);
        require(free == a.bins.total(), free + " free chunks but " + a.bins.total() + " binned");
        require(a.poolBytes <= a.memoryLimit, "pool " + a.poolBytes + " above the limit " + a.memoryLimit);
    }

    private static void require(boolean ok, String message) {
        if (!ok) {
            throw new IllegalStateException(message);
        }
    }
}
