package io.devalloc.micrometer;

import io.devalloc.api.DeviceAllocator;
import io.devalloc.api.observe.AllocatorListener;
import io.devalloc.api.observe.AllocatorListener.RetryCause;
import io.devalloc.api.observe.DeviceCall;
import io.devalloc.api.stats.AllocatorStats;
import io.devalloc.api.stats.PoolUsage;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tag;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.Timer;
import io.micrometer.core.instrument.binder.BaseUnits;
import io.micrometer.core.instrument.binder.MeterBinder;
import java.util.List;
import java.util.Locale;
import java.util.Objects;
import java.util.Set;
import java.util.function.ToLongFunction;

/**
 * Micrometer meters for one devalloc allocator: gauges of its memory per pool, and counters and timers of its device
 * calls, out-of-memory errors, retries and cache releases. Every meter is listed, with its unit and tags, in
 * {@code docs/observability.md}; the names are the constants of this class.
 *
 * <p><b>Wiring.</b> The counters come from an {@link AllocatorListener} that the builder must be given before the
 * allocator exists, and the gauges need the allocator; so the binder is made first, its {@link #listener()} goes to
 * the builder, and the allocator it built is bound with the registry:
 * <pre>{@code
 * DevallocMetrics metrics = DevallocMetrics.named("trainer");
 * DeviceAllocator allocator = DeviceAllocators.builder().device("cuda:0").allocator("caching")
 *         .listener(metrics.listener()).build();
 * metrics.bindTo(registry, allocator);
 * }</pre>
 * A framework that binds {@link MeterBinder} beans itself (Spring Boot) is given {@code r -> metrics.bindTo(r,
 * allocator)}. To publish to several registries, bind to a {@code CompositeMeterRegistry}.
 *
 * <p><b>Tags.</b> Every meter carries {@code allocator} (the name given here: stable across restarts, unlike the
 * hash code Micrometer's {@code NettyAllocatorMetrics} uses, so that dashboards and alerts survive a restart),
 * {@code device} (the device's id, {@code cuda:0}, {@code sim:0}) and the tags given to
 * {@link #named(String, Iterable)}; the memory gauges add {@code pool}, the device-call meters {@code op}.
 *
 * <p><b>Misuse is an error.</b> One instance measures one allocator in one registry: a second {@code bindTo}
 * (same allocator or another, same registry or another) throws {@link IllegalStateException} and registers nothing,
 * since a second allocator would add its counts to the first one's counters. Make one {@code DevallocMetrics} per
 * allocator, each with its own name. Binding an allocator that is already closed is refused too.
 *
 * <p><b>Listener-only.</b> {@link #bindTo(MeterRegistry)} registers the listener's counters and timers without
 * gauges, for a listener given to several builders (it then counts them all together) or an application that
 * takes its gauges elsewhere; its meters carry {@code device="all"}, so that a registry that wants one set of tag
 * keys per name (Prometheus) can hold them beside those of fully bound allocators.
 *
 * <p><b>Lifecycle.</b> The registry holds the allocator weakly: it keeps neither the allocator nor its memory
 * alive. After {@link DeviceAllocator#close()} the gauges read what the closed allocator reports (no memory held;
 * peaks kept), never an exception; once the allocator is garbage-collected they read {@code NaN}, which registries
 * skip. Counts made before {@code bindTo} are published (the listener counts from its creation), and so are the
 * durations of the first 1,024 calls made before it (kept until the timers exist).
 *
 * <p>Thread-safe.
 */
public final class DevallocMetrics implements MeterBinder {

    /** Gauge, bytes, tag {@code pool}: bytes held from the device ({@link PoolUsage#reservedBytes()}). */
    public static final String MEMORY_RESERVED = "devalloc.memory.reserved";
    /** Gauge, bytes, tag {@code pool}: bytes of live allocations as sized ({@link PoolUsage#allocatedBytes()}). */
    public static final String MEMORY_ALLOCATED = "devalloc.memory.allocated";
    /** Gauge, bytes, tag {@code pool}: blocks in use or awaiting a stream ({@link PoolUsage#activeBytes()}). */
    public static final String MEMORY_ACTIVE = "devalloc.memory.active";
    /** Gauge, bytes, tag {@code pool}: bytes of live allocations as asked ({@link PoolUsage#requestedBytes()}). */
    public static final String MEMORY_REQUESTED = "devalloc.memory.requested";
    /** Gauge, bytes, tag {@code pool}: free pieces of split segments ({@link PoolUsage#inactiveSplitBytes()}). */
    public static final String MEMORY_INACTIVE = "devalloc.memory.inactive";
    /** Gauge, bytes: the highest reserved bytes ({@link AllocatorStats#peakReservedBytes()}). */
    public static final String MEMORY_RESERVED_PEAK = "devalloc.memory.reserved.peak";
    /** Gauge, bytes: the highest allocated bytes ({@link AllocatorStats#peakAllocatedBytes()}). */
    public static final String MEMORY_ALLOCATED_PEAK = "devalloc.memory.allocated.peak";
    /** Gauge, bytes: the allocator's byte limit, -1 when it has none (as {@code jvm.memory.max} reports none). */
    public static final String MEMORY_LIMIT = "devalloc.memory.limit";
    /** Gauge, allocations: live allocations ({@link AllocatorStats#activeAllocations()}). */
    public static final String ALLOCATIONS_ACTIVE = "devalloc.allocations.active";
    /** Counter, tags {@code op} and {@code outcome}: device calls. */
    public static final String DEVICE_CALLS = "devalloc.device.calls";
    /** Counter, bytes, tag {@code op}: bytes the successful device calls acquired or returned. */
    public static final String DEVICE_CALL_BYTES = "devalloc.device.call.bytes";
    /** Timer, tag {@code op}: how long device calls take. */
    public static final String DEVICE_CALL_DURATION = "devalloc.device.call.duration";
    /** Counter: allocations that failed for want of memory. */
    public static final String OUT_OF_MEMORY = "devalloc.oom";
    /** Counter, tag {@code cause}: allocations tried again. */
    public static final String RETRIES = "devalloc.retries";
    /** Counter: releases of cached memory to the device. */
    public static final String CACHE_RELEASES = "devalloc.cache.releases";
    /** Counter, bytes: bytes the releases of cached memory gave back. */
    public static final String CACHE_RELEASED = "devalloc.cache.released";
    /** Timer: how long releases of cached memory take. */
    public static final String CACHE_RELEASE_DURATION = "devalloc.cache.release.duration";

    /** Tag: the name given to {@link #named}. */
    public static final String TAG_ALLOCATOR = "allocator";
    /** Tag: the device's id ({@code cuda:0}), {@code all} for a listener-only binding. */
    public static final String TAG_DEVICE = "device";
    /** Tag: {@link PoolUsage#pool()}, {@code all} for the whole allocator. */
    public static final String TAG_POOL = "pool";
    /** Tag: the device call, {@link DeviceCall#tag()}. */
    public static final String TAG_OP = "op";
    /** Tag: {@code success} or {@code failure} (no memory, or the call threw). */
    public static final String TAG_OUTCOME = "outcome";
    /** Tag: the retry's {@link RetryCause}, lower case. */
    public static final String TAG_CAUSE = "cause";

    private static final Set<String> OWN_TAGS = Set.of(TAG_ALLOCATOR, TAG_DEVICE, TAG_POOL, TAG_OP, TAG_OUTCOME,
            TAG_CAUSE);
    /** The {@code device} tag of a listener-only binding. */
    static final String ALL_DEVICES = "all";

    private final String name;
    private final Tags extraTags;
    private final MeteringListener listener;
    /** What this instance was bound to, for the message of a second bind; null until bound. Guarded by this. */
    private String boundTo;

    private DevallocMetrics(String name, Tags extraTags) {
        this.name = name;
        this.extraTags = extraTags;
        this.listener = new MeteringListener(name);
    }

    /**
     * Meters tagged {@code allocator=name}.
     *
     * @param name a stable name for the allocator (what it serves: {@code trainer}, {@code inference})
     * @throws IllegalArgumentException a blank name
     */
    public static DevallocMetrics named(String name) {
        return named(name, Tags.empty());
    }

    /**
     * Meters tagged {@code allocator=name} and {@code tags} (e.g. {@code region}).
     *
     * @throws IllegalArgumentException a blank name, or a tag key this binder sets itself ({@code allocator},
     *                                  {@code device}, {@code pool}, {@code op}, {@code outcome}, {@code cause})
     */
    public static DevallocMetrics named(String name, Iterable<Tag> tags) {
        Objects.requireNonNull(name, "name");
        if (name.isBlank()) {
            throw new IllegalArgumentException("the allocator's name must not be blank: it tags every meter");
        }
        Tags extra = Tags.of(Objects.requireNonNull(tags, "tags"));
        for (Tag t : extra) {
            if (OWN_TAGS.contains(t.getKey())) {
                throw new IllegalArgumentException("tag '" + t.getKey() + "' is set by DevallocMetrics itself; "
                        + "give another key (its own tags: " + OWN_TAGS + ")");
            }
        }
        return new DevallocMetrics(name, extra);
    }

    /** The name given: the value of every meter's {@code allocator} tag. */
    public String name() {
        return name;
    }

    /**
     * The listener to give {@code DeviceAllocators.builder().listener(...)}: it feeds the counters and timers. The
     * same instance every time.
     */
    public AllocatorListener listener() {
        return listener;
    }

    /**
     * Registers every meter of {@code allocator} in {@code registry}: the gauges read from it, and the counters and
     * timers of {@link #listener()}, which must be the listener {@code allocator} was built with.
     *
     * @throws IllegalStateException    this instance is already bound, or {@code allocator} is closed (nothing is
     *                                  registered)
     */
    public void bindTo(MeterRegistry registry, DeviceAllocator allocator) {
        Objects.requireNonNull(registry, "registry");
        Objects.requireNonNull(allocator, "allocator");
        synchronized (this) {
            if (allocator.isClosed()) {
                throw new IllegalStateException("DevallocMetrics[" + name + "]: " + allocator
                        + " is closed; bind an open allocator (its gauges would read nothing)");
            }
            claim(registry, allocator.toString());
            Tags tags = extraTags.and(TAG_ALLOCATOR, name, TAG_DEVICE, allocator.device().descriptor().id());
            registerGauges(registry, allocator, tags);
            registerListenerMeters(registry, tags);
        }
    }

    /**
     * Listener-only registration: the counters and timers of {@link #listener()}, no gauge, tagged
     * {@code device="all"}. For a listener given to several builders, or gauges published another way; to measure
     * one allocator, use {@link #bindTo(MeterRegistry, DeviceAllocator)}.
     *
     * @throws IllegalStateException this instance is already bound (nothing is registered)
     */
    @Override
    public void bindTo(MeterRegistry registry) {
        Objects.requireNonNull(registry, "registry");
        synchronized (this) {
            claim(registry, "its listener only");
            registerListenerMeters(registry, extraTags.and(TAG_ALLOCATOR, name, TAG_DEVICE, ALL_DEVICES));
        }
    }

    private void claim(MeterRegistry registry, String what) {
        if (boundTo != null) {
            throw new IllegalStateException("DevallocMetrics[" + name + "] is already bound (" + boundTo
                    + "); one DevallocMetrics measures one allocator in one registry: make another with"
                    + " DevallocMetrics.named(...) for another allocator, or bind to a CompositeMeterRegistry to"
                    + " publish to several registries");
        }
        boundTo = what + " in " + registry.getClass().getSimpleName();
    }

    private static void registerGauges(MeterRegistry registry, DeviceAllocator allocator, Tags tags) {
        for (PoolUsage usage : allocator.memoryUsage()) {
            String pool = usage.pool();
            Tags poolTags = tags.and(TAG_POOL, pool);
            memoryGauge(registry, allocator, MEMORY_RESERVED, pool, PoolUsage::reservedBytes, poolTags,
                    "Bytes held from the device");
            memoryGauge(registry, allocator, MEMORY_ALLOCATED, pool, PoolUsage::allocatedBytes, poolTags,
                    "Bytes in live allocations, as the allocator sized them");
            memoryGauge(registry, allocator, MEMORY_ACTIVE, pool, PoolUsage::activeBytes, poolTags,
                    "Bytes of blocks in use, including freed blocks still waiting on a stream");
            memoryGauge(registry, allocator, MEMORY_REQUESTED, pool, PoolUsage::requestedBytes, poolTags,
                    "Bytes in live allocations, as callers asked them");
            memoryGauge(registry, allocator, MEMORY_INACTIVE, pool, PoolUsage::inactiveSplitBytes, poolTags,
                    "Bytes of free pieces of split segments");
        }
        Gauge.builder(MEMORY_RESERVED_PEAK, allocator, a -> a.stats().peakReservedBytes())
                .tags(tags).baseUnit(BaseUnits.BYTES)
                .description("The highest reserved bytes since the allocator was built or its peaks were reset")
                .register(registry);
        Gauge.builder(MEMORY_ALLOCATED_PEAK, allocator, a -> a.stats().peakAllocatedBytes())
                .tags(tags).baseUnit(BaseUnits.BYTES)
                .description("The highest allocated bytes since the allocator was built or its peaks were reset")
                .register(registry);
        Gauge.builder(MEMORY_LIMIT, allocator, DevallocMetrics::limit)
                .tags(tags).baseUnit(BaseUnits.BYTES)
                .description("The allocator's byte limit, -1 when it has none")
                .register(registry);
        Gauge.builder(ALLOCATIONS_ACTIVE, allocator, a -> a.stats().activeAllocations())
                .tags(tags).baseUnit("allocations")
                .description("Live allocations")
                .register(registry);
    }

    private static void memoryGauge(MeterRegistry registry, DeviceAllocator allocator, String meter, String pool,
                                    ToLongFunction<PoolUsage> figure, Tags tags, String description) {
        // The lambda captures the pool and the figure, never the allocator: Micrometer holds that one weakly.
        Gauge.builder(meter, allocator, a -> poolFigure(a, pool, figure))
                .tags(tags).baseUnit(BaseUnits.BYTES).description(description).register(registry);
    }

    /**
     * One figure of one pool. A closed allocator is read through {@link DeviceAllocator#stats()}, which the
     * allocator contract keeps answering after close (the whole allocator's figures; its pools hold nothing then);
     * a pool the allocator no longer reports reads {@code NaN}, which registries skip.
     */
    static double poolFigure(DeviceAllocator allocator, String pool, ToLongFunction<PoolUsage> figure) {
        if (allocator.isClosed()) {
            return PoolUsage.ALL.equals(pool) ? figure.applyAsLong(PoolUsage.ofUnsplit(allocator.stats())) : 0;
        }
        List<PoolUsage> usage;
        try {
            usage = allocator.memoryUsage();
        } catch (IllegalStateException e) {
            if (allocator.isClosed()) { // closed between the check and the read
                return poolFigure(allocator, pool, figure);
            }
            throw e;
        }
        for (PoolUsage u : usage) {
            if (u.pool().equals(pool)) {
                return figure.applyAsLong(u);
            }
        }
        return Double.NaN;
    }

    private static double limit(DeviceAllocator allocator) {
        long limit = allocator.stats().limitBytes();
        return limit == Long.MAX_VALUE ? -1 : limit;
    }

    private void registerListenerMeters(MeterRegistry registry, Tags tags) {
        MeteringListener l = listener;
        DeviceCall[] calls = DeviceCall.values();
        Timer[] callTimers = new Timer[calls.length];
        for (DeviceCall call : calls) {
            Tags op = tags.and(TAG_OP, call.tag());
            FunctionCounter.builder(DEVICE_CALLS, l, x -> x.calls(call, true))
                    .tags(op.and(TAG_OUTCOME, "success"))
                    .description("Device calls (malloc, free, map, unmap), by outcome")
                    .register(registry);
            FunctionCounter.builder(DEVICE_CALLS, l, x -> x.calls(call, false))
                    .tags(op.and(TAG_OUTCOME, "failure"))
                    .description("Device calls (malloc, free, map, unmap), by outcome")
                    .register(registry);
            FunctionCounter.builder(DEVICE_CALL_BYTES, l, x -> x.bytes(call))
                    .tags(op).baseUnit(BaseUnits.BYTES)
                    .description("Bytes that successful device calls acquired (malloc, map) or returned (free, unmap)")
                    .register(registry);
            callTimers[call.ordinal()] = Timer.builder(DEVICE_CALL_DURATION)
                    .tags(op).description("How long device calls take")
                    .register(registry);
        }
        FunctionCounter.builder(OUT_OF_MEMORY, l, MeteringListener::outOfMemoryErrors)
                .tags(tags).description("Allocations that failed for want of memory, a retried failure included")
                .register(registry);
        for (RetryCause cause : RetryCause.values()) {
            FunctionCounter.builder(RETRIES, l, x -> x.retries(cause))
                    .tags(tags.and(TAG_CAUSE, cause.name().toLowerCase(Locale.ROOT)))
                    .description("Allocations tried again, by cause")
                    .register(registry);
        }
        FunctionCounter.builder(CACHE_RELEASES, l, MeteringListener::cacheReleases)
                .tags(tags).description("Releases of cached memory to the device")
                .register(registry);
        FunctionCounter.builder(CACHE_RELEASED, l, MeteringListener::cacheReleasedBytes)
                .tags(tags).baseUnit(BaseUnits.BYTES).description("Bytes given back by releases of cached memory")
                .register(registry);
        Timer releaseTimer = Timer.builder(CACHE_RELEASE_DURATION)
                .tags(tags).description("How long releases of cached memory take")
                .register(registry);
        l.startTiming(callTimers, releaseTimer);
    }

    @Override
    public String toString() {
        return "DevallocMetrics[" + name + "]";
    }
}
