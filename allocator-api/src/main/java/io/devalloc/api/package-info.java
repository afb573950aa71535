/**
 * devalloc's API: what applications call ({@link io.devalloc.api.DeviceAllocator}, {@link io.devalloc.api.Allocation},
 * {@link io.devalloc.api.DeviceAllocators}) and the vocabulary every module shares.
 *
 * <h2>Design</h2>
 * The project is hexagonal. This module is the core: it holds the port that algorithms call
 * ({@link io.devalloc.api.device.DeviceMemory}, one device's raw memory, streams, events and optional virtual
 * memory), the provider SPI that adapters and algorithms implement ({@link io.devalloc.api.spi}), found with
 * {@link java.util.ServiceLoader}, and the shared models: typed errors ({@link io.devalloc.api.error}), stats
 * ({@link io.devalloc.api.stats}), snapshots ({@link io.devalloc.api.snapshot}) and configuration
 * ({@link io.devalloc.api.config}, PyTorch's {@code key:value,key:value} syntax for every allocator).
 * It depends on slf4j-api only; Guice is optional and used by {@code io.devalloc.guice} alone.
 *
 * <ul>
 *   <li>Allocation algorithms ({@code direct} here, {@code bfc}, {@code caching}) depend on this module and
 *       nothing else. An architecture test enforces it.</li>
 *   <li>Device adapters ({@code device-sim}, {@code device-host}, {@code device-cuda}) implement
 *       {@link io.devalloc.api.device.DeviceMemory} and register a
 *       {@link io.devalloc.api.spi.DeviceMemoryProvider}.</li>
 *   <li>Hot paths use {@code long} addresses: {@link io.devalloc.api.DeviceAllocator#malloc(long,
 *       io.devalloc.api.device.DeviceStream)} and {@link io.devalloc.api.DeviceAllocator#free(long)} create no objects.
 *       {@link io.devalloc.api.Allocation} handles are for code that prefers try-with-resources.</li>
 *   <li>Running out of device memory is a return value at the port (0, like {@code cudaErrorMemoryAllocation}),
 *       because allocators retry around it; at the API it is an
 *       {@link io.devalloc.api.error.OutOfMemoryException} carrying the figures a user needs.</li>
 * </ul>
 */
package io.devalloc.api;
