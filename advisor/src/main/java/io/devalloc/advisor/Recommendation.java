package io.devalloc.advisor;

import java.util.List;
import java.util.Locale;
import java.util.Objects;

/**
 * The setting the advisor recommends for the objective.
 *
 * @param setting        the setting to use: the best one when changing to it is worth it ({@link #why()}), else the
 *                       recorded setting
 * @param env            the line to paste: {@code PYTORCH_CUDA_ALLOC_CONF=...} for PyTorch's allocators,
 *                       {@code DEVALLOC_CONFIG=...} for others
 * @param savingBytes    the recorded setting's figure minus the recommended one's, in bytes: the peak reserved on the
 *                       card for {@code reserved} and {@code device-calls}, the smallest capacity for
 *                       {@code capacity}; null when the recorded setting has no such figure
 * @param savingFraction {@code savingBytes} over the recorded setting's figure; null with it
 * @param savingDeviceCalls the recorded setting's device mallocs and frees minus the recommended one's (on the card;
 *                       on the unlimited device for {@code capacity}); null when the recorded setting has no figure
 * @param savingDeviceCallsFraction {@code savingDeviceCalls} over the recorded setting's device calls; null with it
 * @param alreadyBest    whether the recommendation is to keep the recorded setting
 * @param why            why this setting: what it avoids or saves, or why the recorded setting stays
 * @param reason         one sentence on why this setting
 * @param runnerUp       when the recorded setting stays though another ranked first ({@link Why#WITHIN_MARGIN}), that
 *                       one; else null
 * @param costs          where the recommended setting reserves more than the recorded one, in words (empty when
 *                       nowhere, and for the recorded setting itself)
 * @param caveats        what upstream documents against the setting; empty when nothing
 */
public record Recommendation(SettingResult setting, String env, Long savingBytes, Double savingFraction,
                             Long savingDeviceCalls, Double savingDeviceCallsFraction, boolean alreadyBest, Why why,
                             String reason, SettingResult runnerUp, List<String> costs, List<String> caveats) {

    /** Why the recommended setting. */
    public enum Why {
        /** The recorded setting runs out of memory on the card; this one does not. */
        AVOIDS_OOM,
        /** It flushes the cache fewer times on the card than the recorded setting. */
        FEWER_FLUSHES,
        /** It saves at least the margin ({@link MinSaving}) of the objective's figure. */
        SAVES,
        /** The recorded setting ranked first. */
        ALREADY_BEST,
        /** Another setting ranked first, but it saves less than the margin: the recorded setting stays. */
        WITHIN_MARGIN,
        /**
         * The settings ranked above the recorded one all hold more of the card than it does (a change never does):
         * the recorded setting stays, and the first of them is the runner-up.
         */
        HOLDS_LESS;

        /** The name the JSON gives. */
        public String jsonName() {
            return name().toLowerCase(Locale.ROOT);
        }
    }

    public Recommendation {
        Objects.requireNonNull(setting, "setting");
        Objects.requireNonNull(env, "env");
        Objects.requireNonNull(why, "why");
        Objects.requireNonNull(reason, "reason");
        costs = List.copyOf(costs);
        caveats = List.copyOf(caveats);
    }
}
