package io.devalloc.replay;

/**
 * One {@code oom} entry of a trace: where PyTorch's caching allocator ran out of memory, and what the trace says of
 * that moment. PyTorch records the entry after its retry ladder has freed what it could (its cached blocks), right
 * before it raises {@code torch.OutOfMemoryError}.
 *
 * @param event              the entry's event, numbered from 1 in the trace's order (as
 *                           {@link ReplayResult.OomPoint#event()} numbers a replay's failure)
 * @param requestBytes       the request that failed, as PyTorch rounded it (the entry's {@code size}); 0 when the
 *                           format does not record it (a PyTorch CSV)
 * @param reservedBytes      what the allocator held from the device then, from the trace's segment rows (and its
 *                           start state)
 * @param liveRequestedBytes bytes live then as the program requested them, from the trace's {@code alloc} and
 *                           {@code free_completed} rows (and the blocks live at its start)
 * @param deviceFreeBytes    the device's free bytes PyTorch recorded ({@code device_free}), or -1 when the format does
 *                           not record them
 */
public record RecordedOom(long event, long requestBytes, long reservedBytes, long liveRequestedBytes,
                          long deviceFreeBytes) {

    /**
     * The memory the allocator could have held on that device: what it had reserved plus what was still free, or -1
     * when the free bytes are not recorded. The CUDA context, other libraries and other processes held the rest of
     * the card.
     */
    public long capacityBytes() {
        if (deviceFreeBytes < 0) {
            return -1;
        }
        long sum = reservedBytes + deviceFreeBytes;
        return sum < 0 ? Long.MAX_VALUE : sum;
    }
}
