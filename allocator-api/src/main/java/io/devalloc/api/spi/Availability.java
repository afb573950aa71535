package io.devalloc.api.spi;

import java.util.Objects;

/**
 * The answer of a provider's availability probe.
 *
 * @param available whether devices can be opened
 * @param reason    why not, or, when available, a short description of what was found
 */
public record Availability(boolean available, String reason) {

    public Availability {
        Objects.requireNonNull(reason, "reason");
    }

    public static Availability available(String detail) {
        return new Availability(true, detail);
    }

    public static Availability unavailable(String reason) {
        return new Availability(false, reason);
    }
}
