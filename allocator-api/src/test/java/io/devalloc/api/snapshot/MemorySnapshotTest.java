package io.devalloc.api.snapshot;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.devalloc.api.device.DeviceDescriptor;
import io.devalloc.api.device.DeviceKind;
import io.devalloc.api.stats.AllocatorStats;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The settings a {@link MemorySnapshot} carries: a deep, unmodifiable, order-keeping copy of plain values. */
class MemorySnapshotTest {

    private static final DeviceDescriptor DEVICE =
            new DeviceDescriptor("sim", 0, "sim", DeviceKind.SIMULATED, 1L << 30);
    private static final AllocatorStats STATS =
            new AllocatorStats(0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, Long.MAX_VALUE);

    private static MemorySnapshot withSettings(Map<String, Object> settings) {
        return new MemorySnapshot("x", DEVICE, List.of(), STATS, settings);
    }

    @Test
    void withoutSettingsTheMapIsEmpty() {
        assertEquals(Map.of(), new MemorySnapshot("x", DEVICE, List.of(), STATS).settings());
    }

    @Test
    void settingsAreCopiedDeeplyKeepTheirOrderAndCannotBeChanged() {
        Map<String, Object> nested = new LinkedHashMap<>();
        nested.put("b", 2L);
        nested.put("a", 1);
        List<Object> list = new ArrayList<>(List.of("x", 0.5, true));
        Map<String, Object> settings = new LinkedHashMap<>();
        settings.put("z", "text");
        settings.put("nested", nested);
        settings.put("list", list);
        MemorySnapshot s = withSettings(settings);
        nested.put("c", 3L);
        list.add("y");
        settings.put("late", false);
        assertEquals(List.of("z", "nested", "list"), List.copyOf(s.settings().keySet()));
        assertEquals(List.of("b", "a"), List.copyOf(((Map<?, ?>) s.settings().get("nested")).keySet()));
        assertEquals(List.of("x", 0.5, true), s.settings().get("list"));
        assertThrows(UnsupportedOperationException.class, () -> s.settings().put("k", 1L));
        @SuppressWarnings("unchecked")
        Map<String, Object> copiedNested = (Map<String, Object>) s.settings().get("nested");
        assertThrows(UnsupportedOperationException.class, () -> copiedNested.put("k", 1L));
        assertEquals(s, withSettings(s.settings()), "records with equal settings are equal");
    }

    @Test
    void aSettingThatIsNotAPlainValueIsRefusedWithItsPath() {
        Map<String, Object> inner = new HashMap<>();
        inner.put("when", Instant.EPOCH);
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> withSettings(Map.of("outer", inner)));
        assertTrue(e.getMessage().startsWith("settings.outer.when: a setting must be a String"), e.getMessage());
        Map<String, Object> withNull = new HashMap<>();
        withNull.put("none", null);
        assertEquals("settings.none: a setting cannot be null",
                assertThrows(IllegalArgumentException.class, () -> withSettings(withNull)).getMessage());
        Map<Object, Object> badKey = new HashMap<>();
        badKey.put(1, "x");
        @SuppressWarnings("unchecked")
        Map<String, Object> cast = (Map<String, Object>) (Map<?, ?>) Map.of("k", badKey);
        assertEquals("settings.k: a settings key must be a String, got java.lang.Integer",
                assertThrows(IllegalArgumentException.class, () -> withSettings(cast)).getMessage());
        assertThrows(NullPointerException.class, () -> withSettings(null));
    }
}
