package io.devalloc.testkit;

import io.devalloc.api.device.DeviceMemory;
import io.devalloc.api.device.DeviceStream;
import io.devalloc.api.device.MemoryInfo;
import java.util.List;

/**
 * What the reliability suites ask of a device beyond the {@link DeviceMemory} port: the device's own books (bytes in
 * use, live events, which ranges are mapped), its injectable faults, and control over when queued work completes.
 * The testkit depends on the API only, so a module's tests adapt their device to this interface (the simulator's
 * {@code DeviceCall} kinds become the {@link #faultKinds() fault kinds} by name); {@link #portOnly} serves a device
 * that offers nothing beyond the port.
 */
public interface DeviceProbe {

    /** Bytes the device has handed out (malloc'd or mapped) now: what an allocator's reserved bytes must equal. */
    long bytesInUse();

    /** Events created and not destroyed, or -1 when the device does not tell. */
    int liveEvents();

    /** Whether the device tells which ranges are mapped ({@link #isMapped}). */
    boolean knowsMappings();

    /** Whether every byte of {@code [address, address + bytes)} is backed by mapped virtual memory. */
    boolean isMapped(long address, long bytes);

    /** The kinds of device call whose failures can be injected (empty: none). */
    List<String> faultKinds();

    /** Calls of {@code kind} so far, to tell whether an armed fault fired. */
    long calls(String kind);

    /** Makes the next call of {@code kind} run out of memory (a "no memory" result or an out-of-memory error). */
    void refuseNext(String kind);

    /** Makes the next call of {@code kind} throw {@code error}. */
    void failNextWith(String kind, RuntimeException error);

    /** Disarms every fault that has not fired. */
    void clearFaults();

    /** Completes the work queued on {@code stream} so far (its recorded events complete). */
    void completeStream(DeviceStream stream);

    /**
     * A probe from the port alone: bytes in use are total minus free ({@link DeviceMemory#memoryInfo()}, exact for a
     * device this process alone uses), no events or mappings told, no faults, and a stream's work completed by
     * synchronising the device.
     */
    static DeviceProbe portOnly(DeviceMemory device) {
        return new DeviceProbe() {
            @Override
            public long bytesInUse() {
                MemoryInfo info = device.memoryInfo();
                return info.totalBytes() - info.freeBytes();
            }

            @Override
            public int liveEvents() {
                return -1;
            }

            @Override
            public boolean knowsMappings() {
                return false;
            }

            @Override
            public boolean isMapped(long address, long bytes) {
                throw new UnsupportedOperationException("this device does not tell which ranges are mapped");
            }

            @Override
            public List<String> faultKinds() {
                return List.of();
            }

            @Override
            public long calls(String kind) {
                throw new UnsupportedOperationException("no faults can be injected into " + device);
            }

            @Override
            public void refuseNext(String kind) {
                throw new UnsupportedOperationException("no faults can be injected into " + device);
            }

            @Override
            public void failNextWith(String kind, RuntimeException error) {
                throw new UnsupportedOperationException("no faults can be injected into " + device);
            }

            @Override
            public void clearFaults() {
                // nothing is ever armed
            }

            @Override
            public void completeStream(DeviceStream stream) {
                device.synchronize();
            }
        };
    }
}
