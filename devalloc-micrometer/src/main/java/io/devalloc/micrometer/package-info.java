/**
 * Micrometer meters for a devalloc allocator, named as Micrometer's own binders name theirs
 * ({@code NettyAllocatorMetrics}' {@code netty.allocator.memory.used}, {@code JvmMemoryMetrics}'
 * {@code jvm.memory.used}/{@code jvm.memory.max}): lower-case dot-separated names under {@code devalloc.}, the base
 * unit ({@code bytes}, {@code seconds}) left to the registry's naming convention to append, and what distinguishes one
 * time series from another in tags ({@code allocator}, {@code device}, {@code pool}, {@code op}, {@code outcome},
 * {@code cause}).
 *
 * <p><b>Design.</b> Two kinds of meter, as the observability SPI splits them
 * ({@link io.devalloc.api.observe}):
 * <ul>
 *   <li><em>Gauges</em> are read from the allocator when the registry publishes:
 *       {@link io.devalloc.api.DeviceAllocator#memoryUsage()} for the five memory figures of every pool,
 *       {@link io.devalloc.api.DeviceAllocator#stats()} for peaks, the limit and the live allocations. Nothing is
 *       pushed per allocation. The allocator is held weakly (Micrometer's {@code Gauge} default, as its
 *       {@code NettyAllocatorMetrics} holds Netty's allocator), so a registry never keeps an allocator alive; a gauge
 *       of an allocator that was collected reads {@code NaN}, one of a closed allocator reads what
 *       {@code stats()} then says (nothing held).</li>
 *   <li><em>Counters and timers</em> are fed by an {@link io.devalloc.api.observe.AllocatorListener}. Counts are kept
 *       in the listener's own {@link java.util.concurrent.atomic.LongAdder}s and published as
 *       {@code FunctionCounter}s: a device call costs an adder increment and a timer record, never a registry
 *       lookup, and calls made before the binder is bound (a {@code bfc} allocator built with
 *       {@code allow_growth:false} reserves its whole region when it is built) are counted all the same. Timers
 *       are real Micrometer {@code Timer}s (count, total, max; histograms when the application's
 *       {@code MeterFilter} asks), registered when the binder is bound: they time the calls made from then on.</li>
 * </ul>
 */
package io.devalloc.micrometer;
