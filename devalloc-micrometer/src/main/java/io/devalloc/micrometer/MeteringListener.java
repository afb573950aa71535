package io.devalloc.micrometer;

import io.devalloc.api.error.OutOfMemoryException;
import io.devalloc.api.observe.AllocatorListener;
import io.devalloc.api.observe.AllocatorListener.RetryCause;
import io.devalloc.api.observe.DeviceCall;
import io.micrometer.core.instrument.Timer;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.LongAdder;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The listener a {@link DevallocMetrics} gives the builder: counts into its own adders from the moment it exists
 * (the registry reads them through {@code FunctionCounter}s) and records durations into the timers it is handed
 * when the binder is bound. Indexed by the enums' ordinals, so a call costs an array read, an adder increment and,
 * once bound, a timer record: no lookup, no allocation, no lock (some calls come with the allocator's lock held).
 *
 * <p>Durations measured before the binder is bound (a device malloc the allocator makes as it is built, say
 * {@code bfc}'s preallocated region) are kept, up to {@value #EARLY_DURATIONS}, and recorded into the timers when
 * they arrive, so that a timer's count is its counter's; past that bound they are dropped, and logged once.
 *
 * <p>Thread-safe: adders are, the timers are published through a volatile field, and the early durations are
 * guarded by this object (taken only before the timers exist).
 */
final class MeteringListener implements AllocatorListener {

    private static final Logger LOG = LoggerFactory.getLogger(MeteringListener.class);
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

    /** How many durations measured before binding are kept for the timers. */
    static final int EARLY_DURATIONS = 1024;

    /** One timer per {@link DeviceCall} by ordinal, then the cache-release timer; null until bound. */
    private volatile Timer[] timers;
    /** Durations before binding: timer index and nanos, in pairs; null once bound. */
    private long[] early = new long[2 * EARLY_DURATIONS];
    private int earlyCount;
    private boolean earlyDropped;

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
        synchronized (this) {
            for (int i = 0; i < earlyCount; i++) {
                all[(int) early[2 * i]].record(early[2 * i + 1], TimeUnit.NANOSECONDS);
            }
            early = null;
            this.timers = all;
        }
    }

    /** Records a duration into timer {@code index}, or keeps it until the timers exist. */
    private void time(int index, long nanos) {
        Timer[] t = timers;
        if (t != null) {
            t[index].record(nanos, TimeUnit.NANOSECONDS);
            return;
        }
        synchronized (this) {
            if (timers != null) {
                timers[index].record(nanos, TimeUnit.NANOSECONDS);
            } else if (earlyCount < EARLY_DURATIONS) {
                early[2 * earlyCount] = index;
                early[2 * earlyCount + 1] = nanos;
                earlyCount++;
            } else if (!earlyDropped) {
                earlyDropped = true;
                LOG.warn("{}: more than {} device calls before bindTo; the durations of the later ones are not in"
                        + " the timers (their counts are in the counters)", this, EARLY_DURATIONS);
            }
        }
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
        time(op, nanos);
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
        time(CALLS, nanos);
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
