/**
 * The advisor ({@code devalloc advise}): replays one trace under many allocator settings, finds the device memory
 * each needs, and recommends one, with a report that says how far the figures can be trusted.
 *
 * <p><b>Grids are data.</b> A grid is a list of configuration texts, each exactly what {@code --config} takes
 * ({@link io.devalloc.advisor.Grid}). The built-in grid is the allocator provider's
 * {@link io.devalloc.api.spi.AllocatorProvider#defaultGrid(long)} (the SPI, so a plug-in allocator can offer one);
 * a grid file holds one text per line with {@code #} comments. Each setting is checked by creating the allocator
 * with it; one it refuses is reported as {@code file:line: upstream's message} and left out, and the others still
 * run ({@link io.devalloc.advisor.Grids}). The caching allocator's grid covers its defaults, expandable segments,
 * {@code max_split_size_mb} from 20 to past the largest request, {@code roundup_power2_divisions} (single values and
 * a per-interval list), {@code garbage_collection_threshold} with a {@code per_process_memory_fraction} and
 * combinations; {@code bfc}'s sweeps growth, garbage collection and the fragmentation fraction;
 * {@code caching-host}'s its rounding and caching thresholds.
 *
 * <p><b>Trust first.</b> The baseline is the setting the trace was recorded with: a PyTorch snapshot's
 * {@code allocator_settings} ({@link io.devalloc.trace.pytorch.RecordedAllocatorSettings}), else the defaults, and
 * the report says which. It is replayed exactly as {@code devalloc replay --warm --empty-cache-at-segment-free}
 * replays it (the same {@link io.devalloc.replay.Replayer} with the same options): from the state recorded at the
 * start, with {@code empty_cache()} where the program called it. The trust line is {@code MATCH} or the first
 * difference from what PyTorch's allocator did; {@code NOT COMPARABLE} when the trace records no allocator decisions
 * or another allocator is advised on (a PyTorch trace through {@code bfc}).
 *
 * <p><b>What-if runs</b> are the same workload under another setting. A warm state recorded under one setting cannot
 * be restored under another, so every what-if replay starts from an empty allocator, allocates the blocks live when
 * recording began first (the trace's {@code prealloc} rows, as {@code devalloc replay} without {@code --warm} does),
 * and calls {@code empty_cache()} where the program did ({@code --empty-cache-at-segment-free}). The recorded setting
 * is replayed that way too, so that savings compare like with like. A setting's figures are one such replay on
 * {@value io.devalloc.advisor.Advisor#UNLIMITED_DEVICE}: exactly what
 * {@code devalloc replay TRACE --config CONFIG --empty-cache-at-segment-free} reports. Every provider is used
 * without the environment ({@link io.devalloc.api.spi.AllocatorProvider#withoutEnvironment()}), so a
 * {@code PYTORCH_CUDA_ALLOC_CONF} in the shell changes no setting.
 *
 * <p><b>Capacity.</b> For each setting, the smallest capacity, a multiple of 2 MiB, of a simulated device on which the
 * whole trace runs with no out-of-memory error; the allocator's own retry ladder frees cached memory under pressure
 * (the device refuses what does not fit), so this is often below the peak reserved on the unlimited device. Found by
 * bisection: a capacity below the peak requested bytes cannot hold the live blocks and fails; the peak reserved
 * bytes rounded up to 2 MiB are tried first and usually run (settings relative to the device, a memory fraction or
 * a growth-less BFC, may not: then the unlimited capacity is the upper bound). The capacity found runs and 2 MiB less
 * fails: the search keeps a failing and a running capacity until they are 2 MiB apart. The search's replays take no
 * peak snapshot and stop at the first out-of-memory error ({@link io.devalloc.replay.ReplayOptions#stopAtFirstOom()}).
 * With {@code --capacity}, every setting is also replayed, whole, on a device of that size: the out-of-memory errors
 * there are counted and the first is described ({@link io.devalloc.replay.ReplayResult.OomPoint}).
 *
 * <p><b>At the peak.</b> A setting's figures replay takes the replay's deterministic peak snapshot (the allocator
 * replayed again up to the event of its reserved peak), from which come the segment maps and the waste at the peak by
 * cause ({@link io.devalloc.replay.ReplayResult.Peak#waste()}); the advisor computes neither itself.
 *
 * <p><b>Ranking.</b> By the objective: the smallest capacity (default), the lowest peak reserved, or the fewest
 * device calls (mallocs and frees, maps and unmaps included). Byte figures within 2 MiB, the search's granularity,
 * are tied (a smallest capacity is known to one step only), and a "best" is never noise: settings are grouped from
 * the smallest figure up, each group the figures at most 2 MiB above its first. Ties go to fewer device calls (for
 * device calls: to the smaller capacity), then to the recorded setting, then to the smaller figure, then to the
 * grid's order. When
 * the recorded setting comes first the report says it is already best. The recommendation gives the line to paste
 * ({@code PYTORCH_CUDA_ALLOC_CONF=...} for PyTorch's allocators, {@code DEVALLOC_CONFIG=...} for others), the saving
 * against the recorded setting in bytes and percent, and the caveats upstream documents (expandable segments and
 * CUDA IPC, {@code CUDAPluggableAllocator} with {@code MemPool}, serving systems' sleep modes).
 *
 * <p><b>Parallelism and memory.</b> The trace is read once, into a {@link io.devalloc.replay.CompactTrace}
 * ({@value io.devalloc.replay.CompactTrace#BYTES_PER_EVENT} bytes per event in primitive columns), noting a
 * snapshot's recorded settings and the requests on the way ({@link io.devalloc.advisor.AdvisorTrace}); every replay
 * reads it from memory. Settings are evaluated on {@code --threads} threads (default: every processor), each replay
 * on its own simulated device and allocator, all through one {@link io.devalloc.replay.Replayer}'s
 * {@link io.devalloc.replay.Replayer#withOptions(io.devalloc.replay.ReplayOptions) withOptions}.
 */
package io.devalloc.advisor;
