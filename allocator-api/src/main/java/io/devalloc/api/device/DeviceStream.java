package io.devalloc.api.device;

/**
 * A stream of work on one device: CUDA's {@code cudaStream_t}, or an emulated queue on devices without one.
 *
 * <p>The handle is opaque and only meaningful to the {@link io.devalloc.api.device.DeviceMemory} that created
 * it. Handle {@code 0} is the device's default (legacy) stream, as in CUDA. Allocators keep free memory per
 * stream, so a stream is part of an allocation's identity.
 *
 * @param handle the device's handle for the stream; 0 for the default stream
 */
public record DeviceStream(long handle) {

    /** The default stream of every device (CUDA's stream 0). */
    public static final DeviceStream DEFAULT = new DeviceStream(0);

    /** Whether this is the default stream. */
    public boolean isDefault() {
        return handle == 0;
    }

    @Override
    public String toString() {
        return handle == 0 ? "stream(default)" : "stream(0x" + Long.toHexString(handle) + ")";
    }
}
