package io.devalloc.advisor;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * What upstream documents against a setting, for the recommendation: a reader pastes the line only knowing them.
 * Keys are matched in the configuration text as {@code key:value} entries.
 */
final class Caveats {

    private Caveats() {
    }

    static List<String> of(String allocator, String config) {
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
        if (allocator.equals("bfc") && !c.contains("allow_growth:true")) {
            out.add("without allow_growth, TensorFlow's BFC takes the whole device (or memory_limit) at its first"
                    + " allocation");
        }
        return out;
    }
}
