/**
 * The bounds of a trace's memory that no allocator setting changes: the lower bound (what the program asked for at
 * its busiest moment, before and after an allocator's rounding) and an offline plan (what an allocator that knew
 * the whole trace in advance would need), the bottom rungs of the advisor's ladder below the best and the recorded
 * settings. See docs/bounds.md.
 *
 * <pre>{@code
 * LiveIntervals intervals = LiveIntervals.of(CompactTrace.read(path));
 * LowerBound bound = LowerBound.of(intervals, rounding);   // rounding: the baseline allocator's SizeRounding
 * OfflinePlan plan = OfflinePlan.of(intervals, rounding);  // plan.bytes() >= bound.roundedPeakBytes()
 * }</pre>
 *
 * <p><b>From rows to intervals</b> ({@link io.devalloc.replay.bounds.LiveIntervals}), in trace order, every kind of
 * event counting one step of time:
 * <ul>
 *   <li>An {@code ALLOC} row starts an interval of its size: for a PyTorch snapshot, the size the program requested
 *       (the {@code alloc} entry's {@code size}, before PyTorch's rounding). A {@code FREE} row
 *       ({@code free_completed}) of its key ends it: the interval covers events {@code [alloc, free)}.</li>
 *   <li>A {@code PREALLOC} row (a warm snapshot: a block live when the history began, listed before the first
 *       event) starts an interval too. Its size is the block's requested size: the {@code size} of the
 *       {@code free_completed} entry that frees it in the history (PyTorch records the request there too), else
 *       the end state's {@code requested_size} of the block, or its block {@code size} where an older snapshot has
 *       no {@code requested_size} (then the rounded block size: a little above the request);
 *       {@code PyTorchPickleReader} and {@code pickle_to_csv.py --prepend-live} agree on this.</li>
 *   <li>An {@code OOM} row is a request that was not served: it counts as an interval of its size for that one event
 *       ({@code [oom, oom + 1)}), so the bound says what getting past that request needs. Its size is the request as
 *       PyTorch rounded it (a snapshot pickle's {@code oom} entry); a PyTorch CSV keeps only the free bytes (size 0),
 *       and such a row is counted without an interval.</li>
 *   <li>A {@code FREE} of a key that is not live is ignored and counted. An {@code ALLOC} (or {@code PREALLOC}) of a
 *       key still live means the trace lost a free: the older interval ends at that row, before the new one starts,
 *       and it is counted. (A replay frees the older block after the new one is made instead, because an allocator
 *       must hand out the new block before it can tell the lost free; for a lower bound the earlier end is the
 *       conservative choice.) An interval never freed lasts to the end of the trace.</li>
 *   <li>Segment rows ({@code PRESEGMENT}, {@code SEGMENT_*}) are what the recorded allocator did with the device,
 *       not what the program asked: ignored.</li>
 *   <li>Sizes are never trusted: a negative size counts as 0 bytes (and is counted); sums stop at
 *       {@link java.lang.Long#MAX_VALUE} instead of wrapping, and the result says it saturated.</li>
 * </ul>
 *
 * <p>Every type here is immutable once built and may be shared between threads.
 */
package io.devalloc.replay.bounds;
