package io.devalloc.api.spi;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.devalloc.api.direct.DirectAllocatorProvider;
import java.util.List;
import org.junit.jupiter.api.Test;

class EnvironmentConfigTest {

    private static final EnvironmentConfig PYTORCH =
            new EnvironmentConfig("PYTORCH_CUDA_ALLOC_CONF", "max_split_size_mb:128");
    private static final EnvironmentConfig GROWTH =
            new EnvironmentConfig("TF_FORCE_GPU_ALLOW_GROWTH", "allow_growth:true");

    @Test
    void describesEachPartWithItsVariable() {
        assertEquals("max_split_size_mb:128 (from PYTORCH_CUDA_ALLOC_CONF)", PYTORCH.describe());
        assertEquals("max_split_size_mb:128 (from PYTORCH_CUDA_ALLOC_CONF)",
                EnvironmentConfig.describe("", List.of(PYTORCH)));
        assertEquals("memory_limit_mb:1024; allow_growth:true (from TF_FORCE_GPU_ALLOW_GROWTH)",
                EnvironmentConfig.describe(" memory_limit_mb:1024 ", List.of(GROWTH)));
        assertEquals("allow_growth:true (from TF_FORCE_GPU_ALLOW_GROWTH); max_split_size_mb:128 (from"
                + " PYTORCH_CUDA_ALLOC_CONF)", EnvironmentConfig.describe(null, List.of(GROWTH, PYTORCH)));
        assertEquals("expandable_segments:True", EnvironmentConfig.describe("expandable_segments:True", List.of()));
        assertEquals("", EnvironmentConfig.describe(null, List.of()), "the defaults");
    }

    @Test
    void describesAHugeConfigurationInABoundedExcerpt() {
        String config = "max_split_size_mb:" + "0".repeat(1_000_000) + "128";
        String described = new EnvironmentConfig("PYTORCH_CUDA_ALLOC_CONF", config).describe();
        assertTrue(described.length() < EnvironmentConfig.SHOWN + 100, described);
        assertTrue(described.endsWith("… (" + (config.length() - EnvironmentConfig.SHOWN)
                + " more characters) (from PYTORCH_CUDA_ALLOC_CONF)"), described);
        assertEquals("a:\\x1b]0;x\\x07 (from X)", new EnvironmentConfig("X", "a:\u001b]0;x\u0007").describe());
    }

    @Test
    void needsAVariableAndAConfiguration() {
        assertThrows(IllegalArgumentException.class, () -> new EnvironmentConfig("", "a:1"));
        assertThrows(IllegalArgumentException.class, () -> new EnvironmentConfig("X", " "));
        assertThrows(NullPointerException.class, () -> new EnvironmentConfig(null, "a:1"));
    }

    @Test
    void aProviderThatReadsNoEnvironmentTakesNothingFromIt() {
        assertEquals(List.of(), new DirectAllocatorProvider().configFromEnvironment("memory_limit_mb:5"));
        assertEquals(List.of(), new DirectAllocatorProvider().configFromEnvironment(""));
    }
}
