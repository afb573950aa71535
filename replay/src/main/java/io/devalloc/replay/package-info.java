/**
 * Trace replay: real allocation traces through any allocator and configuration, on any device, with the figures
 * that tell allocators apart and, for PyTorch traces, a comparison with what PyTorch's allocator did. The launcher's
 * {@code devalloc replay} and {@code devalloc compare} run it.
 *
 * <ul>
 *   <li>{@link io.devalloc.replay.Replayer}: one replay per call, configured by
 *       {@link io.devalloc.replay.ReplayOptions}; returns a
 *       {@link io.devalloc.replay.ReplayOutcome} holding the
 *       {@link io.devalloc.replay.ReplayResult}.</li>
 *   <li>{@link io.devalloc.replay.TraceSource}: a trace that can be read more than once;
 *       {@link io.devalloc.replay.TraceSources#of(java.nio.file.Path)} for a file.</li>
 *   <li>{@link io.devalloc.replay.CompactTrace}: a trace read once into primitive arrays
 *       ({@value io.devalloc.replay.CompactTrace#BYTES_PER_EVENT} bytes per event), which any number of replays,
 *       on any number of threads, replay with {@link io.devalloc.replay.Replayer#replay(CompactTrace)}: the same
 *       figures as a replay of its source, without reading or parsing again.</li>
 *   <li>{@link io.devalloc.replay.ReplayJson}: the JSON form;
 *       {@link io.devalloc.replay.ProgressBar}: the terminal's progress bar.</li>
 * </ul>
 *
 * <h2>One pass, or two with {@code --warm}</h2>
 * A replay streams the trace, so memory does not grow with its length. By default it reads the trace once and
 * collects the ground truth of a PyTorch trace (its {@code segment_*} rows: counts, the reserved bytes they imply,
 * and the segment sizes in order) as it replays. With {@code --warm} the state to restore must be known before the
 * first event, so a first pass collects the {@code presegment}/{@code prealloc} rows, the one look-ahead of the
 * block-size inference (rule 3 below), the ground truth and the event count; the second pass replays. Events per
 * second are measured over the replaying pass.
 *
 * <p>The replaying pass is read ahead ({@code ReadAhead}): a thread of its own reads and parses the trace and hands
 * the events over in batches of primitive arrays, so that parsing runs on one core while the allocator runs on
 * another; the events and any reading error arrive in the file's order. Both results are the same whichever way
 * the trace was read, except the timeline's sampling, which depends on whether the event count is known in advance
 * (below). A {@link io.devalloc.replay.CompactTrace} was read once, its first pass included: its replays read
 * nothing, and sample the timeline as a replay of its source would (a cold one as in one pass, a warm one as in
 * two), so that their figures are the source's.
 *
 * <p>With {@link io.devalloc.replay.ReplayOptions#peakSnapshot()} (the default) one more pass replays the events
 * again, on a new device and allocator set up as the first were (the same warm start), up to the event of the peak,
 * and takes the allocator's snapshot there (below).
 *
 * <h2>Replay rules</h2>
 * <ul>
 *   <li>{@code ALLOC}: {@code malloc(size, stream)}; the trace's key (the recorded address, or the allocation's
 *       index) is mapped to our address in a primitive map ({@code LongLongHashMap}). An out-of-memory error is
 *       counted and the replay goes on; a later free of that key is skipped (counted apart). An allocation of a key
 *       that is still live means the trace lost a free: the older allocation is freed after the new one is made
 *       (counted as a reallocation). The first out-of-memory error is recorded
 *       ({@link io.devalloc.replay.ReplayResult.OomPoint}: its event, the bytes asked for, and the reserved and
 *       allocated bytes right after the failure, once the allocator's retry ladder has freed what it could); with
 *       {@link io.devalloc.replay.ReplayOptions#stopAtFirstOom()} the replay stops after that event, its figures
 *       describe the events up to it, and the ground truth is not compared.</li>
 *   <li>{@code FREE} (PyTorch's {@code free_completed}): {@code free} of the mapped address. A free of a key that is
 *       not live is counted and skipped, not fatal.</li>
 *   <li>{@code PREALLOC}: allocates like {@code ALLOC}, except after a warm start that restored it.
 *       {@code PRESEGMENT}: used only by the warm start.</li>
 *   <li>{@code SEGMENT_ALLOC}, {@code SEGMENT_MAP}, {@code SEGMENT_FREE}, {@code SEGMENT_UNMAP}: what the recorded
 *       allocator did, never replayed as such (they are the ground truth). A run of {@code SEGMENT_FREE} or
 *       {@code SEGMENT_UNMAP} rows is the program's {@code torch.cuda.empty_cache()} or the allocator's own flush
 *       inside a malloc, told apart by {@link io.devalloc.replay.FlushRuns}: with
 *       {@code --empty-cache-at-segment-free} the first row of each of the program's runs calls
 *       {@code releaseCachedMemory()} (which frees whole segments and, with expandable segments, unmaps their free
 *       pages); a warm replay reproduces each of the allocator's own runs, its device refusing the malloc that failed
 *       in the recording until the allocator's own ladder has freed as many segments; a cold one leaves them to the
 *       replay's allocator.</li>
 *   <li>{@code OOM}: a request that failed in the recording. With its request (a snapshot pickle's, an RMM log's),
 *       a cold replay asks for it again, freeing it at once when served (a failure is this replay's out-of-memory
 *       error); a warm replay reproduces the failure on a device that refuses to grow. Without it (the PyTorch CSV
 *       keeps only the device's free bytes) it is counted in a note.</li>
 *   <li>Streams: trace stream 0 is the device's default stream; any other value gets a stream created on the device
 *       the first time it appears. Threads are ignored (the replay is single-threaded).</li>
 *   <li>Device: opened from the spec through {@link io.devalloc.api.spi.DeviceRegistry} ({@code sim:80GiB} by
 *       default; a simulated capacity may be given to the byte, {@code sim:1073741824B}: the simulator refuses every
 *       malloc and map beyond it, so the allocator runs out of memory as on a full GPU, its retry ladder (free cached
 *       blocks, retry) included) and wrapped in a decorator that counts device mallocs and maps, frees and unmaps, with
 *       their sizes, without boxing. The configuration string goes to the allocator's provider unchanged (so
 *       {@code caching} with an empty one reads {@code PYTORCH_CUDA_ALLOC_CONF}, as PyTorch does, and {@code bfc}
 *       applies TensorFlow's {@code TF_FORCE_GPU_ALLOW_GROWTH} and {@code TF_ENABLE_GPU_GARBAGE_COLLECTION}); what the
 *       provider took from the environment ({@link io.devalloc.api.spi.AllocatorProvider#configFromEnvironment}) is
 *       part of the result's configuration, e.g. {@code max_split_size_mb:128 (from PYTORCH_CUDA_ALLOC_CONF)}, so that
 *       no output calls such a configuration the defaults.</li>
 * </ul>
 *
 * <h2>Warm start ({@code --warm}, PyTorch traces)</h2>
 * A snapshot taken after the allocator was already in use starts with {@code presegment} rows (the segments of that
 * moment) and {@code prealloc} rows (its live blocks). With an allocator that offers the
 * {@link io.devalloc.api.spi.PyTorchStateRestore} capability ({@code caching} does), reached with
 * {@code allocator.unwrap(PyTorchStateRestore.class)} through any decorator, they are restored:
 * <ol>
 *   <li>On a simulated device ({@code sim:SIZE}) the replay opens its own {@link io.devalloc.sim.SimulatedDevice} of
 *       the same capacity, with the address space [2 MiB, 2^47) (the recorded addresses, about 2^35, lie inside, and
 *       new segments come top-down from 2^47, above every restored one) and {@code scriptedAddresses} = the
 *       presegment addresses in row order. Each presegment row becomes {@code restoreSegment(size, stream)}, which
 *       lands at its recorded address. On other devices segments land elsewhere; each block keeps its offset within
 *       its segment.</li>
 *   <li>Each prealloc row becomes {@code restoreAllocation(address, blockSize, requested, stream)}, in row order.
 *       The block size is inferred, with <em>room</em> = the distance to the next prealloc block of the same segment,
 *       or to the segment's end: (1) small pool (2 MiB segments), or a remainder PyTorch's {@code should_split} would
 *       split off: the rounded size; (2) large pool, room &minus; rounded &le; 1 MiB: the whole room (PyTorch would
 *       not have split it, and no free large block is that small); (3) large pool, more room: if the trace's first
 *       {@code alloc} inside the space after the block, while it is still live, lands t bytes past the rounded end
 *       with 0 &lt; t &le; 1 MiB, the block is rounded + t (its unsplit tail); otherwise the rounded size. Rule 3 is
 *       the look-ahead the first pass answers.</li>
 * </ol>
 * <b>With expandable segments</b> ({@code --config expandable_segments:True}) the presegments of a trace recorded with
 * them are the mapped ranges of expandable segments at the window's start (as PyTorch's snapshot shows them, one
 * segment per contiguous mapped range), and they are restored as such ({@link
 * io.devalloc.replay.ExpandableLayout} has the rules and their limits): the ranges are grouped into one
 * expandable segment per (stream, pool) (more only where ranges touch, are not whole pages apart or would not fit
 * one reserve), each segment's base is its lowest range or the lowest traced map below it that it can hold (a map
 * into a hole left by unmaps before the window starts at the base), the simulated device is scripted with the
 * segments' bases instead of the presegment addresses (its scripted addresses apply to reservations too), each
 * segment reserves at most the distance to the next one, its ranges are mapped at their recorded offsets
 * ({@code restoreExpandableSegment}, {@code restoreExpandableRange}: one map each, merged free, not counted as the
 * replay's) and the live blocks are restored inside them with PyTorch's {@code should_split} for expandable segments
 * (every remainder of 512 B or more is split off, so a block is its rounded size and rules 2 and 3 do not apply).
 * The pool of a range is that of its live blocks (rounded size &le; 1 MiB: small), else of the first alloc inside
 * it, else small unless it is a multiple of {@code large_segment_size}. A trace whose rows show it was recorded
 * without expandable segments ({@code segment_alloc}/{@code segment_free} rows, or a presegment that is not whole
 * pages of its pool) is restored as ordinary segments, and the notes say why; so is any trace replayed without
 * expandable segments (the notes say so when it maps). A segment whose recorded base cannot be placed on the
 * simulated device is reserved where the device puts it, its ranges at their offsets, with a note.
 *
 * <p>With any other allocator, {@code --warm} allocates the prealloc blocks with {@code malloc} (as a cold replay
 * does) and says so in the notes; presegments cannot be restored.
 *
 * <h2>Figures</h2>
 * <ul>
 *   <li>{@code allocs}: successful allocations; {@code frees}: frees replayed; {@code ooms}: allocations that failed
 *       with out of memory; {@code alloc_retries}: the allocator's own count.</li>
 *   <li>Device mallocs and frees: what the decorator saw during the replaying pass (a warm start's restored segments
 *       are not counted), mallocs and virtual-memory maps together, frees and unmaps together.</li>
 *   <li>Peaks: peak allocated and peak requested are the allocator's own peak figures (which it updates at every
 *       call, warm start included). Peak reserved is the higher of the allocator's peak and the reserved bytes read
 *       after every event (without {@link io.devalloc.api.spi.LiveBytes}, after every event in which the device
 *       gave the allocator memory: reserved bytes can only grow then).</li>
 *   <li>The peak ({@link io.devalloc.replay.ReplayResult.Peak}): the first event after which the reserved bytes
 *       stand at their highest and, among those, the allocated bytes at theirs: the fullest moment of the peak
 *       (event 0 is the state before the first event, after a warm start). With an allocator that offers
 *       {@link io.devalloc.api.spi.LiveBytes} ({@code direct}, {@code bfc}, {@code caching}, {@code caching-host})
 *       the reserved and allocated bytes are read after every event, so the moment is exact and the same whatever
 *       the timing. With any other allocator they are read from its stats after every event in which the device gave
 *       it memory (reserved bytes can only grow then), every
 *       {@value io.devalloc.replay.PeakSampler#OBSERVE_INTERVAL} events for the first 32,768, then every 1/1024 of
 *       the events so far (a power of two), at the start and at the end (the same events in one pass and in two),
 *       and the moment is the fullest of those.</li>
 *   <li>Fragmentation at the peak: 1 &minus; allocated / reserved and 1 &minus; requested / reserved, with the
 *       allocated and requested bytes of that moment. A caching allocator's peak is first reached right after a
 *       segment malloc, when the new segment is nearly empty; its fragmentation is what remains unused once the
 *       segments have filled.</li>
 *   <li>Timeline: allocated and reserved bytes sampled at event 0 (after a warm start), then every
 *       ceil(events / 1998) events when the count is known (two passes); in one pass, every event until the points
 *       fill up, then every other point is dropped and the stride doubled, as often as needed; and at the end: at
 *       most {@value io.devalloc.replay.Replayer#MAX_TIMELINE_POINTS} points, evenly spaced.</li>
 *   <li>Peak snapshot ({@code allocator.snapshot()}, with {@link io.devalloc.replay.ReplayOptions#peakSnapshot()}):
 *       taken at the peak's event by a second replay of the events up to it, on a new device and allocator set up
 *       as the first (so it costs up to one more replay, without the sampling). The simulated device is
 *       deterministic (the same calls give the same addresses), so the same trace and options give the same
 *       event and the same snapshot, whose reserved and allocated bytes are the peak's; on a device that places
 *       memory differently from one run to the next ({@code host}, {@code cuda}) they may differ, and a note says
 *       so.</li>
 *   <li>Waste at the peak ({@link io.devalloc.replay.WasteAtPeak}, from the peak snapshot): the reserved bytes no
 *       request asked for, by cause: rounding (rounded request &minus; request over allocated blocks, by the
 *       allocator's {@link io.devalloc.api.spi.SizeRounding}; without it, the whole difference), unsplit remainders
 *       (block size &minus; rounded request), free blocks in used segments, whole free segments, and unmapped page
 *       tails (expandable segments, {@link io.devalloc.api.spi.MappedPages}: free bytes from a mapped range's last
 *       used byte to the next page boundary). They add up to reserved &minus; requested bytes at the peak.</li>
 *   <li>Ground truth (PyTorch traces): the trace's device mallocs ({@code segment_alloc} + {@code segment_map}),
 *       device frees ({@code segment_free} + {@code segment_unmap}), peak reserved (start = sum of the presegments,
 *       + alloc/map, &minus; free/unmap), and the sequence of its segment sizes against our device mallocs' sizes:
 *       {@code match}, or the first difference, e.g. {@code device malloc #17: 20971520 B here, 2097152 B in the
 *       trace}, else the frees, else the peak.</li>
 * </ul>
 */
package io.devalloc.replay;


