package io.devalloc.advisor;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;

/**
 * What upstream documents against a setting, for the recommendation: a reader pastes the line only knowing them.
 * Keys are matched in the configuration text as {@code key:value} entries.
 */
final class Caveats {

    private Caveats() {
    }

    /** The keys of devalloc's own, which PyTorch does not have, of PyTorch's allocators. */
    private static final Map<String, Set<String>> DEVALLOC_KEYS = Map.of(
            "caching", Set.of("search_pool_after_release"),
            "caching-host", Set.of("pinned_round_threshold_mb"));

    /** The keys of {@code config} that are devalloc's own, not PyTorch's, for a PyTorch allocator; else none. */
    static List<String> devallocKeys(String allocator, String config) {
        Set<String> own = DEVALLOC_KEYS.getOrDefault(allocator, Set.of());
        List<String> found = new ArrayList<>();
        for (String entry : config.split(",")) {
            int colon = entry.indexOf(':');
            String key = (colon < 0 ? entry : entry.substring(0, colon)).strip().toLowerCase(Locale.ROOT);
            if (own.contains(key) && !found.contains(key)) {
                found.add(key);
            }
        }
        return found;
    }

    /** Whether {@code config} turns expandable segments on. */
    static boolean expandableSegments(String config) {
        return config.toLowerCase(Locale.ROOT).replace(" ", "").contains("expandable_segments:true");
    }

    static List<String> of(String allocator, String config) {
        List<String> out = new ArrayList<>();
        String c = config.toLowerCase(Locale.ROOT).replace(" ", "");
        if (expandableSegments(config)) {
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
        for (String key : devallocKeys(allocator, config)) {
            out.add(key + " is devalloc's key, not PyTorch's: PyTorch refuses it, so the line sets devalloc's"
                    + " DEVALLOC_CONFIG, not PYTORCH_CUDA_ALLOC_CONF");
        }
        if (allocator.equals("bfc") && !c.contains("allow_growth:true")) {
            out.add("without allow_growth, TensorFlow's BFC takes the whole device (or memory_limit) at its first"
                    + " allocation");
        }
        return out;
    }
}
