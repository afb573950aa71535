/** The common {@link io.devalloc.api.stats.AllocatorStats} record that every allocator fills in. */
package io.devalloc.api.stats;
