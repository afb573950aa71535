package io.devalloc.advisor;

import java.util.Locale;

/**
 * What the recommendation minimises. Every objective compares settings on one figure, counted in steps of
 * {@link Advisor#GRANULARITY} for byte figures (two settings within one step are tied), then breaks ties as its
 * {@link #tieBreak()} says, then prefers the recorded setting, then the grid's order.
 *
 * <p>"The card" is a simulated device of the user's capacity: {@code --capacity}, or the capacity the trace tells
 * (its {@code oom} entries, the allocator's own cache flushes); without one, an unlimited device. Only
 * {@link #CAPACITY} looks past the card.
 */
public enum Objective {
    /**
     * The default: what the setting costs on the card. First the settings that run there without an out-of-memory
     * error, then the fewest cache flushes there (allocation retries: each synchronises the device and frees the
     * cache), then the lowest peak reserved there; ties: fewer device calls.
     */
    RESERVED,
    /**
     * The smallest device on which the whole trace runs, flushing the cache as often as it must: what the job could
     * be squeezed into, not what it costs on a larger card; ties: fewer device calls.
     */
    CAPACITY,
    /** Device mallocs and frees on the card (maps and unmaps included), after no out-of-memory error there; ties: the
     * lower peak reserved there. */
    DEVICE_CALLS;

    /** The name {@code --objective} takes and the JSON shows: the constant's, in lower case with hyphens. */
    public String cliName() {
        return name().toLowerCase(Locale.ROOT).replace('_', '-');
    }

    /** What breaks a tie on this objective's figure. */
    public String tieBreak() {
        return this == DEVICE_CALLS ? "the lower peak reserved" : "fewer device calls";
    }

    /**
     * The objective named {@code name} ({@code reserved}, {@code capacity}, {@code device-calls}).
     *
     * @throws IllegalArgumentException for any other name, listing the names
     */
    public static Objective of(String name) {
        for (Objective o : values()) {
            if (o.cliName().equals(name.strip().toLowerCase(Locale.ROOT))) {
                return o;
            }
        }
        throw new IllegalArgumentException("unknown objective '" + name + "': use reserved, capacity or"
                + " device-calls");
    }
}
