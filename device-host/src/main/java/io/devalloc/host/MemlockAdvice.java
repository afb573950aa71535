package io.devalloc.host;

import io.devalloc.api.internal.Failures;
import io.devalloc.api.units.ByteSize;
import java.util.Optional;

/**
 * Explains a refused {@code mlock} so that whoever reads the message can fix it without looking anything up: the
 * errno, the limits in force, what is already locked, and every usual way of raising the limit.
 *
 * <p>Stateless and thread-safe.
 */
final class MemlockAdvice {

    private MemlockAdvice() {
    }

    /** {@code ENOMEM}, {@code EPERM}, ... or {@code errno 5} for codes mlock does not document. */
    static String errnoName(int errno) {
        return switch (errno) {
            case NativeMemoryCalls.EPERM -> "EPERM";
            case NativeMemoryCalls.EAGAIN -> "EAGAIN";
            case NativeMemoryCalls.ENOMEM -> "ENOMEM";
            case NativeMemoryCalls.EINVAL -> "EINVAL";
            default -> "errno " + errno;
        };
    }

    private static String meaning(int errno) {
        return switch (errno) {
            case NativeMemoryCalls.EPERM -> "the process is not allowed to lock memory (its RLIMIT_MEMLOCK is 0 "
                    + "and it lacks CAP_IPC_LOCK)";
            case NativeMemoryCalls.EAGAIN -> "some of the range could not be locked";
            case NativeMemoryCalls.ENOMEM -> "locking it would take the process above its RLIMIT_MEMLOCK";
            case NativeMemoryCalls.EINVAL -> "the kernel refused the range";
            default -> "the kernel refused to lock the range";
        };
    }

    /**
     * The full explanation of a refused lock.
     *
     * @param what         what was being locked, e.g. {@code "mlock of 64.00 MiB (67108864 bytes) on pinned-host:0"}
     * @param errno        the errno of the failed call
     * @param requestBytes the bytes that were to be locked
     * @param lockedBytes  the bytes this device already has locked, or -1 when no device is involved (a probe)
     * @param calls        where to read the current limits
     */
    static String explain(String what, int errno, long requestBytes, long lockedBytes, NativeMemoryCalls calls) {
        StringBuilder m = new StringBuilder(512);
        m.append(what).append(" failed with ").append(errnoName(errno));
        if (errno != NativeMemoryCalls.EPERM && errno != NativeMemoryCalls.EAGAIN
                && errno != NativeMemoryCalls.ENOMEM && errno != NativeMemoryCalls.EINVAL) {
            m.append(" (not one mlock documents)");
        } else {
            m.append(" (errno ").append(errno).append(')');
        }
        m.append(": ").append(meaning(errno)).append(". ");
        m.append("RLIMIT_MEMLOCK: ").append(limits(calls));
        if (lockedBytes >= 0) {
            m.append("; already locked by this device: ").append(lockedBytes).append(" bytes (")
                    .append(ByteSize.format(lockedBytes)).append(')');
        }
        m.append(". ");
        long neededKiB = neededKiB(Math.max(0, lockedBytes), requestBytes);
        m.append("To pin more, raise the limit of the process that runs the JVM: `ulimit -l ").append(neededKiB)
                .append("` (KiB) or `ulimit -l unlimited` in the shell that starts the JVM (without privileges"
                        + " only up to the hard limit); `memlock` in /etc/security/limits.conf (e.g."
                        + " `youruser - memlock unlimited`, then log in again); `LimitMEMLOCK=infinity` in the"
                        + " [Service] section of a systemd unit; `--ulimit memlock=-1:-1` for `docker run`; or run"
                        + " the JVM with CAP_IPC_LOCK, which is not bound by the limit. Or use the unpinned 'host'"
                        + " device.");
        return m.toString();
    }

    /** The limits for a message, never throwing (this runs while reporting another failure). */
    static String limits(NativeMemoryCalls calls) {
        try {
            Optional<NativeMemoryCalls.MemlockLimit> limit = calls.memlockLimit();
            return limit.map(NativeMemoryCalls.MemlockLimit::describe)
                    .orElse("unknown (getrlimit is not available on this system)");
        } catch (RuntimeException e) {
            return "unknown (getrlimit failed: " + Failures.describe(e) + ")";
        }
    }

    /** KiB to pass to {@code ulimit -l} so that what is locked plus the request fits; saturates. */
    static long neededKiB(long lockedBytes, long requestBytes) {
        long total = lockedBytes > Long.MAX_VALUE - requestBytes ? Long.MAX_VALUE : lockedBytes + requestBytes;
        return total / ByteSize.KiB + (total % ByteSize.KiB == 0 ? 0 : 1);
    }
}
