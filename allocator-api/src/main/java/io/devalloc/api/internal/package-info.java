/**
 * What the modules that implement devices and allocators share and applications and tools never name: the
 * argument checks every allocator makes ({@link io.devalloc.api.internal.AllocationRequest}), the size rule of those
 * that round to one alignment ({@link io.devalloc.api.internal.AlignedSizes}), the listener and
 * out-of-memory decorators {@code DeviceAllocators.builder()} adds ({@link io.devalloc.api.internal.GuardedListener},
 * {@link io.devalloc.api.internal.ListeningDeviceMemory}, {@link io.devalloc.api.internal.ObservedAllocator},
 * {@link io.devalloc.api.internal.ThresholdWatch}), native access, the close-with-the-first-failure helper
 * ({@link io.devalloc.api.internal.Failures}), and what the device providers share: the run-once probe
 * ({@link io.devalloc.api.internal.CachedProbe}) and a virtual-memory reservation's bookkeeping of mapped pieces
 * ({@link io.devalloc.api.internal.MappedPieces}).
 *
 * <p>Like Netty's {@code io.netty.util.internal}: the module descriptor exports this package only to the modules
 * that implement devices and allocators, and an architecture test keeps class-path users honest. Nothing here is a
 * stable API.
 */
package io.devalloc.api.internal;

