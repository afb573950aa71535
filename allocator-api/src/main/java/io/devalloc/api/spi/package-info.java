/**
 * The plug-in SPI, found with {@link java.util.ServiceLoader}: {@link io.devalloc.api.spi.DeviceMemoryProvider}
 * (name, priority, an availability probe that never throws, device count, open) and
 * {@link io.devalloc.api.spi.AllocatorProvider} (name, configuration schema, create, and the part of the
 * configuration taken from environment variables as {@link io.devalloc.api.spi.EnvironmentConfig}). The shape
 * follows gRPC's provider registries: cheap constructors, explicit priority, availability with a reason.
 */
package io.devalloc.api.spi;
