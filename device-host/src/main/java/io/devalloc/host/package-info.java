/**
 * Host memory as a device: the {@code host} and {@code pinned-host} providers.
 *
 * <p><b>Why FFM downcalls to libc, not {@code Arena.allocate}.</b> Memory comes from {@code posix_memalign} and
 * goes back with {@code free}, called through {@code java.lang.foreign} ({@link java.lang.foreign.Linker}); no JNI
 * library is built or shipped. {@code Arena.allocate} would be simpler but it zero-fills, which touches every page:
 * a 1 GiB allocation would cost a full pass over memory and commit all of it at once. A device malloc must behave
 * like {@code cudaMalloc} or {@code malloc}, cheap and lazy, or every allocator benchmark on host memory measures
 * {@code memset}. Arenas also tie lifetime to a scope, while allocators free addresses individually in any order.
 *
 * <p><b>Capacity accounting.</b> A device has a fixed capacity: the machine's {@code MemTotal} from
 * {@code /proc/meminfo}, or the size in the spec ({@code host:8GiB}). Bytes in use count every allocation rounded
 * up to the device's alignment (256 bytes, like {@code cudaMalloc}; a page for pinned memory), and
 * {@code malloc} returns 0 when an allocation would take them above the capacity, or when libc itself has no
 * memory, so that allocators meet a device of known size that runs out deterministically, as a GPU does. The
 * arithmetic cannot overflow: rounding goes through {@link io.devalloc.api.units.ByteSize#roundUp}, which reports
 * overflow, and the check is {@code rounded > capacity - inUse}. {@code memoryInfo()} reports this device's own
 * accounting ({@code capacity - inUse} free), not the machine's free memory.
 *
 * <p><b>Pinning.</b> A pinned device {@code mlock}s each allocation right after allocating it (which also faults
 * its pages in) and {@code munlock}s it before freeing it. Locks work on whole pages and are not reference
 * counted, so pinned allocations are page-aligned and page-rounded: two allocations never share a page, and
 * unlocking one cannot unlock part of another. The kernel refuses {@code mlock} with {@code ENOMEM} when the
 * process would exceed {@code RLIMIT_MEMLOCK} (often 8 MiB) and with {@code EPERM} when that limit is 0, unless
 * the process has {@code CAP_IPC_LOCK}. A refusal frees the memory again, leaves the device unchanged, and throws
 * a {@link io.devalloc.api.error.DeviceException} that names the errno, the soft and hard limits, what the device
 * has locked already and every usual way to raise the limit ({@code ulimit -l}, {@code limits.conf},
 * {@code LimitMEMLOCK=}, {@code docker --ulimit memlock}, {@code CAP_IPC_LOCK}). It is an exception rather than a
 * 0 from {@code malloc} because it is a setup problem that freeing cached memory will not cure. The provider's
 * probe locks one page to tell whether pinning works at all, and states the limit in its reason.
 *
 * <p><b>Virtual memory.</b> Both devices offer {@code virtualMemory()} (CUDA's VMM API, which PyTorch's expandable
 * segments and TensorFlow's region coalescing need) on real kernel virtual memory, in package-private
 * {@code HostVirtualMemory}:
 * <ul>
 *   <li><i>reserve</i> is {@code mmap(NULL, size, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0)}:
 *       address space with no memory behind it, not charged to the commit limit, so an allocator can reserve more
 *       than the device holds ({@code MAP_FAILED} is "no address space", a 0);</li>
 *   <li><i>map</i> is {@code mprotect(PROT_READ | PROT_WRITE)} on whole granules; it charges the device's capacity
 *       like {@code malloc} and returns false, changing nothing, when the granules do not fit (or the kernel answers
 *       {@code ENOMEM});</li>
 *   <li><i>unmap</i> is {@code madvise(MADV_DONTNEED)}, which hands the pages back to the system at once (private
 *       anonymous pages read zero when touched again), then {@code mprotect(PROT_NONE)};</li>
 *   <li><i>release</i> is {@code munmap} of the whole reservation, refused while any granule is mapped.</li>
 * </ul>
 * The granularity is 2 MiB, a GPU's, so that allocators round and split exactly as on a GPU; {@code mmap} only
 * aligns to a page, so a reservation maps one granule more and unmaps the slack at both ends. The device keeps
 * the reservations in a sorted map (base → size, a {@link java.util.BitSet} of mapped granules and one of the
 * granules where a map's pieces start), checks every argument against it before any system call (misaligned sizes
 * and addresses, ranges outside one reservation, piece sizes that are not a granule multiple dividing the range,
 * maps overlapping mapped granules, unmaps of ranges not wholly mapped or cutting a piece, releases of anything but
 * a base are all {@link IllegalArgumentException}s that change nothing; the kernel could unmap part of a piece,
 * but CUDA cannot, and the port's contract is the same on every adapter), counts mapped bytes as used in
 * {@code memoryInfo()}, gives {@code hostView} access to ranges inside mapped granules of one reservation, and unmaps
 * every reservation on {@code close()}. A view is a raw pointer: touching it after its granules were unmapped or
 * released hits {@code PROT_NONE} or unmapped pages and crashes the JVM, as a use-after-free would. On plain host
 * memory a mapped granule takes RAM only when touched, as malloc'd memory does; the capacity is bookkeeping, as for
 * {@code malloc}. A pinned device also {@code mlock}s granules as it maps them (which faults them in) and
 * {@code munlock}s them before the {@code madvise}, which the kernel refuses on locked pages; a refused
 * {@code mlock} undoes the map and throws the same explained
 * {@link io.devalloc.api.error.DeviceException} as a refused pinned malloc. Locking one granule takes a quarter
 * of the common 8 MiB {@code RLIMIT_MEMLOCK}, so without {@code CAP_IPC_LOCK} pinned virtual memory is only good
 * for a few granules. The {@code mmap} flag values differ between architectures, so virtual memory is offered on
 * Linux on x86-64, arm64, riscv64, s390x, loongarch64 and ppc64, and {@code virtualMemory()} is empty elsewhere.
 *
 * <p><b>Seams.</b> All libc calls go through the package-private {@code NativeMemoryCalls}, implemented once with
 * FFM; tests substitute a mock to make {@code mlock}, {@code mprotect}, {@code madvise} or {@code munmap} fail,
 * which cannot happen on a machine running as root.
 * Providers link libc in their probe, catching every failure including {@link LinkageError}, so a JVM without
 * FFM access or without these symbols only sees the providers as unavailable.
 *
 * <p><b>Threads.</b> Every type here is thread-safe. A device guards its allocation table, reservations, counters
 * and stream and event handles with one lock and makes its native calls under it, so closing cannot race an
 * allocation or a map in progress; providers probe once under a monitor and publish the answer through a volatile
 * field. Host memory is synchronous, so streams and events are validated handles and every event is complete.
 */
package io.devalloc.host;
