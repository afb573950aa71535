/**
 * Primitive collections for hot paths, shared by devalloc's own modules: a {@code long}→{@code long} hash map
 * ({@link io.devalloc.api.collect.LongLongHashMap}) and an ordered set of {@code int} handles
 * ({@link io.devalloc.api.collect.OrderedHandleSet}: a B+-tree of 32-entry nodes in one {@code long[]}, whose cost
 * grows little from a thousand to a million elements, where the red-black tree it replaced lost six times and more
 * to cache misses; see its javadoc), for the free-block pools and bins of the algorithms, the simulator's free
 * ranges and the offline plan; and, for bfc and caching, the streams recorded per chunk or block
 * ({@link io.devalloc.api.collect.HandleStreams}). The module descriptor exports this package only to devalloc's
 * modules that use it; nothing here is a stable API.
 */
package io.devalloc.api.collect;

