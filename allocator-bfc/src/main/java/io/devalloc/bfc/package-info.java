/**
 * TensorFlow's BFC ("best fit with coalescing") allocator over the {@link io.devalloc.api.device.DeviceMemory}
 * port: allocator {@code bfc}. It imports nothing but {@code allocator-api}.
 *
 * <h2>Design</h2>
 * <ul>
 *   <li><b>Arena.</b> {@code BfcArena} follows {@code tsl::BFCAllocator} step for step: requests rounded to 256 B,
 *       21 bins of free chunks ordered by (size, address), best fit from the request's bin upwards, the split rule
 *       (at least twice the request, or a leftover of at least 128 MiB or {@code fragmentation_fraction} of the
 *       limit), immediate coalescing with both neighbours on free, {@code Extend} with growth by doubling or one
 *       region of the whole limit taken at the first allocation, back-pedalling by ×0.9 when the device refuses,
 *       region garbage collection, and the retry wait woken by every free.</li>
 *   <li><b>No object per chunk.</b> Chunks are columns of primitive arrays indexed by handle ({@code ChunkTable}),
 *       as TensorFlow keeps them in a vector; each bin is a B-tree of handles over primitive arrays
 *       ({@code OrderedHandleSet}, where TensorFlow has a {@code std::set}), O(log n) however many chunks it holds,
 *       with a bitmap of non-empty bins ({@code Bins}), so finding the first candidate bin is one instruction and
 *       allocate/free on the raw path create no Java objects. (Timestamped mode is the exception: each free records
 *       a device event and queues a small record.)</li>
 *   <li><b>Regions</b> come from a {@code RegionSource}: plain device mallocs (regions never coalesce, like
 *       {@code DeviceMemAllocator}: the default, because TensorFlow's GPU BFC always runs over it; the
 *       {@code GpuVirtualMemAllocator} branch of {@code gpu_process_state.cc}'s {@code CreateSubAllocator} is
 *       compiled out with {@code #if 0}, "Observed OOM issues when using the virtual memory allocators") or, with
 *       {@code virtual_memory:true} (or {@code auto} on a device that offers it), the device's virtual memory (one
 *       reservation of the whole limit, made when the arena is created as {@code GpuVirtualMemAllocator::Create}
 *       makes it, so that a limit the device cannot reserve is an
 *       {@link io.devalloc.api.error.InvalidConfigurationException} at creation; mapped from its start, so new
 *       regions continue the last one and coalesce,
 *       like {@code GpuVirtualMemAllocator}; each extension is mapped as one piece, one {@code cuMemCreate} handle on
 *       CUDA as upstream, and only whole regions are ever unmapped).</li>
 *   <li><b>Threads.</b> One lock guards the arena and the device calls run under it, as upstream. Retry waits
 *       happen outside it on a separate condition that every free and every frontier advance signals while a
 *       thread waits to retry. With nobody waiting, a free touches nothing but the arena's lock (no atomic counter
 *       of its own): a thread that starts to wait announces itself before its next attempt takes the lock, so a
 *       free that saw nobody waiting has already released the lock, and that attempt sees the freed memory.</li>
 *   <li><b>The cached pair's hot path</b> (2026-11-26, issue 13): an allocate+free of a cached size takes the lock
 *       twice and makes no other atomic operation, and the best-fit walk removes the chunk it chose by the tree
 *       node it stands on instead of searching its bin again. Both keep every figure, message and snapshot.</li>
 *   <li><b>Where things are.</b> {@code BfcArena} is the algorithm. What every allocator repeats (argument checks,
 *       the null allocation of size 0, the check that it is open, the lock, the free path's lookup and checks, the
 *       listener and the timing of cache releases, and a close that returns every region past device failures,
 *       closes an owned device last and throws the first failure with the others suppressed) is
 *       {@link io.devalloc.api.spi.AbstractDeviceAllocator}'s; the arena answers its hooks (the chunk at an
 *       address, {@code DeallocateRawInternal}, waking the allocations that wait for frees). {@code BfcArenaDumps}
 *       writes the arena's state out: the memory log ({@code DumpMemoryLog}), the memory dump
 *       ({@code RecordMemoryMap}), the occupancy map ({@code RenderOccupancy}), the snapshot, the out-of-memory log
 *       and the out-of-memory error; TensorFlow keeps these in {@code BFCAllocator} itself, devalloc keeps them
 *       apart from the algorithm, and {@code MemoryLogFormat} holds their text formats. The structural invariant
 *       checks live with the tests ({@code BfcArenaInvariants}), not in the arena.</li>
 * </ul>
 *
 * <h2>Deliberate deviations from TensorFlow, and why</h2>
 * <ul>
 *   <li>Address lookup uses a hash map of chunk starts instead of a handle table with one slot per 256 B per
 *       region: TensorFlow's table would take 1.3 GB of heap for one 80 GiB region. Both are O(1).</li>
 *   <li>A bad, interior or double free throws {@link io.devalloc.api.error.InvalidFreeException} and changes
 *       nothing; TensorFlow aborts the process.</li>
 *   <li>A request larger than the memory limit fails at once; TensorFlow waits its 10 s retry first, although no
 *       free can help.</li>
 *   <li>Timestamped mode ({@code timestamped:true}) is driven by device events instead of an external timing
 *       counter: each free takes the next count and records an event on the allocation's stream (and on every
 *       stream given to {@code recordStream}); the safe frontier advances over frees whose events completed. Memory
 *       freed on a stream is reused at once by that same stream (its work is ordered), and by other streams only
 *       past the frontier. Where TensorFlow force-merges chunks a stream may still read (a caller with
 *       {@code freed_before == 0}), devalloc waits for the pending frees' events instead, as PyTorch does: it never
 *       hands out memory that queued work may still touch. Garbage collection skips regions with pending frees.
 *       {@code recordStream} refuses a stream the device does not have
 *       ({@link io.devalloc.api.error.UnknownStreamException}, in every mode); a stream destroyed after the
 *       allocation or its {@code recordStream} gets no event at the free, which synchronises the device instead
 *       (the free's count then becomes safe with the next count whose events complete).</li>
 *   <li>Back-pedalling and alignment follow current XLA, not classic TensorFlow: back-pedal on every failing
 *       extension and step down by 256 B when rounding undoes the 10% (so it always terminates); alignments above
 *       256 B are honoured by splitting off an aligned prefix.</li>
 *   <li>{@link io.devalloc.api.DeviceAllocator#releaseCachedMemory()} frees wholly unused regions even when garbage
 *       collection is off; TensorFlow never returns memory before exit (tensorflow#1578, #19571, #36627).</li>
 *   <li>{@link io.devalloc.bfc.BfcAllocator#clearStats()} is upstream's {@code ClearStats};
 *       {@link io.devalloc.api.DeviceAllocator#resetPeakStats()} also resets the pool peak, as the common contract
 *       asks. {@code largestFreeBlockBytes} follows current XLA (classic left it 0).</li>
 *   <li>{@code virtual_memory:true} and {@code auto} offer TensorFlow's compiled-out {@code GpuVirtualMemAllocator}
 *       path (coalescing regions) as an opt-in; the default, {@code false}, is what TensorFlow runs.</li>
 *   <li>The default memory limit is the device's total; TensorFlow takes the available memory minus a reserve
 *       (225 MiB to 1.8 GiB depending on the GPU), which an application can give as {@code memory_limit_mb}.</li>
 *   <li>The out-of-memory exception says whether the failure is fragmentation (enough free bytes in total, no
 *       chunk large enough) or exhaustion, with the largest free chunk and the total free bytes; TensorFlow only
 *       logs a dump. The dump's stats block adds the pool figures.</li>
 * </ul>
 */
package io.devalloc.bfc;
