package io.devalloc.replay;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

class GroundTruthComparabilityTest {

    @Test
    void onlyPyTorchsCachingAllocatorsAreComparable() {
        assertTrue(GroundTruthComparability.comparable("caching"));
        assertTrue(GroundTruthComparability.comparable("caching-host"));
        for (String other : new String[] {"direct", "bfc", "Caching", "my-plugin"}) {
            assertFalse(GroundTruthComparability.comparable(other), other);
        }
    }

    @Test
    void theReasonIsOneSentenceForEveryOtherAllocatorAndComparableOnesHaveNone() {
        String direct = GroundTruthComparability.whyNot("direct");
        assertEquals(direct, GroundTruthComparability.whyNot("bfc"), "one note for every other allocator");
        assertTrue(direct.startsWith("not comparable with the trace's ground truth: its segment rows are what"
                + " PyTorch's caching allocator did, which only caching and caching-host replay"), direct);
        for (String comparable : new String[] {"caching", "caching-host"}) {
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                    () -> GroundTruthComparability.whyNot(comparable));
            assertEquals(comparable + " is comparable with a PyTorch trace's ground truth", e.getMessage());
        }
    }
}
