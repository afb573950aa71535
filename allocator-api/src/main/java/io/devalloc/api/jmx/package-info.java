/**
 * devalloc's JMX bean: one {@link io.devalloc.api.jmx.AllocatorMXBean} per allocator, registered with the platform
 * MBean server as {@code io.devalloc:type=Allocator,name=NAME} when the allocator is built with
 * {@code DeviceAllocators.builder().name(NAME).registerMXBean(true)} (or, without code, {@code -Ddevalloc.jmx=true}
 * with {@code -Ddevalloc.name=NAME}; see {@link io.devalloc.api.observe.ObservabilitySettings}), and unregistered
 * when the allocator is closed. Seen in {@code jconsole}'s MBeans tab, JDK Mission Control, or any JMX exporter.
 *
 * <p><b>Names.</b> The name is the user's (stable across runs, as HikariCP's pool name); a name already registered
 * is refused with a message that says to choose another, and nothing is left registered or open. Names with
 * characters an ObjectName value cannot hold bare are quoted.
 *
 * <p><b>memorySummary.</b> {@code allocator-api} cannot see {@code caching}'s classes, so the bean asks for a
 * capability, {@link io.devalloc.api.spi.MemorySummary}, through {@code unwrap} (which reaches through every
 * decorator): {@code caching} has one (PyTorch's {@code memory_summary()}); for the others the bean prints the
 * figures every allocator has ({@code stats()} and the per-pool gauges of {@code memoryUsage()}).
 */
package io.devalloc.api.jmx;
