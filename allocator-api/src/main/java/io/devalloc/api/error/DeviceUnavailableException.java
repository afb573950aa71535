package io.devalloc.api.error;

/** A device could not be opened: unknown provider, provider unavailable (and why), or no such device index. */
public final class DeviceUnavailableException extends DevallocException {

    private static final long serialVersionUID = 1L;

    public DeviceUnavailableException(String message) {
        super(message);
    }

    public DeviceUnavailableException(String message, Throwable cause) {
        super(message, cause);
    }
}
