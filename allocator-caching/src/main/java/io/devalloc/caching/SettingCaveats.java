package io.devalloc.caching;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.Set;

/**
 * What PyTorch documents against a setting of its allocators, and where the setting goes: what
 * {@link PyTorchAllocatorProvider} answers to {@code AllocatorProvider.caveats} and {@code frameworkVariable}. Keys
 * are matched in the configuration text as {@code key:value} entries. Stateless and thread-safe.
 */
final class SettingCaveats {

    /** PyTorch's variable for its CUDA allocators' settings (device and pinned host alike). */
    static final String PYTORCH_VARIABLE = "PYTORCH_CUDA_ALLOC_CONF";

    private SettingCaveats() {
    }

    /** The keys of {@code config} among {@code devallocOwn}, the keys of devalloc's own that PyTorch refuses. */
    static List<String> devallocKeys(String config, Set<String> devallocOwn) {
        List<String> found = new ArrayList<>();
        for (String entry : config.split(",")) {
            int colon = entry.indexOf(':');
            String key = (colon < 0 ? entry : entry.substring(0, colon)).strip().toLowerCase(Locale.ROOT);
            if (devallocOwn.contains(key) && !found.contains(key)) {
                found.add(key);
            }
        }
        return found;
    }

    /** {@link #PYTORCH_VARIABLE}, unless {@code config} uses a key of devalloc's own, which PyTorch refuses. */
    static Optional<String> pytorchVariable(String config, Set<String> devallocOwn) {
        return devallocKeys(config, devallocOwn).isEmpty() ? Optional.of(PYTORCH_VARIABLE) : Optional.empty();
    }

    /** What upstream documents against {@code config}, one sentence each. */
    static List<String> of(String config, Set<String> devallocOwn) {
        List<String> out = new ArrayList<>();
        String c = config.toLowerCase(Locale.ROOT).replace(" ", "");
        if (c.contains("expandable_segments:true")) {
            out.add("expandable segments do not work with CUDA IPC (tensors shared between processes, e.g. with"
                    + " torch.multiprocessing): PyTorch keeps them off by default for that reason (pytorch#130330)");
            out.add("expandable segments do not work with a CUDAPluggableAllocator used through a MemPool"
                    + " (pytorch#147851)");
            out.add("some serving systems' sleep modes (vLLM's sleep mode, NIXL transfers) break with expandable"
                    + " segments (vllm-project/vllm#41268)");
        }
        if (c.contains("per_process_memory_fraction:")) {
            out.add("per_process_memory_fraction caps this process at that fraction of the device: allocations"
                    + " beyond it fail even when the device has memory free");
        }
        if (c.contains("garbage_collection_threshold:") && !c.contains("per_process_memory_fraction:")) {
            out.add("garbage_collection_threshold acts only when a per_process_memory_fraction below 1 is set"
                    + " (pytorch#106660)");
        }
        for (String key : devallocKeys(config, devallocOwn)) {
            out.add(key + " is devalloc's key, not PyTorch's: PyTorch refuses it, so the line sets devalloc's"
                    + " DEVALLOC_CONFIG, not PYTORCH_CUDA_ALLOC_CONF");
        }
        return out;
    }
}
