package io.devalloc.api.error;

import io.devalloc.api.units.ByteSize;

/** A free that the allocator refused; nothing was changed. */
public final class InvalidFreeException extends DevallocException {

    private static final long serialVersionUID = 1L;

    /** What was wrong with the free. */
    public enum Reason {
        /** The address is not a live allocation of this allocator or device (never handed out, or already freed). */
        UNKNOWN_ADDRESS,
        /** The allocation handle was already freed. */
        DOUBLE_FREE,
        /** The allocation belongs to another allocator. */
        WRONG_ALLOCATOR
    }

    private final Reason reason;
    private final long address;

    public InvalidFreeException(Reason reason, long address, String owner) {
        super(message(reason, address, owner));
        this.reason = reason;
        this.address = address;
    }

    private static String message(Reason reason, long address, String owner) {
        String a = ByteSize.hex(address);
        return switch (reason) {
            case UNKNOWN_ADDRESS -> "invalid free of " + a + ": not a live allocation of " + owner
                    + " (never handed out by it, or already freed)";
            case DOUBLE_FREE -> "double free of " + a + ": this allocation from " + owner + " was already freed";
            case WRONG_ALLOCATOR -> "invalid free of " + a + ": the allocation belongs to " + owner
                    + "; free it through the allocator that made it";
        };
    }

    public Reason reason() {
        return reason;
    }

    public long address() {
        return address;
    }
}
