package io.devalloc.api.observe;

import io.devalloc.api.device.DeviceStream;
import io.devalloc.api.error.OutOfMemoryException;
import io.devalloc.api.stats.AllocatorStats;
import java.util.Objects;

/**
 * What an {@link OutOfMemoryHandler} is told about an allocation that failed.
 *
 * @param requestedBytes the bytes the caller asked for
 * @param stream         the stream it asked on
 * @param retryCount     how many times this request was already retried at the handler's request (0 the first time
 *                       the handler is asked), as cuDF's {@code RmmEventHandler.onAllocFailure} is told
 * @param stats          the allocator's statistics just after the failure
 * @param error          the error the caller gets if the handler does not ask for a retry
 */
public record AllocationFailure(long requestedBytes, DeviceStream stream, int retryCount, AllocatorStats stats,
                                OutOfMemoryException error) {

    public AllocationFailure {
        Objects.requireNonNull(stream, "stream");
        Objects.requireNonNull(stats, "stats");
        Objects.requireNonNull(error, "error");
        if (retryCount < 0) {
            throw new IllegalArgumentException("retryCount " + retryCount + " < 0");
        }
    }
}
