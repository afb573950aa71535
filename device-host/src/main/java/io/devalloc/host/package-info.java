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
 * <p><b>Seams.</b> All libc calls go through the package-private {@code NativeMemoryCalls}, implemented once with
 * FFM; tests substitute a mock to make {@code mlock} fail, which cannot happen on a machine running as root.
 * Providers link libc in their probe, catching every failure including {@link LinkageError}, so a JVM without
 * FFM access or without these symbols only sees the providers as unavailable.
 *
 * <p><b>Threads.</b> Every type here is thread-safe. A device guards its allocation table, counters and stream
 * and event handles with one lock and makes its native calls under it, so closing cannot race an allocation in
 * progress; providers probe once under a monitor and publish the answer through a volatile field. Host memory
 * is synchronous, so streams and events are validated handles and every event is complete.
 */
package io.devalloc.host;
