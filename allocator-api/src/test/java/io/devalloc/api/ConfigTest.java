package io.devalloc.api;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.devalloc.api.config.AllocatorConfig;
import io.devalloc.api.config.ConfigOption;
import io.devalloc.api.config.ConfigSchema;
import io.devalloc.api.error.InvalidConfigurationException;
import java.util.List;
import org.junit.jupiter.api.Test;

class ConfigTest {

    static final ConfigOption<Boolean> GROWTH = ConfigOption.bool("allow_growth", false, "grow");
    static final ConfigOption<Long> LIMIT = ConfigOption.integer("memory_limit_mb", 1, 1_000_000, null, "limit");
    static final ConfigOption<Double> FRACTION = ConfigOption.decimal("fragmentation_fraction", 0, 1, false, 0.0, "f");
    static final ConfigOption<Long> SIZE = ConfigOption.size("max_split_size", null, "split");
    static final ConfigOption<String> LIST = new ConfigOption<>("roundup_power2_divisions", "a list", null, "divs",
            text -> text);
    static final ConfigSchema SCHEMA =
            ConfigSchema.of("allocator 'test'", List.of(GROWTH, LIMIT, FRACTION, SIZE, LIST));

    @Test
    void emptyMeansDefaults() {
        AllocatorConfig c = AllocatorConfig.parse("  ", SCHEMA);
        assertFalse(c.get(GROWTH));
        assertNull(c.get(LIMIT));
        assertFalse(c.isSet(GROWTH));
        assertEquals("", c.toString());
        assertEquals(AllocatorConfig.defaults(SCHEMA).explicitValues(), c.explicitValues());
    }

    @Test
    void parsesEveryKindAndKeepsBracketedCommas() {
        AllocatorConfig c = AllocatorConfig.parse(
                "allow_growth:True, memory_limit_mb:2048,fragmentation_fraction:0.25,max_split_size:512MiB,"
                        + "roundup_power2_divisions:[256:1,512:2,>:8]", SCHEMA);
        assertTrue(c.get(GROWTH));
        assertEquals(2048L, c.get(LIMIT));
        assertEquals(0.25, c.get(FRACTION));
        assertEquals(512L << 20, c.get(SIZE));
        assertEquals("[256:1,512:2,>:8]", c.get(LIST));
        assertTrue(c.isSet(LIMIT));
    }

    @Test
    void unknownKeyNamesTheAcceptedOnes() {
        InvalidConfigurationException e = assertThrows(InvalidConfigurationException.class,
                () -> AllocatorConfig.parse("allow_growht:true", SCHEMA));
        assertEquals("allow_growht", e.key());
        assertTrue(e.getMessage().contains("allow_growth, memory_limit_mb"), e.getMessage());
    }

    @Test
    void badValuesNameKeyValueAndWhatIsAllowed() {
        assertBad("allow_growth:yes", "allow_growth", "yes", "true or false");
        assertBad("memory_limit_mb:0", "memory_limit_mb", "0", "from 1 to 1000000");
        assertBad("memory_limit_mb:12x", "memory_limit_mb", "12x", "whole number");
        assertBad("memory_limit_mb:99999999999999999999", "memory_limit_mb", "99999999999999999999", "whole number");
        assertBad("fragmentation_fraction:1", "fragmentation_fraction", "1", "< 1");
        assertBad("fragmentation_fraction:NaN", "fragmentation_fraction", "NaN", "<=");
        assertBad("max_split_size:-5MiB", "max_split_size", "-5MiB", "negative");
        assertBad("allow_growth:", "allow_growth", "", "true or false");
    }

    private static void assertBad(String text, String key, String value, String hint) {
        InvalidConfigurationException e = assertThrows(InvalidConfigurationException.class,
                () -> AllocatorConfig.parse(text, SCHEMA), text);
        assertEquals(key, e.key(), text);
        assertEquals(value, e.value(), text);
        assertTrue(e.getMessage().contains(hint), e.getMessage());
        assertTrue(e.getMessage().contains(key), e.getMessage());
    }

    /**
     * A configuration from a stranger's environment: a repeated key 10,000 times with a terminal escape in it. The
     * refusal quotes a bounded excerpt, escapes the control characters, and counts what it left out.
     */
    @Test
    void aHugeOrHostileConfigurationIsQuotedInABoundedExcerpt() {
        String text = "allow_growth:true,".repeat(10_000) + "\u001b]0;owned\u0007:1";
        for (String bad : List.of(text, "x".repeat(100_000) + ":1", "memory_limit_mb:" + "9".repeat(100_000),
                "[".repeat(100_000), "\u001b[2J" + "y".repeat(100_000))) {
            InvalidConfigurationException e = assertThrows(InvalidConfigurationException.class,
                    () -> AllocatorConfig.parse(bad, SCHEMA));
            assertTrue(e.getMessage().length() < 2_000, e.getMessage().length() + ": " + e.getMessage());
            assertTrue(e.getMessage().contains("more characters)"), e.getMessage());
            assertTrue(e.getMessage().chars().noneMatch(c -> c < 0x20), e.getMessage());
        }
    }

    @Test
    void malformedTextIsRefused() {
        for (String bad : new String[] {"allow_growth", "allow_growth:true,,memory_limit_mb:1", ",", "a:[1,2",
                "a:1]", "allow_growth:true,allow_growth:false"}) {
            assertThrows(InvalidConfigurationException.class, () -> AllocatorConfig.parse(bad, SCHEMA), bad);
        }
    }

    @Test
    void emptySchemaAcceptsOnlyNothing() {
        ConfigSchema none = ConfigSchema.empty("allocator 'x'");
        AllocatorConfig.parse("", none);
        InvalidConfigurationException e = assertThrows(InvalidConfigurationException.class,
                () -> AllocatorConfig.parse("a:1", none));
        assertTrue(e.getMessage().contains("takes no options"), e.getMessage());
    }

    @Test
    void optionsOfAnotherSchemaAreRejected() {
        AllocatorConfig c = AllocatorConfig.parse("",
                ConfigSchema.of("other", List.of(ConfigOption.bool("x", true, "x"))));
        assertThrows(IllegalArgumentException.class, () -> c.get(GROWTH));
    }
}
