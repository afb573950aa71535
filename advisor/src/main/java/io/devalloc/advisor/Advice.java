package io.devalloc.advisor;

import java.util.List;
import java.util.Objects;

/**
 * Everything {@code devalloc advise} found, what every report renders.
 *
 * @param trace          the trace's name
 * @param allocator      the allocator's name
 * @param objective      what the recommendation minimises
 * @param capacityBytes  the user's device capacity ({@code --capacity}), or -1 when none was given
 * @param grid           the grid swept (its problems included)
 * @param trust          the trust line
 * @param settings       every setting, ranked by the objective (best first; settings that could not run or never
 *                       fit last, in grid order)
 * @param recommendation the recommendation, or null when no setting runs without out-of-memory errors
 * @param notes          what the reader should know about the what-if runs
 * @param runs           the replays made in all
 * @param threads        the threads they ran on
 */
public record Advice(String trace, String allocator, Objective objective, long capacityBytes, Grid grid,
                     TrustLine trust, List<SettingResult> settings, Recommendation recommendation, List<String> notes,
                     long runs, int threads) {

    public Advice {
        Objects.requireNonNull(trace, "trace");
        Objects.requireNonNull(allocator, "allocator");
        Objects.requireNonNull(objective, "objective");
        Objects.requireNonNull(grid, "grid");
        Objects.requireNonNull(trust, "trust");
        settings = List.copyOf(settings);
        notes = List.copyOf(notes);
    }

    /** The baseline's what-if result (the recorded setting replayed as every other), or null when it did not run. */
    public SettingResult baseline() {
        for (SettingResult s : settings) {
            if (s.recorded()) {
                return s;
            }
        }
        return null;
    }
}
