package io.devalloc.advisor.report;

import io.devalloc.replay.ReplayResult;
import java.util.Map;

/** The waste at a replay's peak by cause, as reports name the causes. */
final class Waste {

    private Waste() {
    }

    /** Cause → bytes, or null when the replay has no explanation of its peak. */
    static Map<String, Long> of(ReplayResult r) {
        return null;
    }
}
