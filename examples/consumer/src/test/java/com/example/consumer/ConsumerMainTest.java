package com.example.consumer;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.devalloc.api.stats.AllocatorStats;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

/** The consumer's steps on the class path, where Guice is not either. */
class ConsumerMainTest {

    @Test
    void allocatesFreesAndEmptiesTheCacheWithoutGuice() {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        AllocatorStats last;
        try (PrintStream out = new PrintStream(bytes, true, StandardCharsets.UTF_8)) {
            last = ConsumerMain.run(out);
        }
        String output = bytes.toString(StandardCharsets.UTF_8);

        assertFalse(ConsumerMain.guicePresent(), "Guice must not be on the consumer's test class path");
        assertTrue(output.contains("guice: absent"), output);
        assertTrue(output.contains("allocator: caching on sim, 1.00 GiB"), output);
        assertEquals(3, last.allocationCount(), output);
        assertEquals(3, last.freeCount(), output);
        assertEquals(0, last.activeAllocations(), output);
        assertEquals(0, last.reservedBytes(), "emptyCache gives every cached byte back: " + output);
        assertEquals(last.deviceMallocs(), last.deviceFrees(), output);
        assertTrue(last.deviceMallocs() > 0, output);
    }
}
