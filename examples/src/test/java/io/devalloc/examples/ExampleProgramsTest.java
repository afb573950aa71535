package io.devalloc.examples;

import static org.junit.jupiter.api.Assertions.assertAll;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.function.Consumer;
import org.junit.jupiter.api.Test;

/** Each example's {@code main} runs to the end and prints what its javadoc promises. */
class ExampleProgramsTest {

    /** Runs {@code main} with {@link System#out} captured; the tests in this class run one at a time. */
    private static String runMain(Consumer<String[]> main) {
        PrintStream original = System.out;
        ByteArrayOutputStream captured = new ByteArrayOutputStream();
        try (PrintStream out = new PrintStream(captured, true, StandardCharsets.UTF_8)) {
            System.setOut(out);
            main.accept(new String[0]);
        } finally {
            System.setOut(original);
        }
        return captured.toString(StandardCharsets.UTF_8);
    }

    @Test
    void plainApiExample() {
        String out = runMain(PlainApiExample::main);
        assertAll(
                () -> assertTrue(out.contains("Opened the 'direct' allocator on sim:0 (simulated GPU (16.00 GiB))"),
                        out),
                () -> assertTrue(out.contains("stats while both handles are open: 2 live"), out),
                () -> assertTrue(out.contains("snapshot of 'direct': 2 segments, 304.00 MiB in total"), out),
                () -> assertTrue(out.contains("stats after the handles closed: 0 live"), out),
                () -> assertTrue(out.contains("stats after 1,000 raw malloc/free pairs: 0 live, 0 B allocated"), out),
                () -> assertTrue(out.contains("6 GiB refused: LIMIT_REACHED"), out),
                () -> assertTrue(out.contains("allocator limit 4.00 GiB"), out),
                () -> assertTrue(out.contains("32 GiB refused: REQUEST_TOO_LARGE"), out),
                () -> assertTrue(out.contains("1002 allocations, 1002 frees, 2 out-of-memory errors"), out));
    }

    @Test
    void serviceLoaderExample() {
        String out = runMain(ServiceLoaderExample::main);
        assertAll(
                () -> assertTrue(out.contains("  sim (io.devalloc.sim."), out),
                () -> assertTrue(out.contains("  sim (priority 1): available"), out),
                () -> assertTrue(out.contains("  host (priority 5): available"), out),
                () -> assertTrue(out.contains("  pinned-host (priority 4): "), out),
                () -> assertTrue(out.indexOf("  host (priority 5)") < out.indexOf("  sim (priority 1)"), out),
                () -> assertTrue(out.contains("  direct: no caching"), out),
                () -> assertTrue(out.contains("by name 'sim:4GiB': sim:0"), out),
                () -> assertTrue(out.contains("device now has 3.00 GiB free"), out),
                () -> assertTrue(out.contains("by 'auto': host:0"), out),
                () -> assertTrue(out.contains("allocator stats: 1 allocation, 1 free"), out));
    }

    @Test
    void guiceExample() {
        String out = runMain(GuiceExample::main);
        assertAll(
                () -> assertTrue(out.contains("Injected the 'direct' allocator on sim:0 (simulated GPU (8.00 GiB))"),
                        out),
                () -> assertTrue(out.contains("the same singleton as the store's: true"), out),
                () -> assertTrue(out.contains("after clear: 0 live allocations, 2 allocations and 2 frees"), out),
                () -> assertTrue(out.contains("allocator and its device closed"), out));
    }
}
