package io.devalloc.api.device;

import java.lang.foreign.MemorySegment;
import java.util.Optional;

/**
 * The port to one device's raw memory: what allocation algorithms call instead of {@code cudaMalloc},
 * {@code cudaFree}, {@code cudaMemGetInfo} and the stream/event API. Adapters ({@code device-sim},
 * {@code device-host}, {@code device-cuda}) implement it; {@link io.devalloc.api.spi.DeviceMemoryProvider}s open it.
 *
 * <p><b>Errors.</b> {@link #malloc} reports "not enough memory" by returning 0, like {@code cudaMalloc} returning
 * {@code cudaErrorMemoryAllocation}: running out is an expected outcome that allocators retry around, so it is not
 * an exception. Every other failure is a {@link io.devalloc.api.error.DeviceException}. Bad arguments are an
 * {@link IllegalArgumentException} and change nothing.
 *
 * <p><b>Threads.</b> Implementations are thread-safe. Calls that CUDA binds to a current device (a thread-local)
 * make that device current themselves.
 *
 * <p><b>Ownership.</b> Whoever opened a device closes it. Closing frees everything still allocated, destroys
 * streams and events, and makes every later call fail with {@link IllegalStateException}.
 */
public interface DeviceMemory extends AutoCloseable {

    /** The null device address, never handed out by {@link #malloc}. */
    long NULL = 0L;

    /** Which device this is. */
    DeviceDescriptor descriptor();

    /** The alignment of every address {@link #malloc} returns, a power of two (256 for cudaMalloc). */
    long alignment();

    /**
     * Allocates {@code bytes} of device memory.
     *
     * @param bytes at least 1
     * @return the address, aligned to {@link #alignment()}; {@link #NULL} when the device has not enough memory
     * @throws IllegalArgumentException if {@code bytes < 1}
     * @throws io.devalloc.api.error.DeviceException on any other device failure
     */
    long malloc(long bytes);

    /**
     * Frees memory returned by {@link #malloc}. On a GPU this synchronises the device, which is why allocators
     * cache.
     *
     * @throws io.devalloc.api.error.InvalidFreeException if {@code address} is not a live allocation of this
     *                                                    device (nothing changes then)
     */
    void free(long address);

    /** Free and total memory of the device, as the device reports it (all users, not just this process). */
    MemoryInfo memoryInfo();

    /** Creates a new stream. */
    DeviceStream createStream();

    /** Destroys a stream created by {@link #createStream()}. The default stream cannot be destroyed. */
    void destroyStream(DeviceStream stream);

    /**
     * Whether {@code stream} is a live stream of this device: its default stream, or one it created and has not
     * destroyed. Allocators ask it when {@code recordStream} is called (they refuse other streams with an
     * {@link io.devalloc.api.error.UnknownStreamException}) and when recording an event on a stream fails at a free
     * (a stream destroyed since is waited for by synchronising the device instead). Cheap, and never fails on an
     * open device.
     *
     * <p>The default answers true for every stream: an adapter that cannot tell lets the device's own calls
     * decide (recording on a stream it does not know then fails, and the free that needed it with it).
     */
    default boolean hasStream(DeviceStream stream) {
        return true;
    }

    /** Creates an event (with timing disabled, the cheap kind allocators use). */
    DeviceEvent createEvent();

    /** Records {@code event} on {@code stream}: it completes when work queued on the stream so far is done. */
    void recordEvent(DeviceEvent event, DeviceStream stream);

    /** Whether the event has completed ({@code cudaEventQuery} returned success rather than not-ready). */
    boolean isEventComplete(DeviceEvent event);

    /** Blocks until the event has completed. */
    void synchronizeEvent(DeviceEvent event);

    /** Destroys an event. */
    void destroyEvent(DeviceEvent event);

    /** Blocks until all work on the device has completed. */
    void synchronize();

    /** The virtual-memory capability, when the device has one. */
    default Optional<VirtualMemory> virtualMemory() {
        return Optional.empty();
    }

    /**
     * A CPU view of {@code [address, address + bytes)} when the device's memory is host-addressable (host and
     * pinned-host memory); empty for GPU and simulated memory.
     *
     * @throws IllegalArgumentException if the range is not inside one live allocation of this device
     */
    default Optional<MemorySegment> hostView(long address, long bytes) {
        return Optional.empty();
    }

    /** Frees everything still allocated and releases the device. Idempotent. */
    @Override
    void close();
}
