package io.devalloc.micrometer;

import io.devalloc.api.error.OutOfMemoryException;
import io.devalloc.api.observe.AllocatorListener;
import io.devalloc.api.observe.DeviceCall;
import io.devalloc.api.observe.RetryCause;
import io.micrometer.core.instrument.Timer;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.LongAdder;

/**
 * The listener a {@link DevallocMetrics} gives the builder: counts into its own adders from the moment it exists
 * (the registry reads them through {@code FunctionCounter}s) and records durations into the timers it is handed
 * when the binder is bound. Indexed by the enums' ordinals, so a call costs an array read, an adder increment and,
 * once bound, a timer record: no lookup, no allocation, no lock (some calls come with the allocator's lock held).
 *
 * <p>Thread-safe: adders are, and the timers are published through a volatile field.
 */
final class MeteringListener implements AllocatorListener {

    private static final int CALLS = DeviceCall.values().length;
    private static final int CAUSES = RetryCause.values().length;

    private final String name;
    private final LongAdder[] succeededCalls = adders(CALLS);
    private final LongAdder[] failedCalls = adders(CALLS);
    private final LongAdder[] callBytes = adders(CALLS);
    private final LongAdder outOfMemoryErrors = new LongAdder();
    private final LongAdder[] retries = adders(CAUSES);
    private final LongAdder cacheReleases = new LongAdder();
    private final LongAdder cacheReleasedBytes = new LongAdder();

    /** One timer per {@link DeviceCall} by ordinal, then the cache-release timer; null until bound. */
    private volatile Timer[] timers;

    MeteringListener(String name) {
        this.name = name;
    }

    private static LongAdder[] adders(int n) {
        LongAdder[] a = new LongAdder[n];
        for (int i = 0; i < n; i++) {
            a[i] = new LongAdder();
        }
        return a;
    }

    /** From now on, durations go to {@code callTimers} (by {@link DeviceCall} ordinal) and {@code releaseTimer}. */
    void startTiming(Timer[] callTimers, Timer releaseTimer) {
        Timer[] all = new Timer[CALLS + 1];
        System.arraycopy(callTimers, 0, all, 0, CALLS);
        all[CALLS] = releaseTimer;
        this.timers = all;
    }

    @Override
    public void deviceCall(DeviceCall call, long address, long bytes, long nanos, boolean succeeded) {
        int op = call.ordinal();
        if (succeeded) {
            succeededCalls[op].increment();
            callBytes[op].add(bytes);
        } else {
            failedCalls[op].increment();
        }
        Timer[] t = timers;
        if (t != null) {
            t[op].record(nanos, TimeUnit.NANOSECONDS);
        }
    }

    @Override
    public void outOfMemory(long requestedBytes, OutOfMemoryException error) {
        outOfMemoryErrors.increment();
    }

    @Override
    public void allocationRetried(long requestedBytes, int attempt, RetryCause cause) {
        retries[cause.ordinal()].increment();
    }

    @Override
    public void cacheReleased(long bytes, long nanos) {
        cacheReleases.increment();
        cacheReleasedBytes.add(bytes);
        Timer[] t = timers;
        if (t != null) {
            t[CALLS].record(nanos, TimeUnit.NANOSECONDS);
        }
    }

    double calls(DeviceCall call, boolean succeeded) {
        return (succeeded ? succeededCalls : failedCalls)[call.ordinal()].sum();
    }

    double bytes(DeviceCall call) {
        return callBytes[call.ordinal()].sum();
    }

    double outOfMemoryErrors() {
        return outOfMemoryErrors.sum();
    }

    double retries(RetryCause cause) {
        return retries[cause.ordinal()].sum();
    }

    double cacheReleases() {
        return cacheReleases.sum();
    }

    double cacheReleasedBytes() {
        return cacheReleasedBytes.sum();
    }

    @Override
    public String toString() {
        return "DevallocMetrics[" + name + "].listener()";
    }
}
