/**
 * NVIDIA GPUs as devices, through JCuda 12.6: the {@code cuda} provider (GPU memory from {@code cudaMalloc}, with
 * CUDA's virtual-memory API for expandable segments) and the {@code cuda-host} provider (pinned host memory from
 * {@code cudaHostAlloc} with the portable flag).
 *
 * <h2>Design</h2>
 * <ul>
 *   <li><b>One seam.</b> Every CUDA call goes through the package-private {@code CudaApi}: one method per runtime
 *       or driver call, plain {@code long} addresses and handle ids, {@code int} error codes, results through
 *       one-element arrays, as in C. {@code JCudaApi} implements it 1:1 over {@code jcuda.runtime.JCuda} and
 *       {@code jcuda.driver.JCudaDriver}, with no logic beyond turning ids into JCuda's stream, event and
 *       physical-memory objects (kept in tables) and raw addresses into {@code jcuda.Pointer} subclasses that can
 *       read and write them. All of the adapter's own logic lives in {@link io.devalloc.cuda.CudaDeviceMemory},
 *       {@code CudaVirtualMemory} and {@code CudaAvailability}, and is tested against a Mockito mock and an
 *       in-memory fake of {@code CudaApi} on machines without a GPU.</li>
 *   <li><b>A probe that cannot break the JVM.</b> {@code CudaAvailability} first asks, through
 *       {@code java.lang.foreign} and without loading any JCuda class, whether {@code libcuda.so.1} loads. Only if
 *       it does is JCuda touched, and then only its runtime API ({@code cudaGetDeviceCount}; JCuda links the CUDA
 *       runtime statically), with {@link java.lang.LinkageError} caught. The driver API ({@code JCudaDriver}) is
 *       never touched without the driver library: that class fails in its static initialiser and then stays
 *       unusable for the JVM's life. Error 35 ({@code cudaErrorInsufficientDriver}) reads "no NVIDIA driver",
 *       100 ({@code cudaErrorNoDevice}) "no CUDA device". The answer, with the reason, is cached once per JVM and
 *       shared by both providers, whose constructors do nothing.</li>
 *   <li><b>Current device.</b> Every call that reaches CUDA first makes the device current on the calling thread
 *       ({@code cudaSetDevice}), so an allocator used from any thread allocates on the GPU it was opened for. One
 *       guard in {@link io.devalloc.cuda.CudaDeviceMemory} does the entering (a shared lock that close takes
 *       exclusively), the checks of events and streams, the switch, the call and the check of its code; the call
 *       is a {@code CudaCall} lambda that captures nothing, so the event calls an allocator makes on its free path
 *       allocate nothing for it. {@code malloc}, {@code free} and the calls that change the handle tables are
 *       written out inside the same guard's scope, because their own checks or bookkeeping must sit between its
 *       steps.</li>
 *   <li><b>Errors.</b> {@code cudaErrorMemoryAllocation} (2) is "not enough memory": {@code malloc} returns 0 and
 *       the thread's last error is cleared, as PyTorch does; likewise {@code CUDA_ERROR_OUT_OF_MEMORY} from
 *       {@code cuMemCreate} or {@code cuMemAddressReserve} makes {@code map} return false and {@code reserve} 0.
 *       {@code cudaErrorNotReady} (600) from {@code cudaEventQuery} means "not complete yet". Every other code is
 *       a {@link io.devalloc.api.error.DeviceException} naming the call, the device, the code's name and CUDA's
 *       description. JCuda's global exceptions flag is never set; if another library sets it, {@code JCudaApi}
 *       turns the {@code CudaException}s back into codes, so event queries keep working.</li>
 *   <li><b>Bookkeeping before CUDA.</b> Live allocations, streams, events, reservations and mapped ranges are
 *       tracked; an unknown address is an {@link io.devalloc.api.error.InvalidFreeException} and an unknown stream
 *       or event an {@link java.lang.IllegalArgumentException}, both without calling CUDA, whose behaviour on
 *       stale pointers and handles is undefined.</li>
 *   <li><b>Streams and events.</b> Streams are created non-blocking ({@code cudaStreamNonBlocking}), events with
 *       timing disabled ({@code cudaEventDisableTiming}), the cheap kind that allocators record.</li>
 *   <li><b>Virtual memory.</b> On GPUs that report {@code CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED}:
 *       reserve is {@code cuMemAddressReserve}; map is, as in PyTorch's {@code ExpandableSegment::map}, one
 *       {@code cuMemCreate} and one {@code cuMemMap} per piece (the piece size is the caller's: PyTorch's page of
 *       2 MiB or 20 MiB for the caching allocator, the whole region for BFC, one granule for the two-argument
 *       {@code map}), then one {@code cuMemSetAccess} (read-write for this device) over the whole range, with
 *       exactly what the call did undone if a step fails; unmap is {@code cuMemUnmap} + {@code cuMemRelease} per
 *       piece; release is {@code cuMemAddressFree}; the granule is {@code cuMemGetAllocationGranularity} with the
 *       minimum flag. Because every piece has its own physical handle, an unmap may be any range of whole pieces,
 *       whether they are some of one {@code map} call's pieces or span several calls (CUDA itself cannot unmap part
 *       of one {@code cuMemMap} range, nor free part of one handle); a range that cuts a piece is refused before
 *       the driver is called. The cost is driver calls per piece, 2n + 1 to map n pieces and 2n to unmap them:
 *       PyTorch's own count with its 20 MiB pages (a 600 MiB map is 61 calls), and 3 calls for a BFC region of any
 *       size. The handles and piece extents are kept in a {@code long[]} and an {@code int[]} per reservation,
 *       indexed by granule.</li>
 *   <li><b>Close.</b> Closing synchronises the device, unmaps and releases virtual memory, frees every live
 *       allocation, destroys events and streams, carries on past failures and throws the first one with the others
 *       suppressed. It waits for calls in flight (they hold a shared lock that close takes exclusively); every
 *       later call throws {@link java.lang.IllegalStateException}.</li>
 * </ul>
 *
 * <h2>Running it</h2>
 * The natives for linux-x86_64 come with the {@code jcuda-natives} dependency (the CUDA 12 runtime, statically
 * linked); a GPU machine needs only an NVIDIA driver for CUDA 12 or later. JDK 25 prints a native-access warning
 * unless the JVM runs with {@code --enable-native-access=ALL-UNNAMED}. The tests that need a GPU
 * ({@code CudaGpuIntegrationTest}) skip themselves, saying why, where there is none; they have not been run on a GPU
 * in this project's CI.
 */
package io.devalloc.cuda;
