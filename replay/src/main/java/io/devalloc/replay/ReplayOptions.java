package io.devalloc.replay;

import io.devalloc.sim.SimulatedDeviceProvider;
import java.util.Objects;

/**
 * How to replay a trace: through which allocator, on which device, with which configuration.
 *
 * @param allocator               the allocator's name, as {@link io.devalloc.api.spi.AllocatorRegistry} knows it
 *                                ({@code direct}, {@code bfc}, {@code caching}, {@code caching-host}, any SPI one)
 * @param device                  the device spec ({@code sim:80GiB}, {@code sim:SIZE}, {@code host},
 *                                {@code cuda:N}, ...); a simulated device's capacity may be given to the byte
 *                                ({@code sim:1073741824B}), and the device refuses any malloc or map beyond it, so
 *                                that the allocator's own retry ladder runs as it would on a full GPU
 * @param conf                    the allocator's configuration string, passed unchanged to its provider
 * @param warm                    PyTorch traces: seed the allocator with the trace's {@code presegment} and
 *                                {@code prealloc} rows (see {@link Replayer})
 * @param emptyCacheAtSegmentFree call {@code releaseCachedMemory()} at the first {@code segment_free} or
 *                                {@code segment_unmap} row of each run of them, where the recorded program called
 *                                {@code torch.cuda.empty_cache()}
 * @param peakSnapshot            take the allocator's snapshot at the peak (a second replay up to the peak's event,
 *                                see the package documentation) and explain the waste there
 *                                ({@link ReplayResult.Peak#waste()}); on by default, off saves that second replay
 * @param stopAtFirstOom          stop the replay at the first allocation that fails with out of memory, which
 *                                {@link ReplayResult#firstOom()} describes; off by default (failures are counted and
 *                                the replay goes on)
 * @param reproduceRecorded       warm replays: reproduce what the recorded allocator did on its own, its cache
 *                                flushes and its out-of-memory errors, the device refusing to grow where the
 *                                recording's did (the trust replay; on by default); off, they are left to the
 *                                allocator, which flushes and fails where its own device runs short (a warm replay on
 *                                the capacity the trace was recorded on, to see whether its out-of-memory error comes
 *                                back by itself). Cold replays never reproduce them.
 */
public record ReplayOptions(String allocator, String device, String conf, boolean warm,
                            boolean emptyCacheAtSegmentFree, boolean peakSnapshot, boolean stopAtFirstOom,
                            boolean reproduceRecorded) {

    /** The allocator replays use unless told otherwise: PyTorch's, which the PyTorch traces recorded. */
    public static final String DEFAULT_ALLOCATOR = "caching";
    /** The largest simulated device a replay can run on ({@code sim:SIZE}): half the simulated address space. */
    public static final long MAX_DEVICE_BYTES = SimulatedDeviceProvider.MAX_CAPACITY;
    /** The device replays use unless told otherwise: a simulated 80 GiB GPU. */
    public static final String DEFAULT_DEVICE = "sim:80GiB";

    public ReplayOptions {
        Objects.requireNonNull(allocator, "allocator");
        Objects.requireNonNull(device, "device");
        Objects.requireNonNull(conf, "conf");
    }

    /**
     * Options with a peak snapshot, without stopping at the first out-of-memory error, reproducing the recorded
     * allocator's own flushes and failures when warm.
     */
    public ReplayOptions(String allocator, String device, String conf, boolean warm, boolean emptyCacheAtSegmentFree) {
        this(allocator, device, conf, warm, emptyCacheAtSegmentFree, true, false, true);
    }

    /**
     * The caching allocator with its defaults on {@code sim:80GiB}, cold, no empty-cache calls, a peak snapshot, not
     * stopping at the first out-of-memory error.
     */
    public static ReplayOptions defaults() {
        return new ReplayOptions(DEFAULT_ALLOCATOR, DEFAULT_DEVICE, "", false, false, true, false, true);
    }

    public ReplayOptions withAllocator(String name) {
        return new ReplayOptions(name, device, conf, warm, emptyCacheAtSegmentFree, peakSnapshot, stopAtFirstOom,
                reproduceRecorded);
    }

    public ReplayOptions withDevice(String spec) {
        return new ReplayOptions(allocator, spec, conf, warm, emptyCacheAtSegmentFree, peakSnapshot, stopAtFirstOom,
                reproduceRecorded);
    }

    public ReplayOptions withConf(String text) {
        return new ReplayOptions(allocator, device, text, warm, emptyCacheAtSegmentFree, peakSnapshot, stopAtFirstOom,
                reproduceRecorded);
    }

    public ReplayOptions withWarm(boolean on) {
        return new ReplayOptions(allocator, device, conf, on, emptyCacheAtSegmentFree, peakSnapshot, stopAtFirstOom,
                reproduceRecorded);
    }

    public ReplayOptions withEmptyCacheAtSegmentFree(boolean on) {
        return new ReplayOptions(allocator, device, conf, warm, on, peakSnapshot, stopAtFirstOom, reproduceRecorded);
    }

    /** Whether to take the peak snapshot (and the waste at the peak), which costs a second replay up to the peak. */
    public ReplayOptions withPeakSnapshot(boolean on) {
        return new ReplayOptions(allocator, device, conf, warm, emptyCacheAtSegmentFree, on, stopAtFirstOom,
                reproduceRecorded);
    }

    /** Whether to stop at the first allocation that fails with out of memory. */
    public ReplayOptions withStopAtFirstOom(boolean on) {
        return new ReplayOptions(allocator, device, conf, warm, emptyCacheAtSegmentFree, peakSnapshot, on,
                reproduceRecorded);
    }
}
