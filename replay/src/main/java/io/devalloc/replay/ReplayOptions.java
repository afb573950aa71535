package io.devalloc.replay;

import java.util.Objects;

/**
 * How to replay a trace: through which allocator, on which device, with which configuration.
 *
 * @param allocator               the allocator's name, as {@link io.devalloc.api.internal.AllocatorRegistry} knows it
 *                                ({@code direct}, {@code bfc}, {@code caching}, {@code caching-host}, any SPI one)
 * @param device                  the device spec ({@code sim:80GiB}, {@code sim:SIZE}, {@code host},
 *                                {@code cuda:N}, ...)
 * @param conf                    the allocator's configuration string, passed unchanged to its provider
 * @param warm                    PyTorch traces: seed the allocator with the trace's {@code presegment} and
 *                                {@code prealloc} rows (see {@link Replayer})
 * @param emptyCacheAtSegmentFree call {@code releaseCachedMemory()} at the first {@code segment_free} or
 *                                {@code segment_unmap} row of each run of them, where the recorded program called
 *                                {@code torch.cuda.empty_cache()}
 */
public record ReplayOptions(String allocator, String device, String conf, boolean warm,
                            boolean emptyCacheAtSegmentFree) {

    /** The allocator replays use unless told otherwise: PyTorch's, which the PyTorch traces recorded. */
    public static final String DEFAULT_ALLOCATOR = "caching";
    /** The device replays use unless told otherwise: a simulated 80 GiB GPU. */
    public static final String DEFAULT_DEVICE = "sim:80GiB";

    public ReplayOptions {
        Objects.requireNonNull(allocator, "allocator");
        Objects.requireNonNull(device, "device");
        Objects.requireNonNull(conf, "conf");
    }

    /** The caching allocator with its defaults on {@code sim:80GiB}, cold, no empty-cache calls. */
    public static ReplayOptions defaults() {
        return new ReplayOptions(DEFAULT_ALLOCATOR, DEFAULT_DEVICE, "", false, false);
    }

    public ReplayOptions withAllocator(String name) {
        return new ReplayOptions(name, device, conf, warm, emptyCacheAtSegmentFree);
    }

    public ReplayOptions withDevice(String spec) {
        return new ReplayOptions(allocator, spec, conf, warm, emptyCacheAtSegmentFree);
    }

    public ReplayOptions withConf(String text) {
        return new ReplayOptions(allocator, device, text, warm, emptyCacheAtSegmentFree);
    }

    public ReplayOptions withWarm(boolean on) {
        return new ReplayOptions(allocator, device, conf, on, emptyCacheAtSegmentFree);
    }

    public ReplayOptions withEmptyCacheAtSegmentFree(boolean on) {
        return new ReplayOptions(allocator, device, conf, warm, on);
    }
}
