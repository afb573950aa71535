package io.devalloc.examples.docs;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.inject.Guice;
import com.google.inject.Injector;
import io.devalloc.api.Allocation;
import io.devalloc.api.DevallocSettings;
import io.devalloc.api.DeviceAllocator;
import io.devalloc.api.DeviceAllocators;
import io.devalloc.api.device.DeviceMemory;
import io.devalloc.api.device.DeviceStream;
import io.devalloc.api.error.OutOfMemoryException;
import io.devalloc.api.observe.MemoryGauge;
import io.devalloc.api.observe.ThresholdListener;
import io.devalloc.api.snapshot.MemorySnapshot;
import io.devalloc.api.stats.AllocatorStats;
import io.devalloc.api.units.ByteSize;
import io.devalloc.caching.CachingAllocator;
import io.devalloc.guice.DevallocModule;
import io.devalloc.micrometer.DevallocMetrics;
import io.devalloc.sim.SimulatedDevice;
import io.devalloc.trace.pytorch.PyTorchSnapshots;
import io.devalloc.trace.record.RecordingAllocator;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The Java snippets of the README's API page, docs/api.md, exactly as it shows them, each in a method that runs
 * it: an API change that breaks a snippet breaks the build. {@link #theReadmeShowsExactlyTheCodeOfThisTest}
 * fails when the pages' text and this file's code differ, so neither can change alone. What a snippet leaves to the
 * reader ({@code use}, {@code runWorkload}, the {@code device} it is given) is defined here around it.
 */
class ReadmeSnippetsTest {

    /** The files the recording snippet writes, relative to the working directory as the snippet has them. */
    private static final Path RUN_CSV = Path.of("run.csv");
    private static final Path SNAPSHOT_PICKLE = Path.of("snapshot.pickle");

    /** Addresses the snippets handed to {@link #use}. */
    private final List<Long> used = new ArrayList<>();
    /** Allocators {@link #runWorkload} ran on. */
    private final List<String> workloads = new ArrayList<>();

    @BeforeEach
    @AfterEach
    void removeTheFilesTheSnippetsWrite() throws IOException {
        Files.deleteIfExists(RUN_CSV);
        Files.deleteIfExists(SNAPSHOT_PICKLE);
    }

    @Test
    void theReadmeShowsExactlyTheCodeOfThisTest() throws IOException {
        // The README's one Java block is a whole source file (Main.java of "Use it from your build"), which
        // integration-tests' ConsumerBuildTest compiles and runs in a project of its own; the snippets are its page's.
        List<MarkdownSnippets.Snippet> readme =
                MarkdownSnippets.javaBlocks(MarkdownSnippets.REPOSITORY.resolve("README.md"));
        assertEquals(1, readme.size(), "the README's java blocks: " + readme);
        assertTrue(readme.getFirst().lines().getFirst().startsWith("import "), "a whole file: " + readme);
        List<MarkdownSnippets.Snippet> snippets =
                MarkdownSnippets.javaBlocks(MarkdownSnippets.REPOSITORY.resolve("docs/api.md"));
        assertEquals(7, snippets.size(), "docs/api.md's java snippets (builder, provider, recording, Guice,"
                + " Micrometer, JFR, out-of-memory handler and thresholds): "
                + snippets + "; a new one needs a method here");
        MarkdownSnippets.assertEachSnippetIsIn(snippets, MarkdownSnippets.testSource(ReadmeSnippetsTest.class));
    }

    @Test
    void theBuilder() {
        try (DeviceAllocator allocator = DeviceAllocators.builder()
                .device("sim:80GiB")              // or "host", "pinned-host", "cuda:0", "auto"
                .allocator("caching")             // or "bfc", "direct", "caching-host"
                .config("max_split_size_mb:128")  // key:value,key:value (each allocator's keys: docs/api.md)
                .build()) {

            // Handles free themselves: try-with-resources scopes device memory.
            try (Allocation weights = allocator.allocate(512 * ByteSize.MiB)) {
                use(weights.address());
            }

            // Hot loops: raw long addresses; the allocator's bookkeeping creates no Java objects.
            long p = allocator.malloc(4 * ByteSize.MiB, DeviceStream.DEFAULT);
            allocator.free(p);

            AllocatorStats stats = allocator.stats();       // common figures for every allocator
            MemorySnapshot snapshot = allocator.snapshot(); // segments and blocks with their states
            checkBuilder(allocator, stats, snapshot);   // test only
        }
        assertEquals(1, used.size());
        assertNotEquals(0L, used.get(0));
    }

    private static void checkBuilder(DeviceAllocator allocator, AllocatorStats stats, MemorySnapshot snapshot) {
        assertEquals("caching", allocator.name());
        assertEquals(128 * ByteSize.MiB,
                allocator.unwrap(CachingAllocator.class).orElseThrow().options().maxSplitSize());
        assertEquals(0, stats.allocatedBytes(), "both allocations were freed");
        assertEquals(2, stats.allocationCount());
        assertEquals(stats.reservedBytes(), snapshot.totalSegmentBytes());
    }

    @Test
    void anAllocatorOverYourOwnDevice() {
        try (DeviceMemory device = SimulatedDevice.ofCapacity(16 * ByteSize.GiB)) {
            DeviceAllocator direct = DeviceAllocators.builder().device(device).allocator("direct")
                    .config("memory_limit_mb:1024").build();
            // Not in the README: the limit holds, and closing the allocator leaves the caller's device open.
            assertThrows(OutOfMemoryException.class, () -> direct.malloc(2 * ByteSize.GiB));
            direct.free(direct.malloc(ByteSize.MiB));
            direct.close();
            long p = device.malloc(ByteSize.MiB);
            assertNotEquals(0L, p);
            device.free(p);
        }
    }

    @Test
    void recordingAndUnwrap() throws IOException {
        try (DeviceAllocator allocator = DeviceAllocators.builder()
                .device("auto").allocator("caching")                  // auto: cuda if available, else host memory
                .decorate(RecordingAllocator.to(Path.of("run.csv"), RecordingAllocator.Format.RMM_CSV))
                .build()) {
            runWorkload(allocator);
            // Decorators forward unwrap: the caching allocator's own interface is still there.
            CachingAllocator caching = allocator.unwrap(CachingAllocator.class).orElseThrow();
            String summary = caching.memorySummary(false);        // torch.cuda.memory_summary()
            try (OutputStream out = Files.newOutputStream(Path.of("snapshot.pickle"))) {
                PyTorchSnapshots.writePickle(caching.snapshotDict(), out);  // open it at https://pytorch.org/memory_viz
            }
            checkRecording(allocator, summary);   // test only
        }   // flushes and closes run.csv, then closes the allocator and its device
        assertEquals(List.of("caching"), workloads);
        List<String> rows = Files.readAllLines(RUN_CSV);
        assertEquals("Thread,Time,Action,Pointer,Size,Stream", rows.get(0));
        assertEquals(1 + 2 * WORKLOAD_SIZES.length, rows.size(), "one row per allocation and per free: " + rows);
        byte[] pickle = Files.readAllBytes(SNAPSHOT_PICKLE);
        assertArrayEquals(new byte[] {(byte) 0x80, 2}, Arrays.copyOf(pickle, 2), "a protocol-2 pickle");
    }

    @Test
    void guice() {
        Injector injector = Guice.createInjector(new DevallocModule(new DevallocSettings("sim:8GiB", "direct", "")));
        DeviceAllocator allocator = injector.getInstance(DeviceAllocator.class);   // singleton; close it at shutdown
        // Not in the README: one singleton over the device asked for.
        try (allocator) {
            assertEquals("direct", allocator.name());
            assertEquals(8 * ByteSize.GiB, allocator.device().memoryInfo().totalBytes());
            assertTrue(injector.getInstance(DeviceAllocator.class) == allocator, "a singleton");
        }
    }

    @Test
    void micrometer() {
        MeterRegistry registry = new SimpleMeterRegistry();
        DevallocMetrics metrics = DevallocMetrics.named("trainer");
        DeviceAllocator allocator = DeviceAllocators.builder().device("sim:8GiB").allocator("caching")
                .listener(metrics.listener()).build();
        metrics.bindTo(registry, allocator);
        // Not in the README: the meters read the allocator.
        try (allocator) {
            long p = allocator.malloc(ByteSize.MiB);
            assertEquals(allocator.stats().reservedBytes(), registry.get("devalloc.memory.reserved")
                    .tag("allocator", "trainer").tag("pool", "all").gauge().value());
            assertEquals(1, registry.get("devalloc.device.calls").tag("op", "malloc").tag("outcome", "success")
                    .functionCounter().count());
            allocator.free(p);
        }
    }

    @Test
    void jfr() {
        DeviceAllocator traced = DeviceAllocators.builder().device("sim:8GiB").allocator("caching")
                .name("trainer").jfrEvents(true).build();
        // Not in the README: built, and usable (events are written only while a recording runs).
        try (traced) {
            traced.free(traced.malloc(ByteSize.MiB));
            assertEquals(1, traced.stats().deviceMallocs());
        }
    }

    @Test
    void outOfMemoryHandlerAndThresholds() {
        List<String> crossed = new ArrayList<>();   // test only
        ThresholdListener alerts = new ThresholdListener() {   // test only
            @Override
            public void crossedUp(MemoryGauge gauge, long level, long bytes) {
                crossed.add("up " + level / ByteSize.GiB);
            }

            @Override
            public void crossedDown(MemoryGauge gauge, long level, long bytes) {
                crossed.add("down " + level / ByteSize.GiB);
            }
        };
        Spiller spiller = new Spiller();   // test only
        DeviceAllocator guarded = DeviceAllocators.builder().device("sim:8GiB").allocator("caching")
                .outOfMemoryHandler(failure -> spiller.spill(failure.requestedBytes()) > 0)   // true: try again
                .threshold(MemoryGauge.RESERVED, alerts, 6 * ByteSize.GiB, 7 * ByteSize.GiB)
                .build();
        // Not in the README: the spiller frees what it holds, and the allocation that did not fit succeeds.
        try (guarded) {
            spiller.held = guarded.malloc(5 * ByteSize.GiB);
            spiller.allocator = guarded;
            long p = guarded.malloc(6500 * ByteSize.MiB);
            assertEquals(List.of("up 6"), crossed, "5 GiB held, spilled and released to 0, then 6.5 GiB");
            assertEquals(1, spiller.spills);
            guarded.free(p);
        }
    }

    /** Holds one allocation and gives it back when asked: what a spill to host memory does. */
    private static final class Spiller {
        DeviceAllocator allocator;
        long held;
        int spills;

        long spill(long bytes) {
            if (held == 0) {
                return 0;
            }
            allocator.free(held);
            held = 0;
            spills++;
            allocator.releaseCachedMemory();
            return bytes;
        }
    }

    private static void checkRecording(DeviceAllocator allocator, String summary) {
        assertTrue(allocator instanceof RecordingAllocator, "the decorator is what was built: " + allocator);
        assertTrue(summary.contains("PyTorch CUDA memory summary"), summary);
    }

    /** What the builder snippet does with its memory. */
    private void use(long address) {
        used.add(address);
    }

    private static final long[] WORKLOAD_SIZES = {ByteSize.MiB, 3 * ByteSize.MiB, 25 * ByteSize.MiB};

    /** The recording snippet's workload: allocate and free a few buffers. */
    private void runWorkload(DeviceAllocator allocator) {
        workloads.add(allocator.name());
        long[] addresses = new long[WORKLOAD_SIZES.length];
        for (int i = 0; i < addresses.length; i++) {
            addresses[i] = allocator.malloc(WORKLOAD_SIZES[i]);
        }
        for (long address : addresses) {
            allocator.free(address);
        }
    }
}
