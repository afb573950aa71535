package io.devalloc.api.error;

/**
 * The root of devalloc's typed errors. Every error leaves the allocator or device that threw it unchanged and
 * usable (except {@link DeviceException}, which reports the device itself failing).
 */
public abstract sealed class DevallocException extends RuntimeException
        permits OutOfMemoryException, InvalidFreeException, InvalidConfigurationException,
                DeviceUnavailableException, DeviceException, UnknownStreamException {

    private static final long serialVersionUID = 1L;

    protected DevallocException(String message) {
        super(message);
    }

    protected DevallocException(String message, Throwable cause) {
        super(message, cause);
    }
}
