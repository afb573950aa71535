package io.devalloc.api.error;

import io.devalloc.api.device.DeviceStream;

/**
 * A stream that is not a live stream of the allocator's device: never created by it (another device's, or a made-up
 * handle), or already destroyed. {@link io.devalloc.api.DeviceAllocator#recordStream} refuses such a stream, since
 * no event could ever be recorded on it to tell when its work is done; nothing was changed.
 */
public final class UnknownStreamException extends DevallocException {

    private static final long serialVersionUID = 1L;

    private final long streamHandle;

    /**
     * @param stream the stream refused
     * @param owner  what refused it (an allocator, named with its device)
     */
    public UnknownStreamException(DeviceStream stream, String owner) {
        super(stream + " is not a live stream of the device of " + owner + " (never created by that device, or"
                + " already destroyed); record a stream of that device that is still alive");
        this.streamHandle = stream.handle();
    }

    /** The stream refused. */
    public DeviceStream stream() {
        return new DeviceStream(streamHandle);
    }
}
