package io.devalloc.replay;

import io.devalloc.api.spi.AllocatorProvider;
import io.devalloc.api.spi.AllocatorRegistry;
import java.util.Objects;

/**
 * Which replays a PyTorch trace's ground truth can judge. The ground truth ({@link ReplayResult.GroundTruth}) is
 * what the allocator that recorded the trace did: the {@code segment_*} rows of
 * {@code torch.cuda.memory._record_memory_history}, which PyTorch's caching allocator writes. A replay through
 * {@code caching} replays that allocator, under the recorded settings or others, so its device mallocs, frees and
 * peak either match the trace's or show what a setting changes: comparable. {@code caching-host} is PyTorch's
 * caching design too (its pinned-host allocator) and stays compared as it always was: its difference shows what its
 * power-of-two rounding and unsplit blocks change. {@code direct}, {@code bfc} and any other allocator make
 * different device calls by design; a difference would only say that the allocators differ, so the outputs say
 * "not comparable" instead of naming one (the engine still computes it:
 * {@link ReplayResult.GroundTruth#firstDifference()}).
 *
 * <p>Stateless and thread-safe.
 */
public final class GroundTruthComparability {

    /**
     * The allocators on the class path, found once: whether one ports PyTorch's allocator is its provider's to say
     * ({@link AllocatorProvider#portsPyTorch()}), as results name their allocator only.
     */
    private static final class Found {
        static final AllocatorRegistry ALLOCATORS = AllocatorRegistry.load();
    }

    /**
     * Why another allocator is not comparable: one sentence for the notes, the same for every such allocator, so
     * that {@code compare} prints it once for all the runs it applies to.
     */
    public static final String NOT_COMPARABLE_NOTE = "not comparable with the trace's ground truth: its segment rows"
            + " are what PyTorch's caching allocator did, which only caching and caching-host replay (under any"
            + " settings); another allocator's device mallocs differ by design, so a difference would say nothing";

    private GroundTruthComparability() {
    }

    /** Whether a replay through {@code allocator} can be compared with a PyTorch trace's ground truth. */
    public static boolean comparable(String allocator) {
        Objects.requireNonNull(allocator, "allocator");
        return Found.ALLOCATORS.names().contains(allocator) && Found.ALLOCATORS.get(allocator).portsPyTorch();
    }

    /**
     * Why a replay through {@code allocator} is not comparable with a PyTorch trace's ground truth
     * ({@link #NOT_COMPARABLE_NOTE}).
     *
     * @throws IllegalArgumentException if it is comparable
     */
    public static String whyNot(String allocator) {
        if (comparable(allocator)) {
            throw new IllegalArgumentException(allocator + " is comparable with a PyTorch trace's ground truth");
        }
        return NOT_COMPARABLE_NOTE;
    }
}
