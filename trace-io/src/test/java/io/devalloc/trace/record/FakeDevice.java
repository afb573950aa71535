package io.devalloc.trace.record;

import io.devalloc.api.device.DeviceDescriptor;
import io.devalloc.api.device.DeviceEvent;
import io.devalloc.api.device.DeviceKind;
import io.devalloc.api.device.DeviceMemory;
import io.devalloc.api.device.DeviceStream;
import io.devalloc.api.device.MemoryInfo;
import io.devalloc.api.error.InvalidFreeException;
import java.util.ArrayDeque;
import java.util.HashMap;
import java.util.Map;

/**
 * A tiny device for allocator-api's own tests (which cannot use device-sim): a capacity, 256-byte alignment,
 * addresses bumped from {@link #BASE} and reused most-recently-freed first for the same rounded size, so that
 * address reuse (the case recording must order correctly) happens all the time. Thread-safe (one monitor).
 */
public final class FakeDevice implements DeviceMemory {

    /** The first address handed out: above 2^32 and 2^40, as real device addresses are. */
    public static final long BASE = 0x7f3a_0000_0000L;
    /** The first stream handle {@link #createStream()} returns. */
    public static final long FIRST_STREAM = 0x5581_d2a0L;

    private final long capacity;
    private final Map<Long, Long> live = new HashMap<>();
    private final Map<Long, ArrayDeque<Long>> freed = new HashMap<>();
    private long next = BASE;
    private long used;
    private long nextStream = FIRST_STREAM;
    private long nextEvent = 1;
    private boolean closed;

    public FakeDevice(long capacity) {
        this.capacity = capacity;
    }

    @Override
    public DeviceDescriptor descriptor() {
        return new DeviceDescriptor("fake", 0, "fake device", DeviceKind.SIMULATED, capacity);
    }

    @Override
    public long alignment() {
        return 256;
    }

    @Override
    public synchronized long malloc(long bytes) {
        if (bytes < 1) {
            throw new IllegalArgumentException("bytes < 1");
        }
        ensureOpen();
        long rounded = (bytes + 255) & -256L;
        if (rounded > capacity - used) {
            return NULL;
        }
        ArrayDeque<Long> reuse = freed.get(rounded);
        long address;
        if (reuse != null && !reuse.isEmpty()) {
            address = reuse.pop();
        } else {
            address = next;
            next += rounded;
        }
        live.put(address, rounded);
        used += rounded;
        return address;
    }

    @Override
    public synchronized void free(long address) {
        ensureOpen();
        Long rounded = live.remove(address);
        if (rounded == null) {
            throw new InvalidFreeException(InvalidFreeException.Reason.UNKNOWN_ADDRESS, address, "fake device");
        }
        used -= rounded;
        freed.computeIfAbsent(rounded, k -> new ArrayDeque<>()).push(address);
    }

    /** Bytes allocated now. */
    public synchronized long usedBytes() {
        return used;
    }

    @Override
    public synchronized MemoryInfo memoryInfo() {
        return new MemoryInfo(capacity - used, capacity);
    }

    @Override
    public synchronized DeviceStream createStream() {
        long handle = nextStream;
        nextStream += 0x100;
        return new DeviceStream(handle);
    }

    @Override
    public void destroyStream(DeviceStream stream) {
    }

    @Override
    public synchronized DeviceEvent createEvent() {
        return new DeviceEvent(nextEvent++);
    }

    @Override
    public void recordEvent(DeviceEvent event, DeviceStream stream) {
    }

    @Override
    public boolean isEventComplete(DeviceEvent event) {
        return true;
    }

    @Override
    public void synchronizeEvent(DeviceEvent event) {
    }

    @Override
    public void destroyEvent(DeviceEvent event) {
    }

    @Override
    public void synchronize() {
    }

    public synchronized boolean isClosed() {
        return closed;
    }

    @Override
    public synchronized void close() {
        closed = true;
        live.clear();
        used = 0;
    }

    private void ensureOpen() {
        if (closed) {
            throw new IllegalStateException("fake device is closed");
        }
    }
}
