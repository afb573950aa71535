package io.devalloc.advisor;

import io.devalloc.replay.ReplayResult;
import java.util.Objects;

/**
 * What the advisor found for one setting of the grid. The figures are those of one replay on an unlimited device
 * ({@link Advisor#UNLIMITED_DEVICE}) with the what-if rules (see the package documentation), exactly what
 * {@code devalloc replay TRACE --config CONFIG --empty-cache-at-segment-free} reports.
 *
 * @param entry            the setting and where it came from
 * @param recorded         whether it is the setting the trace was recorded with (the baseline)
 * @param result           the replay on the unlimited device; null when the setting could not run ({@code error})
 * @param minCapacityBytes the smallest capacity, a multiple of {@link Advisor#GRANULARITY}, on which the whole trace
 *                         runs with no out-of-memory error (one {@link Advisor#GRANULARITY} less fails); -1 when it
 *                         did not run even on the unlimited device, or could not run at all
 * @param searchRuns       the replays the capacity search took
 * @param atCapacity       the replay on the user's device ({@code --capacity}), or null when none was given
 * @param error            why the setting could not run, or null
 */
public record SettingResult(GridEntry entry, boolean recorded, ReplayResult result, long minCapacityBytes,
                            int searchRuns, CapacityCheck atCapacity, String error) {

    public SettingResult {
        Objects.requireNonNull(entry, "entry");
        if ((result == null) == (error == null)) {
            throw new IllegalArgumentException("a setting has either a result or an error");
        }
    }

    /** The setting's configuration text. */
    public String config() {
        return entry.config();
    }

    /** Whether the setting ran. */
    public boolean ran() {
        return result != null;
    }

    /** Whether a smallest capacity was found: the setting ran, and ran without out-of-memory errors. */
    public boolean fits() {
        return minCapacityBytes > 0;
    }

    /** Device mallocs and frees (maps and unmaps included) on the unlimited device; -1 when it did not run. */
    public long deviceCalls() {
        return result == null ? -1 : result.deviceMallocs() + result.deviceFrees();
    }
}
