/**
 * PyTorch's pinned-host caching allocator ({@code at::CachingHostAllocator}, the allocator behind
 * {@code pin_memory()}) over the {@link io.devalloc.api.device.DeviceMemory} port: allocator {@code caching-host}.
 * Like the rest of {@code allocator-caching} it imports nothing but {@code allocator-api} (and slf4j).
 *
 * <h2>Design</h2>
 * <ul>
 *   <li><b>Sizes.</b> A request is rounded up to the next power of two ({@code c10::llvm::PowerOf2Ceil}: 40,960 B
 *       &rarr; 65,536 B) and served by a block of exactly that size. Blocks are never split and never merged: one
 *       block is one device allocation (the device plays {@code cudaHostAlloc}), or one piece of the reserve
 *       segment. A size of 0 returns address 0 and changes no stats.</li>
 *   <li><b>Free lists.</b> 64 last-in-first-out lists indexed by log2 of the size; a hit pops the block freed most
 *       recently, which is the one most likely to be warm in cache and TLB. With {@code pinned_round_threshold_mb}
 *       sizes above the threshold are multiples of 2 MiB rather than powers of two; their free lists are kept in a
 *       sorted array of exact sizes, each with its own LIFO stack, while the 64 power-of-two lists serve the sizes
 *       below. A lookup is an exact-size match either way, so a block only ever serves requests that round to its
 *       own size.</li>
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
 *       blocks handed out and not yet reusable, kept per size class and summed, so their peaks are the sum of the
 *       classes' peaks, an upper bound rather than the true peak (upstream's own approximation, kept for
 *       fidelity); {@code num_host_alloc}/{@code num_host_free} equal {@code allocations.allocated}/{@code freed};
 *       the timings are microseconds. The common {@link io.devalloc.api.stats.AllocatorStats} are exact:
 *       allocated bytes count the device bytes of live blocks, reserved bytes every block's device allocation plus
 *       the whole reserve segment.</li>
 *   <li><b>Snapshot</b>: one segment per device allocation: pool {@code pinned} for a block's own allocation (its
 *       one block is the whole segment, {@code ALLOCATED}, {@code PENDING_FREE} while events are outstanding, or
 *       {@code FREE}), pool {@code pinned_reserve} for the reserve segment (its pieces, then its unused tail as one
 *       free block).</li>
 *   <li><b>Threads.</b> One {@link java.util.concurrent.locks.ReentrantLock} guards the allocator, and device calls
 *       (malloc, free, event record and query) run under it. Upstream uses a mutex per free list, one for the block
 *       set and one for the event queue, and never holds one across {@code cudaHostAlloc}; one lock is simpler to
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
 * <h2>Differences from PyTorch, and why</h2>
 * <ul>
 *   <li>No stream per block: {@code malloc}'s stream argument is ignored (PyTorch's host allocator has none).</li>
 *   <li>{@code recordEvent} finds blocks by exact address only (PyTorch also by its allocation context), and answers
 *       false for a block that is not handed out (PyTorch asserts).</li>
 *   <li>A refused device malloc is retried once after returning the idle cached blocks to the device (PyTorch
 *       throws at once); counted in {@code allocationRetries}. Requests larger than the device, or than
 *       2<sup>62</sup> bytes, are refused before any device call.</li>
 *   <li>{@code emptyCache} keeps the reserve segment's pieces on their free lists. PyTorch removes them from its lists
 *       without freeing them, so it can never hand out that part of the reserve again.</li>
 *   <li>{@code active_requests}/{@code active_bytes} decrease whenever a block goes back on its free list, on both
 *       paths. (In the upstream version we read, the free path without events does not decrease them, and the event
 *       path decreases {@code active_bytes} by the {@code -1} size argument of {@code process_events}; both look like
 *       slips, and the stats' documented meaning is what is implemented.)</li>
 *   <li>{@code pinned_use_background_threads} is accepted and has no effect: allocation processes events itself.
 *       {@code pinned_use_cuda_host_register:True} is refused (the device decides how memory is pinned);
 *       {@code pinned_num_register_threads} is validated and has no effect. Blocks allocated during CUDA graph
 *       capture and per-MemPool host pools do not exist here.</li>
 *   <li>Bad frees throw {@link io.devalloc.api.error.InvalidFreeException} and change nothing; {@code close} returns
 *       every block, live or cached, and the reserve segment to the device.</li>
 * </ul>
 */
package io.devalloc.caching.host;
