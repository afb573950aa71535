package io.devalloc.advisor;

import java.util.List;
import java.util.Objects;

/**
 * The setting the advisor recommends for the objective.
 *
 * @param setting        the best setting by the objective
 * @param env            the line to paste: {@code PYTORCH_CUDA_ALLOC_CONF=...} for PyTorch's allocators,
 *                       {@code DEVALLOC_CONFIG=...} for others
 * @param savingBytes    the baseline's figure minus the recommended one's, in bytes (the objective's figure for
 *                       {@code capacity} and {@code reserved}, the smallest capacity for {@code device-calls}); null
 *                       when the baseline has no such figure
 * @param savingFraction {@code savingBytes} over the baseline's figure; null with it
 * @param savingDeviceCalls the baseline's device mallocs and frees minus the recommended one's (the
 *                       {@code device-calls} objective's own unit, given for every objective); null when the baseline
 *                       has no smallest capacity
 * @param savingDeviceCallsFraction {@code savingDeviceCalls} over the baseline's device calls; null with it
 * @param alreadyBest    whether the recorded setting is the best
 * @param reason         one sentence on why this setting
 * @param caveats        what upstream documents against the setting; empty when nothing
 */
public record Recommendation(SettingResult setting, String env, Long savingBytes, Double savingFraction,
                             Long savingDeviceCalls, Double savingDeviceCallsFraction, boolean alreadyBest,
                             String reason, List<String> caveats) {

    public Recommendation {
        Objects.requireNonNull(setting, "setting");
        Objects.requireNonNull(env, "env");
        Objects.requireNonNull(reason, "reason");
        caveats = List.copyOf(caveats);
    }
}
