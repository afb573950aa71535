/**
 * What devalloc's own modules share and applications never name: provider discovery and device-spec resolution
 * ({@link io.devalloc.api.internal.DeviceRegistry}, {@link io.devalloc.api.internal.AllocatorRegistry},
 * {@link io.devalloc.api.internal.DeviceSpec}), the argument checks every allocator makes
 * ({@link io.devalloc.api.internal.AllocationRequest}), a primitive hash map for hot paths
 * ({@link io.devalloc.api.internal.LongLongHashMap}), a primitive ordered set of handles, the free-block pools'
 * and bins of the algorithms and the simulator's free ranges ({@link io.devalloc.api.internal.OrderedHandleSet}:
 * a B+-tree of 32-entry nodes in one {@code long[]}, whose cost grows little from a thousand to a million elements,
 * where the red-black tree it replaced lost six times and more to cache misses; see its javadoc), and the
 * close-with-the-first-failure helper
 * ({@link io.devalloc.api.internal.Failures}).
 *
 * <p>Like Netty's {@code io.netty.util.internal}: the module descriptor exports this package only to devalloc's
 * modules, and an architecture test keeps class-path users honest. Nothing here is a stable API.
 */
package io.devalloc.api.internal;
