package io.devalloc.advisor;

import java.util.Locale;

/**
 * What the recommendation minimises. Every objective compares settings on one figure, counted in steps of
 * {@link Advisor#GRANULARITY} for byte figures (two settings within one step are tied), then breaks ties as its
 * {@link #tieBreak()} says, then prefers the recorded setting, then the grid's order.
 */
public enum Objective {
    /** The smallest device capacity the whole trace runs on without out-of-memory errors; ties: fewer device calls. */
    CAPACITY("capacity"),
    /** The peak reserved bytes on an unlimited device; ties: fewer device calls. */
    RESERVED("reserved"),
    /** Device mallocs and frees (maps and unmaps included); ties: the smaller capacity. */
    DEVICE_CALLS("device-calls");

    private final String cliName;

    Objective(String cliName) {
        this.cliName = cliName;
    }

    /** The name {@code --objective} takes and the JSON shows. */
    public String cliName() {
        return cliName;
    }

    /** What breaks a tie on this objective's figure. */
    public String tieBreak() {
        return this == DEVICE_CALLS ? "the smaller capacity" : "fewer device calls";
    }

    /**
     * The objective named {@code name} ({@code capacity}, {@code reserved}, {@code device-calls}).
     *
     * @throws IllegalArgumentException for any other name, listing the names
     */
    public static Objective of(String name) {
        for (Objective o : values()) {
            if (o.cliName.equals(name.strip().toLowerCase(Locale.ROOT))) {
                return o;
            }
        }
        throw new IllegalArgumentException("unknown objective '" + name + "': use capacity, reserved or device-calls");
    }
}
