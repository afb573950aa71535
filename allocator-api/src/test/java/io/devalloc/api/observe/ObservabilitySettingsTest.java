package io.devalloc.api.observe;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.devalloc.api.DeviceAllocators;
import io.devalloc.api.error.InvalidConfigurationException;
import java.util.Map;
import org.junit.jupiter.api.Test;

class ObservabilitySettingsTest {

    @Test
    void nothingSetMeansNoNameNoEventsNoBean() {
        assertEquals(ObservabilitySettings.NONE, ObservabilitySettings.from(Map.of(), Map.of()));
    }

    @Test
    void aPropertyWinsOverTheEnvironment() {
        ObservabilitySettings s = ObservabilitySettings.from(
                Map.of("devalloc.name", "trainer", "devalloc.jfr", "TRUE"),
                Map.of("DEVALLOC_NAME", "other", "DEVALLOC_JFR", "false", "DEVALLOC_JMX", " true "));
        assertEquals(new ObservabilitySettings("trainer", true, true), s);
        assertEquals(new ObservabilitySettings("", false, false),
                ObservabilitySettings.from(Map.of("devalloc.jmx", "false"), Map.of("DEVALLOC_JMX", "true")));
    }

    @Test
    void aSwitchThatIsNeitherTrueNorFalseIsRefusedWithItsKey() {
        InvalidConfigurationException e = assertThrows(InvalidConfigurationException.class,
                () -> ObservabilitySettings.from(Map.of(), Map.of("DEVALLOC_JFR", "yes")));
        assertEquals("devalloc.jfr", e.key());
        assertEquals("yes", e.value());
        assertTrue(e.getMessage().contains("true or false"), e.getMessage());
    }

    @Test
    void theBuilderRefusesABlankName() {
        assertThrows(IllegalArgumentException.class, () -> DeviceAllocators.builder().name("  "));
    }
}
