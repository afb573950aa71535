/**
 * Replays of real PyTorch memory traces ({@code ../shared/traces}, CSV form {@code seq,action,addr,size,stream,time_us})
 * on the caching allocator, compared with what PyTorch's own allocator did.
 *
 * <h2>Replay rules</h2>
 * <ul>
 *   <li>{@code alloc}: {@code malloc(size, stream)}; the trace's address is mapped to ours. {@code free_completed}:
 *       free of the mapped address. {@code free_requested} is not replayed: PyTorch only hands a block back to its
 *       pool at {@code free_completed} (immediately, in these single-stream traces, but later when
 *       {@code record_stream} events are outstanding).</li>
 *   <li>{@code segment_alloc}, {@code segment_free}, {@code segment_map}, {@code segment_unmap}, {@code oom},
 *       {@code snapshot}: what PyTorch did; ground truth to compare with, not requests.</li>
 *   <li>Streams: trace stream 0 is the device's default stream; any other value gets a stream created on the
 *       simulated device the first time it appears.</li>
 *   <li>Device: {@link io.devalloc.sim.SimulatedDevice}, 80 GiB, 512 B granularity, address space
 *       [2 MiB, 2^47) so that the recorded addresses (about 2^35) fit; new segments come top-down, i.e. above every
 *       restored segment. Optionally the device hands out the trace's own {@code segment_alloc} addresses, in order,
 *       so that every segment sits where PyTorch's did.</li>
 *   <li>Comparison: device mallocs (sizes, order, and the alloc row during which each happened, against the alloc
 *       row following each {@code segment_alloc} row), {@code memory_stats} figures, and the placement of every
 *       block: our address, taken relative to its segment, must be PyTorch's address relative to the paired segment
 *       (a restored segment pairs with itself; our n-th new segment with the trace's n-th {@code segment_alloc}).</li>
 * </ul>
 *
 * <h2>Seeding a warm allocator from presegment/prealloc rows</h2>
 * A snapshot taken after the allocator was already in use starts with the segments and live blocks of that moment
 * ({@code presegment} and {@code prealloc} rows, written by {@code pickle_to_csv.py --prepend-segments
 * --prepend-live}). To restore them:
 * <ol>
 *   <li>Build the simulated device with {@code scriptedAddresses} = the presegment addresses, in row order, so that
 *       the next mallocs land exactly there (later mallocs fall back to the address order).</li>
 *   <li>Create the allocator with the recorded settings (here the defaults) and call
 *       {@link io.devalloc.caching.CachingAllocator#restoreSegment restoreSegment(size, stream)} for each presegment
 *       row, in order; it returns the scripted address. A 2 MiB segment goes to the small pool, any other to the
 *       large pool (PyTorch's large segments are at least 10 MiB). Each becomes one free block; reserved bytes and
 *       the segment count grow, as with a device malloc.</li>
 *   <li>Call {@link io.devalloc.caching.CachingAllocator#restoreAllocation
 *       restoreAllocation(address, blockSize, requested, stream)} for each prealloc row: it carves
 *       {@code [address, address + blockSize)} out of the free block that contains it, marks it allocated with the
 *       requested size, and leaves the parts before and after as free blocks.</li>
 *   <li>Turn history recording on afterwards ({@code recordHistory} clears it), so that it holds the window only;
 *       compare peaks with the seeding included (PyTorch's peak also counts the segments it already had).</li>
 * </ol>
 *
 * <h3>Inferring the block size</h3>
 * A prealloc row gives the requested size only. The block PyTorch made for it is {@code roundSize(requested)}
 * ({@link io.devalloc.caching.CachingOptions#roundSize}), unless {@code should_split} kept the remainder of the free
 * block it came from, in which case the block extends over that remainder. Per block, with <em>room</em> = the
 * distance to the next prealloc block of the same segment, or to the segment's end:
 * <ol>
 *   <li>Small pool (2 MiB segments): the rounded size (remainders of 512 B or more are always split, and sizes are
 *       multiples of 512).</li>
 *   <li>Large pool, room &minus; rounded &le; 1 MiB: the whole room. PyTorch would not have split that remainder off,
 *       and it cannot be a free block: every free large-pool block is larger than 1 MiB (each block is at least a
 *       rounded large request, and merging only grows blocks).</li>
 *   <li>Large pool, room &minus; rounded &gt; 1 MiB: the space after the rounded block holds a free block, possibly
 *       preceded by this block's unsplit tail (when the neighbour after it was freed later). PyTorch allocates from
 *       the low end of a free block, so if the trace's first {@code alloc} inside that space comes while this block
 *       is still live, it marks where the free block begins: a distance {@code t} past the rounded end with
 *       0 &lt; t &le; 1 MiB is the tail, and the block is rounded + t. Otherwise the rounded size.</li>
 * </ol>
 * With {@code max_split_size_mb} set, PyTorch never splits blocks of at least that size, so rule 2 gives them the
 * whole room, which is right only when no free block follows them; the traces here use the default settings. On the eight {@code pt-cs336-medium} traces rule 3 fires for 3 blocks (all in
 * {@code medium_512_training}: without it, a 4 MiB block loses its 960 KiB tail, the free block after it becomes
 * 20.94 MiB instead of 20 MiB, an 8 MiB request ties elsewhere and {@code end_allocated_bytes} is 983,040 B off).
 * With the three rules every warm trace reproduces the summary's {@code end_allocated_bytes} exactly, and the
 * allocator's end state equals the pickle's end-of-trace segments, block for block (checked once against the
 * pickles, outside these tests, which read the CSV and summary files only).
 */
package io.devalloc.caching.trace;
