package io.devalloc.testkit;

import java.util.Objects;

/**
 * What an adapter's contract test answers to {@link DeviceMemoryContract#armUnmapFailure()}: either the device's next
 * unmap was armed to fail in the device, or this adapter's unmap cannot be made to fail on demand, and why. The
 * reason is shown as the check's skip message, so that a skipped duty is visible in the test report.
 *
 * @param willFail whether the next unmap will fail
 * @param reason   why it cannot be armed; empty when {@code willFail}
 */
public record UnmapFailure(boolean willFail, String reason) {

    /** Checks that an unarmed answer says why. */
    public UnmapFailure {
        Objects.requireNonNull(reason, "reason");
        if (!willFail && reason.isBlank()) {
            throw new IllegalArgumentException("an unmap failure that cannot be armed needs a reason");
        }
    }

    /** The device's next accepted unmap will fail in the device. */
    public static UnmapFailure armed() {
        return new UnmapFailure(true, "");
    }

    /** The adapter's unmap cannot be made to fail on demand, for {@code reason}. */
    public static UnmapFailure impossible(String reason) {
        return new UnmapFailure(false, reason);
    }
}
