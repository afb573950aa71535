package io.devalloc.advisor;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.devalloc.replay.ReplayResult;
import org.junit.jupiter.api.Test;

class SettingResultBuilderTest {

    private static final GridEntry ENTRY = new GridEntry("expandable_segments:True", "test");

    private static ReplayResult replay(long peakReserved) {
        return ReplayResult.builder().trace("t.csv").allocator("caching").device("sim").conf(ENTRY.config())
                .peakReservedBytes(peakReserved)
                .timeline(new ReplayResult.Timeline(new long[0], new long[0], new long[0])).build();
    }

    @Test
    void eachPartGoesToItsComponent() {
        ReplayResult full = replay(4096);
        ReplayResult smallest = replay(2048);
        CapacityCheck card = new CapacityCheck(8192, replay(4096), 0);
        SettingResult built = SettingResult.builder().entry(ENTRY).recorded(true).result(full).minCapacityBytes(2048)
                .atMinCapacity(smallest).searchRuns(7).atCapacity(card).build();
        assertEquals(new SettingResult(ENTRY, true, full, 2048, smallest, 7, card, null), built);
    }

    @Test
    void partsNotSetSayNoneWasFound() {
        SettingResult r = SettingResult.builder().entry(ENTRY).result(replay(4096)).build();
        assertFalse(r.recorded());
        assertEquals(-1, r.minCapacityBytes());
        assertFalse(r.fits());
        assertNull(r.atMinCapacity());
        assertEquals(0, r.searchRuns());
        assertNull(r.atCapacity());
        assertNull(r.error());
    }

    @Test
    void aMissingEntryIsRefusedByName() {
        IllegalStateException e = assertThrows(IllegalStateException.class,
                () -> SettingResult.builder().result(replay(4096)).build());
        assertEquals("a setting's result needs its grid entry: call entry(...) before build()", e.getMessage());
    }

    @Test
    void aResultOrAnErrorButNotBoth() {
        assertThrows(IllegalArgumentException.class, () -> SettingResult.builder().entry(ENTRY).build());
        assertThrows(IllegalArgumentException.class,
                () -> SettingResult.builder().entry(ENTRY).result(replay(4096)).error("refused").build());
        assertEquals("refused", SettingResult.builder().entry(ENTRY).error("refused").build().error());
    }
}
