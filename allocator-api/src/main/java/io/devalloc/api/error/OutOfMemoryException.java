package io.devalloc.api.error;

import static io.devalloc.api.units.ByteSize.format;

/**
 * An allocation could not be served. Carries the figures a user needs to act: what was asked, what the device
 * has, and what this allocator holds.
 */
public final class OutOfMemoryException extends DevallocException {

    private static final long serialVersionUID = 1L;

    /** Why the allocation failed. */
    public enum Reason {
        /** The device has no memory left to give. */
        DEVICE_EXHAUSTED,
        /** A configured limit (memory limit, memory fraction) would be exceeded. */
        LIMIT_REACHED,
        /** Enough bytes are free in total, but no free block is large enough. */
        FRAGMENTATION,
        /** The request is larger than anything the device or allocator could ever serve. */
        REQUEST_TOO_LARGE
    }

    private final Reason reason;
    private final String deviceId;
    private final long requestedBytes;
    private final long deviceFreeBytes;
    private final long deviceTotalBytes;
    private final long reservedBytes;
    private final long allocatedBytes;
    private final long limitBytes;

    /**
     * @param limitBytes the allocator's limit, or {@link Long#MAX_VALUE} when it has none
     * @param message    the full message, or null for the standard one
     */
    public OutOfMemoryException(Reason reason, String deviceId, long requestedBytes, long deviceFreeBytes,
                                long deviceTotalBytes, long reservedBytes, long allocatedBytes, long limitBytes,
                                String message) {
        super(message != null ? message
                : standardMessage(reason, deviceId, requestedBytes, deviceFreeBytes, deviceTotalBytes, reservedBytes,
                allocatedBytes, limitBytes));
        this.reason = reason;
        this.deviceId = deviceId;
        this.requestedBytes = requestedBytes;
        this.deviceFreeBytes = deviceFreeBytes;
        this.deviceTotalBytes = deviceTotalBytes;
        this.reservedBytes = reservedBytes;
        this.allocatedBytes = allocatedBytes;
        this.limitBytes = limitBytes;
    }

    private static String standardMessage(Reason reason, String deviceId, long requested, long free, long total,
                                          long reserved, long allocated, long limit) {
        String why = switch (reason) {
            case DEVICE_EXHAUSTED -> "the device has no memory left";
            case LIMIT_REACHED -> "the allocator's limit of " + format(limit) + " would be exceeded";
            case FRAGMENTATION -> "enough bytes are free in total but no free block is large enough (fragmentation)";
            case REQUEST_TOO_LARGE -> "the request is larger than the device could ever serve";
        };
        return "out of memory on " + deviceId + ": tried to allocate " + requested + " bytes (" + format(requested)
                + "); " + why + ". Device: " + format(total) + " total, " + format(free) + " free. This allocator: "
                + format(reserved) + " reserved, " + format(allocated) + " allocated"
                + (limit == Long.MAX_VALUE ? "" : ", limit " + format(limit)) + ".";
    }

    public Reason reason() {
        return reason;
    }

    public String deviceId() {
        return deviceId;
    }

    public long requestedBytes() {
        return requestedBytes;
    }

    public long deviceFreeBytes() {
        return deviceFreeBytes;
    }

    public long deviceTotalBytes() {
        return deviceTotalBytes;
    }

    public long reservedBytes() {
        return reservedBytes;
    }

    public long allocatedBytes() {
        return allocatedBytes;
    }

    /** The allocator's limit, or {@link Long#MAX_VALUE} when it has none. */
    public long limitBytes() {
        return limitBytes;
    }
}
