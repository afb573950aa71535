package io.devalloc.api.internal;

import io.devalloc.api.DeviceAllocator;
import io.devalloc.api.device.DeviceStream;
import java.util.Objects;

/** The argument checks every {@link DeviceAllocator#malloc(long, DeviceStream)} makes first. Stateless. */
public final class AllocationRequest {

    private AllocationRequest() {
    }

    /**
     * Refuses a negative size or a null stream, changing nothing.
     *
     * @throws IllegalArgumentException if {@code bytes < 0}
     * @throws NullPointerException     if {@code stream} is null
     */
    public static void check(long bytes, DeviceStream stream) {
        if (bytes < 0) {
            throw new IllegalArgumentException("allocation size must be >= 0, got " + bytes);
        }
        Objects.requireNonNull(stream, "stream");
    }
}
