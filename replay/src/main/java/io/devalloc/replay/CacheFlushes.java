package io.devalloc.replay;

/**
 * The cache flushes a PyTorch trace records, told apart: a run of {@code segment_free} or {@code segment_unmap}
 * rows is either the program's {@code torch.cuda.empty_cache()} or the allocator's own flush inside {@code malloc}
 * (its retry ladder: free cached blocks, retry the device malloc; or its garbage collection). See
 * {@link FlushRuns} for the rules.
 *
 * @param programCalls      runs that were the program's {@code empty_cache()} (or another call that releases the
 *                          cache)
 * @param allocatorFlushes  runs the allocator made inside a {@code malloc}
 * @param byFrames          runs told apart by their stack frames (one object with those of the entry after the run,
 *                          or another)
 * @param byOutOfMemory     runs followed by an {@code oom} entry: the ladder's last release before it gave up
 * @param byNoDeviceMalloc  runs without stack frames and not followed by a device malloc: the program's (the ladder
 *                          always retries one)
 * @param byCapacity        runs without stack frames told apart by the capacity an {@code oom} entry tells: the
 *                          allocator's when the device malloc after the run could not have fitted it
 * @param assumedProgram    runs without stack frames that nothing told apart (no {@code oom} entry tells the
 *                          capacity): taken as the program's
 * @param capacity          the capacity the trace tells ({@code oom} entries, the allocator's own flushes), or null
 */
public record CacheFlushes(long programCalls, long allocatorFlushes, long byFrames, long byOutOfMemory,
                           long byNoDeviceMalloc, long byCapacity, long assumedProgram, RecordedCapacity capacity) {

    /** A trace without segment frees or unmaps and without {@code oom} entries. */
    public static final CacheFlushes NONE = new CacheFlushes(0, 0, 0, 0, 0, 0, 0, null);

    /** Every run of segment frees and unmaps. */
    public long runs() {
        return programCalls + allocatorFlushes;
    }
}
