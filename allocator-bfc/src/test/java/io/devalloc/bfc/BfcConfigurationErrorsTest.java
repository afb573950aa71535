package io.devalloc.bfc;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.devalloc.api.error.InvalidConfigurationException;
import io.devalloc.api.error.OutOfMemoryException;
import io.devalloc.api.units.ByteSize;
import io.devalloc.sim.SimulatedDevice;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** Issue 15, defects 8, 9 and 10: configuration errors are typed and caught at creation; OOM texts never say -1. */
class BfcConfigurationErrorsTest {
    static final long MiB = ByteSize.MiB, GiB = ByteSize.GiB;

    private static BfcAllocator create(SimulatedDevice d, String config) {
        return new BfcAllocatorProvider(Map.of()).create(d, config);
    }

    /**
     * Defect 8: a limit larger than the address space the device can reserve (the simulator's is 64 TiB by default,
     * memory_limit_mb:100000000 is 95 TiB). Before: accepted, then every allocation failed with an out-of-memory
     * error blaming the device.
     */
    @Test
    void aLimitBeyondTheReservableAddressSpaceIsRefusedAtCreation() {
        try (SimulatedDevice d = SimulatedDevice.ofCapacity(GiB)) {
            InvalidConfigurationException e = assertThrows(InvalidConfigurationException.class,
                    () -> create(d, "memory_limit_mb:100000000,virtual_memory:true"));
            assertEquals("memory_limit_mb", e.key());
            assertEquals("100000000", e.value());
            assertTrue(e.getMessage().contains("cannot reserve") && e.getMessage().contains("virtual_memory:false")
                    && e.getMessage().contains("lower memory_limit_mb"), e.getMessage());
            assertEquals(0, d.virtualMemory().orElseThrow().mappedBytes());
            // The same limit without virtual memory reserves nothing up front and is accepted, as before.
            try (BfcAllocator plain = create(d, "memory_limit_mb:100000000,virtual_memory:false,allow_growth:true")) {
                plain.free(plain.malloc(1000));
            }
        }
    }

    /** Defect 8, at the edge: a small address space takes a limit that fits and refuses one that does not. */
    @Test
    void theReservationIsMadeAtCreationAndReleasedAtClose() {
        try (SimulatedDevice d = SimulatedDevice.builder().capacity(64 * MiB).addressSpace(256 * MiB).build()) {
            assertThrows(InvalidConfigurationException.class,
                    () -> create(d, "memory_limit_mb:512,virtual_memory:true"));
            BfcAllocator fits = create(d, "memory_limit_mb:200,virtual_memory:true");
            // The 200 MiB reservation is held from creation on: a second one does not fit beside it.
            assertThrows(InvalidConfigurationException.class,
                    () -> create(d, "memory_limit_mb:100,virtual_memory:true"));
            fits.free(fits.malloc(1000));
            fits.close();
            create(d, "memory_limit_mb:100,virtual_memory:true").close();   // released at close
        }
    }

    /** Defect 9: the two configuration errors of creation are InvalidConfigurationException, naming the key. */
    @Test
    void virtualMemoryErrorsAreConfigurationErrors() {
        try (SimulatedDevice d = SimulatedDevice.ofCapacity(GiB)) {
            InvalidConfigurationException small = assertThrows(InvalidConfigurationException.class,
                    () -> create(d, "memory_limit_mb:1,virtual_memory:true"));
            assertEquals("memory_limit_mb", small.key());
            assertEquals("1", small.value());
            assertTrue(small.getMessage().contains("raise memory_limit_mb or use virtual_memory:false"),
                    small.getMessage());
        }
        try (SimulatedDevice plain = SimulatedDevice.builder().capacity(GiB).virtualMemory(false).build()) {
            InvalidConfigurationException none = assertThrows(InvalidConfigurationException.class,
                    () -> create(plain, "virtual_memory:true"));
            assertEquals("virtual_memory", none.key());
            assertTrue(none.getMessage().contains("use virtual_memory:auto or false"), none.getMessage());
        }
    }

    /** Defect 9, the other paths: every bad configuration string is an InvalidConfigurationException. */
    @ParameterizedTest
    @ValueSource(strings = {"memory_limit_mb:0", "memory_limit_mb:-5", "memory_limit_mb:99999999999999999999",
            "fragmentation_fraction:1", "fragmentation_fraction:NaN", "retry_timeout_ms:-1", "virtual_memory:maybe",
            "allow_growth:yes", "timestamped:1", "nonsense:true", "memory_limit_mb"})
    void badStringsAreConfigurationErrors(String config) {
        try (SimulatedDevice d = SimulatedDevice.ofCapacity(GiB)) {
            assertThrows(InvalidConfigurationException.class, () -> create(d, config), config);
        }
    }

    /** Defect 10: a request whose rounding to 256 B overflows is "too large to round", not "rounded to -1". */
    @Test
    void aRequestTooLargeToRoundSaysSo() {
        try (SimulatedDevice d = SimulatedDevice.ofCapacity(GiB); BfcAllocator a = create(d, "")) {
            OutOfMemoryException e = assertThrows(OutOfMemoryException.class, () -> a.malloc(Long.MAX_VALUE));
            assertFalse(e.getMessage().contains("-1"), e.getMessage());
            assertTrue(e.getMessage().contains("too large to round to a multiple of 256 bytes"), e.getMessage());
            OutOfMemoryException ordinary = assertThrows(OutOfMemoryException.class, () -> a.malloc(2 * GiB + 1));
            assertTrue(ordinary.getMessage().contains("rounded to " + (2 * GiB + 256)), ordinary.getMessage());
        }
    }
}
