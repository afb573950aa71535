/**
 * PyTorch's CUDA caching allocator over the {@link io.devalloc.api.device.DeviceMemory} port: allocator
 * {@code caching}. It imports nothing but {@code allocator-api} (and slf4j).
 *
 * <h2>Files, cut where upstream cuts</h2>
 * <ul>
 *   <li>{@code CachingArena}: the allocator of one device, PyTorch's {@code DeviceCachingAllocator} (below), and
 *       nothing else. What every allocator repeats (argument checks, the null allocation, the lock,
 *       {@code ensureOpen}, the free path's lookup and checks, the listener and the timing of cache releases,
 *       closing once with the first failure thrown and the rest suppressed) comes from allocator-api's
 *       {@code AbstractDeviceAllocator}; the arena answers its hooks ({@code liveAllocation},
 *       {@code releaseAllocation}: PyTorch's {@code free}) and its {@code releaseAll} returns the segments.
 *       {@code AllocParams} is upstream's {@code AllocParams}: the search key and {@code alloc_block}'s verdict
 *       that a malloc carries through the search (one per arena, reused).</li>
 *   <li>{@code CachingArenaRestore}: the warm-start restore of replays (PyTorch has no such calls), the arena's
 *       {@link io.devalloc.api.spi.PyTorchStateRestore}, handed out by its {@code unwrap}; it runs under the arena's
 *       lock with the malloc path's bookkeeping. {@code CachingArenaReports}: what the arena says when an
 *       allocation fails (upstream's out-of-memory message and hints, the {@code throw_on_cudamalloc_oom}
 *       rejection, {@code format_size}).</li>
 *   <li>{@code ExpandableSegment}: PyTorch's {@code struct ExpandableSegment}, one reserved range and its pages, with
 *       the device calls that map and unmap them; the arena keeps the blocks inside it and the counts.</li>
 *   <li>{@code BlockTable} (the blocks, as columns of primitive arrays) and {@code BlockPool} (PyTorch's
 *       {@code BlockPool}).</li>
 *   <li>{@code DeviceStats} (PyTorch's {@code DeviceStats}) and {@code MemorySummaryFormat}
 *       ({@code memory_summary()}, Python in upstream).</li>
 *   <li>{@code TraceRing}, {@link io.devalloc.caching.TraceEntry}, {@link io.devalloc.caching.TraceAction}: the
 *       history.</li>
 *   <li>{@code SnapshotBuilder}: {@code snapshot()}'s segments and {@code snapshotDict()}'s PyTorch dict, as
 *       {@code torch/csrc/cuda/memory_snapshot.cpp} is apart from the allocator.</li>
 *   <li>{@link io.devalloc.caching.CachingOptions}: the options record (one value per key, withers for what the
 *       allocator changes, {@code allocator_settings}); {@link io.devalloc.caching.CachingConfig}: PyTorch's
 *       {@code CUDAAllocatorConfig}, the keys, the parser, the environment variables and upstream's messages (its
 *       pinned keys are shared with {@code caching-host}, and the checks of a configuration against the device
 *       made at creation); {@link io.devalloc.caching.SizeRules}: the size constants
 *       ({@code kMinBlockSize} ... {@code kLargeBuffer}, their one home), {@code round_size} and
 *       {@code get_allocation_size}; {@link io.devalloc.caching.ExpandableSegmentReserve}: the reserve keys.</li>
 *   <li>{@link io.devalloc.caching.CachingAllocator}, {@link io.devalloc.caching.CachingAllocatorProvider}: the
 *       interface and the provider. The structural invariant checks are a test fixture ({@code CachingInvariants}
 *       in the tests of this package).</li>
 * </ul>
 *
 * <h2>Design</h2>
 * <ul>
 *   <li><b>One arena per device</b> ({@code CachingArena}), following {@code DeviceCachingAllocator} method by
 *       method: {@code malloc} (round, choose the pool, {@code get_free_block}, the retry ladder of callbacks,
 *       garbage collection, {@code alloc_block}, {@code release_available_cached_blocks},
 *       {@code release_cached_blocks}, then out of memory), {@code alloc_found_block}, {@code free},
 *       {@code free_block}, {@code try_merge_blocks}, {@code insert_events}, {@code process_events},
 *       {@code synchronize_and_free_events}, {@code garbage_collect_cached_blocks} and the expandable-segment
 *       functions. Reading the two side by side should be easy; comments mark where and why they differ.</li>
 *   <li><b>No object per block.</b> Blocks are columns of primitive arrays indexed by handle
 *       ({@code BlockTable}); each pool keeps its free blocks ordered by (stream, size, address) and its unmapped
 *       ranges by (stream, address) ({@code BlockPool}), in B-trees of handles over primitive arrays
 *       ({@code OrderedHandleSet}, where PyTorch has {@code std::set}s), so the best fit is an O(log n) lower bound
 *       however many blocks are free, and allocate/free on the raw path create no Java objects. Side tables (streams
 *       recorded with {@code recordStream}, pending events) are touched only when streams are shared.</li>
 *   <li><b>Stats</b> are PyTorch's {@code DeviceStats} ({@code DeviceStats}): nine metrics by all/small/large,
 *       current/peak/allocated/freed, the oversize stats and the counters; {@code memoryStats()} flattens them with
 *       PyTorch's key names and {@code MemorySummaryFormat} renders {@code memory_summary()}.</li>
 *   <li><b>History</b> is a ring buffer of primitive arrays ({@code TraceRing}) that, as PyTorch's
 *       {@code RingBuffer}, starts small and doubles up to {@code max_entries} before it wraps, so that
 *       {@code recordHistory(Integer.MAX_VALUE)} (PyTorch's default {@code sys.maxsize}) means "grow as needed"
 *       (Java's own limits: at most {@code Integer.MAX_VALUE - 8} entries, and a ring the heap cannot double stays
 *       at its size, logged); {@code snapshotDict()} builds
 *       PyTorch's {@code _snapshot()} structure ({@code SnapshotBuilder}), as
 *       {@code torch/csrc/cuda/memory_snapshot.cpp} writes it: the history as {@code device_traces[index]} (one list
 *       per device index up to this arena's device, the others empty), {@code segment_pool_id} and each entry's
 *       {@code pool_id} as the tuple {@code (0, 0)}, {@code allocator_settings} from
 *       {@code CachingOptions.allocatorSettings()}; module {@code trace-io}'s
 *       {@code io.devalloc.trace.pytorch.PyTorchSnapshots} writes it as a protocol-2 pickle (which PyTorch's memory
 *       visualiser loads) or JSON. {@code snapshot()} carries the same settings in its {@code MemorySnapshot}.</li>
 *   <li><b>Threads.</b> One lock guards the arena, and device calls run under it (PyTorch's default). Out-of-memory
 *       observers run after it is released, as upstream; rejection observers ({@code throw_on_cudamalloc_oom}) on a
 *       thread of their own, as upstream dispatches them.</li>
 *   <li><b>Expandable segments</b> follow upstream's {@code ExpandableSegment}: one device map of the whole run of
 *       pages per {@code map_block}, in pieces of one page (2 MiB small, {@code large_segment_size} large: one
 *       {@code cuMemCreate} handle per page on CUDA, as upstream), and one unmap of whole pages per
 *       {@code unmap_block} (each counted once, one history entry);
 *       the reserve per segment is 9/8 of device memory or {@code expandable_segments_reserve[_by_class]}
 *       ({@code ExpandableSegmentReserve}), and streams carry a reserve class.</li>
 *   <li><b>PyTorch 2.10–2.13 keys</b> ({@code CachingConfig}): {@code throw_on_cudamalloc_oom} with
 *       {@code num_oom_rejections}, the expandable reserve keys, the pinned keys (acting in {@code caching-host}),
 *       and devalloc's {@code search_pool_after_release} for the open pytorch#191302. The upstream source these
 *       follow, and where it differs from the project's spec, is in {@code CachingConfig}'s key table.</li>
 * </ul>
 *
 * <h2>Deviations from PyTorch, and why</h2>
 * <ul>
 *   <li>Left out: CUDA graphs' private pools and {@code MemPool} (and with them {@code use_on_oom} and capture
 *       deferrals), IPC, {@code release_lock_on_cudamalloc} (parsed, but the device call always runs under the
 *       lock), and Python/C++ stack frames in the history (entries carry empty {@code frames}).</li>
 *   <li>{@code backend:cudaMallocAsync} is parsed and refused at creation with an
 *       {@link io.devalloc.api.error.InvalidConfigurationException} saying what to use instead: devalloc has no
 *       stream-ordered device allocator to hand the work to.</li>
 *   <li>Bad frees throw {@link io.devalloc.api.error.InvalidFreeException} ({@code invalid device pointer} in
 *       PyTorch) and change nothing.</li>
 *   <li>Streams that die: {@code recordStream} refuses a stream the device does not have with an
 *       {@link io.devalloc.api.error.UnknownStreamException} (upstream inserts any stream and lets
 *       {@code cudaEventRecord} fail at the free, which then throws every time). A stream destroyed after
 *       {@code recordStream} gets no event at the free: the device is synchronised instead, once, since CUDA still
 *       runs the work a destroyed stream had queued; an expandable segment whose stream was destroyed waits for the
 *       whole device before an unmap, as upstream's {@code unmapHandles} does for a segment without a stream.
 *       Upstream never meets the case with its own pool streams, which live as long as the process.</li>
 *   <li>Warm traces can be seeded with {@code restoreSegment}, {@code restoreExpandableSegment} and
 *       {@code restoreExpandableRange} (the mapped ranges of an expandable segment, at their recorded offsets from
 *       its base), and {@code restoreAllocation} (a live block, in either kind of segment), which PyTorch has no
 *       need for (see {@code CachingArenaRestore}).</li>
 *   <li>A request larger than its expandable segment's reserve fails without reserving the address space first
 *       (upstream reserves a segment and deletes it at once); every other effect is the same. A configured reserve
 *       that resolves to 0 bytes (a tiny fraction) still gives a one-page segment, where upstream would make a
 *       segment of no pages that no request fits.</li>
 *   <li>The common {@link io.devalloc.api.stats.AllocatorStats#outOfMemoryErrors()} counts every out-of-memory
 *       error thrown, refusals by {@code throw_on_cudamalloc_oom} included; {@code memoryStats()} keeps upstream's
 *       split into {@code num_ooms} and {@code num_oom_rejections}.</li>
 * </ul>
 */
package io.devalloc.caching;
