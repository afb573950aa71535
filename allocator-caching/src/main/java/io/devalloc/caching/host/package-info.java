/**
 * PyTorch's pinned-host caching allocator ({@code at::CachingHostAllocator}, the allocator behind
 * {@code pin_memory()}) over the {@link io.devalloc.api.device.DeviceMemory} port: allocator {@code caching-host}.
 * Like the rest of {@code allocator-caching} it imports nothing but {@code allocator-api} (and slf4j).
 *
 * <h2>Files</h2>
 * <ul>
 *   <li>{@code HostCachingArena}: the allocator, function for function PyTorch's {@code CachingHostAllocatorImpl};
 *       what every allocator repeats (argument checks, the null allocation, the lock, {@code ensureOpen}, the free
 *       path's lookup and checks, the listener and the timing of cache releases, closing once with the first
 *       failure thrown and the rest suppressed) comes from allocator-api's {@code AbstractDeviceAllocator}.</li>
 *   <li>{@code Block}: one block and its state; {@code BlockStack}: a LIFO free list (PyTorch's
 *       {@code FreeBlockList}); {@code SizeLists}: the free lists by exact size of
 *       {@code pinned_round_threshold_mb}.</li>
 *   <li>{@code HostStats}: PyTorch's {@code host_memory_stats} ({@code HostStatsStaged}), made of c10's
 *       {@code Stat} and {@code DurationStat} ({@code Stat}, {@code DurationStat}); the common stats stay in the
 *       arena.</li>
 *   <li>{@link io.devalloc.caching.host.CachingHostOptions}: the options, their keys and parser; the pinned keys it
 *       shares with allocator {@code caching} are {@link io.devalloc.caching.CachingConfig}'s, read with its
 *       helpers, so both allocators accept and convert them alike.</li>
 *   <li>{@code HostCachingAllocator}, {@code CachingHostAllocatorProvider}: the interface and the provider.</li>
 * </ul>
 *
 * <h2>Design</h2>
 * <ul>
 *   <li><b>Sizes.</b> A request is rounded up to the next power of two ({@code c10::llvm::PowerOf2Ceil}: 40,960 B
 *       &rarr; 65,536 B) and served by a block of at least that size. A request above
 *       {@code pinned_max_round_threshold_mb} or above {@code pinned_max_cached_size_mb} (PyTorch 2.10+, see below)
 *       is not rounded: its block is exactly the request. Blocks are never split and never merged: one block is one
 *       device allocation (the device plays {@code cudaHostAlloc}), or one piece of the reserve segment. A size of 0
 *       returns address 0 and changes no stats.</li>
 *   <li><b>Free lists.</b> PyTorch's 64 last-in-first-out lists indexed by ceil(log2 size). With every request
 *       rounded, a list holds blocks of one size, and a hit takes the block freed most recently, which is the one
 *       most likely to be warm in cache and TLB. Unrounded blocks share a list with blocks of other sizes (150 MiB
 *       and 200 MiB are both in (128, 256] MiB), so a lookup scans the list from its most recently freed end and
 *       takes the first block of at least the requested size (pytorch#192722; the request never gets a smaller
 *       block). That keeps LIFO among the blocks that fit, and costs nothing extra in the rounded case (the first
 *       candidate fits). It is not best fit: a 200 MiB request takes a 250 MiB block freed after a 220 MiB one. The
 *       scan moves the blocks above the one taken down by one slot, so their order is kept and nothing is
 *       allocated. The PR's text does not say which end it scans from; LIFO is the order upstream uses everywhere
 *       else, so it is kept. With {@code pinned_round_threshold_mb}, sizes that are not powers of two (its 2 MiB
 *       multiples) are kept in a sorted array of exact sizes, each with its own LIFO stack, and looked up by exact
 *       size, so a 2 MiB class only serves requests that round to it, as before.</li>
 *   <li><b>Miss.</b> A device malloc of the rounded size (after the reserve segment, if one is configured and has
 *       room), timed into {@code host_alloc_time}.</li>
 *   <li><b>Free and streams.</b> {@code recordEvent(address, stream)} (PyTorch's {@code record_event}, which every
 *       non-blocking copy calls) adds the stream to the live block. On free, with no stream recorded, the block goes
 *       straight back to its free list. Otherwise one event (taken from a pool of reusable events) is recorded per
 *       stream, and the block becomes reusable only when all of them have completed. Every allocation first
 *       processes the pending events oldest first, stopping at the first one not complete, as upstream does (so a
 *       slow stream can hold back blocks freed after it on other streams).</li>
 *   <li><b>emptyCache</b> processes events, then returns every cached block to the device, timed into
 *       {@code host_free_time}. Live blocks and blocks still waiting for events stay.</li>
 *   <li><b>Reserve segment</b> ({@code pinned_reserve_segment_size_mb}, as upstream): on the first miss, one device
 *       allocation of that size, never freed until {@code close}; later misses carve 4 KiB-rounded pieces from it
 *       with a bump pointer until it is used up. Pieces are cached like other blocks.</li>
 *   <li><b>Stats</b> ({@code hostMemoryStats()}, PyTorch's {@code host_memory_stats()} keys): {@code allocations}
 *       and {@code allocated_bytes} count the blocks owned; {@code active_requests} and {@code active_bytes} the
 *       blocks handed out and not yet reusable, by the block's size both when it is handed out and when it becomes
 *       reusable or is released, so they balance even when a larger cached block serves a request (pytorch#192722
 *       made upstream count the block's size too; before, a hit counted the rounded request), kept per size class
 *       and summed, so their peaks are the sum of the
 *       classes' peaks, an upper bound rather than the true peak (upstream's own approximation, kept for
 *       fidelity); {@code num_host_alloc}/{@code num_host_free} equal {@code allocations.allocated}/{@code freed};
 *       the timings are microseconds. The common {@link io.devalloc.api.stats.AllocatorStats} are exact:
 *       allocated bytes count the device bytes of live blocks, reserved bytes every block's device allocation plus
 *       the whole reserve segment.</li>
 *   <li><b>Snapshot</b>: one segment per device allocation: pool {@code pinned} for a block's own allocation (its
 *       one block is the whole segment, {@code ALLOCATED}, {@code PENDING_FREE} while events are outstanding, or
 *       {@code FREE}), pool {@code pinned_reserve} for the reserve segment (its pieces, then its unused tail as one
 *       free block).</li>
 *   <li><b>Threads.</b> One {@link java.util.concurrent.locks.ReentrantLock} (the base class's) guards the
 *       allocator, and device calls (malloc, free, event record and query) run under it. Upstream uses a mutex per
 *       free list, one for the block set and one for the event queue, and never holds one across
 *       {@code cudaHostAlloc}; one lock is simpler to
 *       get right and makes every current figure exact, at the cost that concurrent misses wait for each other (the
 *       CUDA driver serialises {@code cudaHostAlloc} on a global lock anyway).</li>
 *   <li><b>Objects.</b> A {@code Block} object is created per device allocation (on a miss) only. Hits, frees
 *       without recorded streams and address look-ups (a primitive {@code long}&rarr;{@code int} hash map) create
 *       none once the free list of their size exists; a free with recorded streams allocates a little (the events
 *       it records), as it makes device calls anyway.</li>
 * </ul>
 *
 * <h2>Beyond upstream: pytorch/pytorch#150517</h2>
 * Rounding every pinned buffer up to a power of two can nearly double page-locked RAM: a 20.4 GiB buffer takes
 * 32 GiB, and locked RAM cannot be swapped. {@code pinned_round_threshold_mb:T} keeps power-of-two classes only where
 * the power is at most T MiB and rounds larger requests up to a multiple of 2 MiB, so a large buffer wastes less than
 * 2 MiB. The cost is reuse: a cached 22 MiB block still serves any request from 20 MiB + 1 B to 22 MiB, but no longer
 * a 23 MiB one that the 32 MiB power-of-two class would have served. Default 0 keeps PyTorch's behaviour.
 *
 * <h2>PyTorch 2.10&ndash;2.13: {@code pinned_max_round_threshold_mb} and {@code pinned_max_cached_size_mb}</h2>
 * Both are read as upstream's {@code AcceleratorAllocatorConfig} reads them (whole MiB, clamped to
 * {@code Long.MAX_VALUE / 1 MiB}, 0 allowed, unlimited by default), and both act as in upstream's
 * {@code CachingHostAllocatorImpl}:
 * <ul>
 *   <li>{@code pinned_max_round_threshold_mb:T} (pytorch#171662): a request of more than T MiB is not rounded; its
 *       block is exactly the request (threshold 64: 80 MiB pins 80 MiB, not 128). Upstream passes the exact size to
 *       {@code cudaHostAlloc}, which takes any size; the device port takes any size too and aligns the address, and
 *       a pinned block has no neighbour to align for, so nothing is added. (A {@code kHostAlignment = 512} that a
 *       third-party test mentions could not be found in any PyTorch source we could read.) Pieces of the reserve
 *       segment keep their 4 KiB extent rounding.</li>
 *   <li>{@code pinned_max_cached_size_mb:C}: upstream's {@code maybe_cache_block}. A freed block of more than C MiB
 *       goes back to the device instead of its free list, when it would become reusable: at the free when no
 *       stream was recorded, else when its last event has completed, which the next allocation or
 *       {@code emptyCache} notices (the events are processed there, never on a timer). It is a host free:
 *       {@code allocations}/{@code allocated_bytes} fall, {@code num_host_free} and {@code host_free_time} grow
 *       (limit 32: a 64 MiB block leaves {@code allocated_bytes.current} at 0 right after the free). A request of
 *       more than C MiB is never rounded, even below T: upstream rounds only when the request is at most both. When
 *       both are given and T &gt; C, upstream's precedence warning is logged. 0 caches nothing.</li>
 *   <li><b>devalloc's {@code pinned_round_threshold_mb}</b> predates them and answers the same issue
 *       (pytorch#150517) differently: above its threshold it rounds to a multiple of 2 MiB, so nearby sizes share a
 *       class and a block is reused by exact size, at a cost of under 2 MiB per buffer; PyTorch's key wastes
 *       nothing at allocation but reuses through the bucket scan, where a request can take a cached block up to
 *       twice its size. Both decide the size above a threshold, so a non-zero {@code pinned_round_threshold_mb}
 *       together with {@code pinned_max_round_threshold_mb} is refused with a message saying which to keep.
 *       {@code pinned_max_cached_size_mb} combines with either: above it nothing is rounded and nothing cached.</li>
 * </ul>
 *
 * <h2>Differences from PyTorch, and why</h2>
 * <ul>
 *   <li>No stream per block: {@code malloc}'s stream argument is ignored (PyTorch's host allocator has none).</li>
 *   <li>{@code recordEvent} finds blocks by exact address only (PyTorch also by its allocation context), and answers
 *       false for a block that is not handed out (PyTorch asserts).</li>
 *   <li>A refused device malloc is retried once after returning the idle cached blocks to the device (PyTorch
 *       throws at once); counted in {@code allocationRetries}. Requests larger than the device, or than
 *       2<sup>62</sup> bytes, are refused before any device call.</li>
 *   <li>{@code emptyCache} keeps the reserve segment's pieces on their free lists. PyTorch removes them from its lists
 *       without freeing them, so it can never hand out that part of the reserve again. For the same reason a freed
 *       reserve piece larger than {@code pinned_max_cached_size_mb} stays cached: upstream's
 *       {@code maybe_cache_block} drops it from its lists and counts a host free, but its {@code free_block} returns
 *       early for reserve pieces, so that part of the reserve would be lost; here it is neither freed nor counted as
 *       freed, and serves later requests.</li>
 *   <li>If the device refuses to free a block above {@code pinned_max_cached_size_mb}, the free still succeeds: the
 *       block is cached instead (logged at WARN), and {@code emptyCache} tries again and reports the failure.
 *       Upstream lets the exception escape {@code free()} (or swallows it with {@code pinned_free_catch_all}).</li>
 *   <li>The precedence warning of the {@code pinned_max_*} keys is logged once per parse (upstream's
 *       {@code TORCH_WARN_ONCE}: once per process). Their values must be ASCII digits: upstream's {@code stoull}
 *       would also take {@code -1} and wrap it to {@code SIZE_MAX}.</li>
 *   <li>{@code active_requests}/{@code active_bytes} decrease whenever a block goes back on its free list, on both
 *       paths. (In an older upstream version we read, the free path without events does not decrease them, and the
 *       event path decreases {@code active_bytes} by the {@code -1} size argument of {@code process_events}; the
 *       2026 version does it in {@code maybe_cache_block}, on both paths and by the block's size, as here.)</li>
 *   <li>{@code pinned_use_background_threads} is accepted and has no effect: allocation processes events itself.
 *       {@code pinned_use_cuda_host_register:True} is refused (the device decides how memory is pinned);
 *       {@code pinned_num_register_threads} is validated and has no effect. Blocks allocated during CUDA graph
 *       capture and per-MemPool host pools do not exist here.</li>
 *   <li>Bad frees throw {@link io.devalloc.api.error.InvalidFreeException} and change nothing; {@code close} returns
 *       every block, live or cached, and the reserve segment to the device.</li>
 * </ul>
 */
package io.devalloc.caching.host;
