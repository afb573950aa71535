package io.devalloc.api.error;

/**
 * A device call failed for a reason other than running out of memory (for CUDA: any error code other than
 * {@code cudaErrorMemoryAllocation}), or a host facility such as {@code mlock} was refused.
 */
public non-sealed class DeviceException extends DevallocException {

    private static final long serialVersionUID = 1L;

    public DeviceException(String message) {
        super(message);
    }

    public DeviceException(String message, Throwable cause) {
        super(message, cause);
    }
}
