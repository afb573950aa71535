package io.devalloc.replay.bounds;

/**
 * What {@link LiveIntervals#of} found while it turned a trace into intervals: how many of each kind, and every row it
 * had to interpret because the trace was not self-consistent (a stranger's trace is taken as it is, never trusted).
 * The rules are in the {@linkplain io.devalloc.replay.bounds package documentation}.
 *
 * <p>Immutable: thread-safe.
 *
 * @param allocations         {@code ALLOC} rows, each an interval
 * @param warmStartBlocks     {@code PREALLOC} rows (blocks live when a warm snapshot's history began), each an
 *                            interval
 * @param oomInstants         {@code OOM} rows with a request ({@code size > 0}: a snapshot pickle's), each an interval
 *                            of one event: the request was not served, but getting past it needs its bytes for an
 *                            instant
 * @param oomsWithoutRequest  {@code OOM} rows without a request (size 0: a PyTorch CSV keeps only the free bytes; or
 *                            a negative size): counted, no interval
 * @param unknownFrees        {@code FREE} rows of a key that was not live (never allocated, or freed already):
 *                            ignored
 * @param reallocatedLiveKeys {@code ALLOC} or {@code PREALLOC} rows of a key that was still live (the trace lost its
 *                            free): the older interval ends at that row, before the new one starts
 * @param neverFreed          intervals with no free: they end with the trace
 * @param negativeSizes       rows with a negative size: an allocation's is taken as 0 bytes (its interval stays);
 *                            an {@code OOM}'s is counted in {@code oomsWithoutRequest} too, with no interval
 */
public record IntervalCounts(long allocations, long warmStartBlocks, long oomInstants, long oomsWithoutRequest,
                             long unknownFrees, long reallocatedLiveKeys, long neverFreed, long negativeSizes) {

    /** The intervals these counts describe: allocations, warm-start blocks and OOM instants. */
    public long intervals() {
        return allocations + warmStartBlocks + oomInstants;
    }
}
