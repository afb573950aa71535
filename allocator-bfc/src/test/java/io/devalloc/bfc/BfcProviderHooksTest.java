package io.devalloc.bfc;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/** What BFC's provider tells the tools: its one-thread replay configuration, its caveat, no PyTorch ground truth. */
class BfcProviderHooksTest {

    private final BfcAllocatorProvider bfc = new BfcAllocatorProvider(Map.of());

    @Test
    void aReplayTurnsTheWaitForFreesOffUnlessTheTextSetsIt() {
        assertEquals("retry_timeout_ms:0", bfc.replayConfig(""));
        assertEquals("allow_growth:true,retry_timeout_ms:0", bfc.replayConfig("allow_growth:true"));
        assertEquals("retry_timeout_ms:50", bfc.replayConfig("retry_timeout_ms:50"));
        assertEquals("allow_retry_on_failure:false", bfc.replayConfig("allow_retry_on_failure:false"));
    }

    @Test
    void withoutGrowthItsCaveatSaysItTakesTheWholeLimit() {
        assertEquals(1, bfc.caveats("").size());
        assertTrue(bfc.caveats("").getFirst().startsWith("without allow_growth"));
        assertEquals(List.of(), bfc.caveats("allow_growth:true"));
        assertEquals(List.of(), bfc.caveats("allow_growth: TRUE"));
    }

    @Test
    void itIsNoPortOfPyTorchAndItsSettingGoesInDevallocsVariable() {
        assertFalse(bfc.portsPyTorch());
        assertEquals(Optional.empty(), bfc.frameworkVariable("allow_growth:true"));
    }
}
