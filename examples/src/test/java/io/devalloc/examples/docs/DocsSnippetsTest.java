package io.devalloc.examples.docs;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.inject.AbstractModule;
import com.google.inject.Guice;
import com.google.inject.Injector;
import com.google.inject.multibindings.Multibinder;
import com.google.inject.multibindings.OptionalBinder;
import io.devalloc.api.DevallocSettings;
import io.devalloc.api.DeviceAllocator;
import io.devalloc.api.DeviceAllocators;
import io.devalloc.api.device.DeviceStream;
import io.devalloc.api.error.OutOfMemoryException;
import io.devalloc.api.jmx.AllocatorMXBean;
import io.devalloc.api.jmx.AllocatorMXBeans;
import io.devalloc.api.observe.AllocationFailure;
import io.devalloc.api.observe.AllocatorListener;
import io.devalloc.api.observe.DeviceCall;
import io.devalloc.api.observe.MemoryGauge;
import io.devalloc.api.observe.OutOfMemoryHandler;
import io.devalloc.api.observe.ThresholdListener;
import io.devalloc.api.spi.SizeRounding;
import io.devalloc.api.stats.PoolUsage;
import io.devalloc.api.units.ByteSize;
import io.devalloc.bfc.BfcAllocator;
import io.devalloc.bfc.BfcAllocatorProvider;
import io.devalloc.bfc.BfcOptions;
import io.devalloc.bfc.BfcStats;
import io.devalloc.caching.CachingAllocator;
import io.devalloc.caching.CachingAllocatorProvider;
import io.devalloc.caching.host.HostCachingAllocator;
import io.devalloc.guice.DevallocModule;
import io.devalloc.micrometer.DevallocMetrics;
import io.devalloc.replay.CompactTrace;
import io.devalloc.replay.bounds.HeapPlacement;
import io.devalloc.replay.bounds.LiveIntervals;
import io.devalloc.replay.bounds.LowerBound;
import io.devalloc.replay.bounds.OfflinePlan;
import io.devalloc.replay.bounds.PlanOrder;
import io.devalloc.sim.SimulatedDevice;
import io.devalloc.trace.pytorch.PyTorchSnapshots;
import io.devalloc.trace.record.RecordingAllocator;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.io.IOException;
import java.io.OutputStream;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.LongAdder;
import java.util.stream.Stream;
import javax.management.JMX;
import javax.management.MalformedObjectNameException;
import javax.management.ObjectName;
import jdk.jfr.consumer.RecordedEvent;
import jdk.jfr.consumer.RecordingStream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The Java snippets of the pages under {@code docs/}, exactly as they are shown there, each in a method that runs
 * it; {@link #theDocsShowExactlyTheCodeOfThisTest} fails when a page's text and this file's code differ. The
 * {@code device} or {@code allocator} a snippet is given is made here around it.
 */
class DocsSnippetsTest {

    /** The files the snippets write, relative to the working directory as the snippets have them. */
    private static final Path SNAPSHOT_PICKLE = Path.of("snapshot.pickle");
    private static final Path RUN_RMM_CSV = Path.of("run.rmm.csv");

    @BeforeEach
    @AfterEach
    void removeTheFilesTheSnippetsWrite() throws IOException {
        Files.deleteIfExists(SNAPSHOT_PICKLE);
        Files.deleteIfExists(RUN_RMM_CSV);
    }

    @Test
    void theDocsShowExactlyTheCodeOfThisTest() throws IOException {
        List<MarkdownSnippets.Snippet> snippets = new ArrayList<>();
        List<Path> pages;
        try (Stream<Path> files = Files.walk(MarkdownSnippets.REPOSITORY.resolve("docs"))) {
            // docs/api.md is the README's own page: ReadmeSnippetsTest holds its snippets.
            pages = files.filter(f -> f.toString().endsWith(".md") && !f.endsWith(Path.of("docs", "api.md")))
                    .sorted().toList();
        }
        for (Path page : pages) {
            snippets.addAll(MarkdownSnippets.javaBlocks(page));
        }
        assertEquals(13, snippets.size(), "the java snippets of docs/ (bfc, caching, caching-host, bounds, replay,"
                + " observability's listener, handler, thresholds, gauges, Guice, JFR, JMX and Micrometer): "
                + snippets + "; a new one needs a method here");
        MarkdownSnippets.assertEachSnippetIsIn(snippets, MarkdownSnippets.testSource(DocsSnippetsTest.class));
    }

    private static final Logger log = LoggerFactory.getLogger(DocsSnippetsTest.class);

    /** docs/observability.md, "Listener SPI". */
    @Test
    void observabilityListener() {
        Map<String, LongAdder> deviceCalls = new ConcurrentHashMap<>();
        LongAdder ooms = new LongAdder();
        AllocatorListener tracker = new AllocatorListener() {
            @Override
            public void deviceCall(DeviceCall call, long address, long bytes, long nanos, boolean succeeded) {
                deviceCalls.computeIfAbsent(call.tag(), k -> new LongAdder()).increment();   // malloc, free, map, unmap
            }

            @Override
            public void outOfMemory(long requestedBytes, OutOfMemoryException error) {
                ooms.increment();
            }
        };
        DeviceAllocator allocator = DeviceAllocators.builder().device("sim:16GiB").allocator("caching")
                .listener(tracker).build();
        // Not in the page: what the listener was told.
        try (allocator) {
            allocator.free(allocator.malloc(ByteSize.MiB));
            assertThrows(OutOfMemoryException.class, () -> allocator.malloc(32 * ByteSize.GiB));
            assertEquals(1, ooms.sum());
            // One malloc that succeeded, and two that found no memory: before and after the cache was released.
            assertEquals(3, deviceCalls.get("malloc").sum());
            assertEquals(1, allocator.stats().deviceMallocs());
        }
    }

    /** What docs/observability.md calls the application's spiller: buffers it can drop when memory runs out. */
    static final class Spiller implements OutOfMemoryHandler {
        final List<Long> buffers = new ArrayList<>();
        DeviceAllocator allocator;

        /** Frees every buffer it holds; whether it freed any. */
        synchronized boolean spill(long bytes) {
            if (buffers.isEmpty()) {
                return false;
            }
            for (long b : buffers) {
                allocator.free(b);
            }
            buffers.clear();
            return true;
        }

        @Override
        public boolean onOutOfMemory(AllocationFailure failure) {
            return spill(failure.requestedBytes());
        }
    }

    /** docs/observability.md, "Out-of-memory handler". */
    @Test
    void observabilityHandler() {
        Spiller spiller = new Spiller();
        DeviceAllocator allocator = DeviceAllocators.builder().device("sim:16GiB").allocator("caching")
                .outOfMemoryHandler(failure -> spiller.spill(failure.requestedBytes()), 4)   // at most 4 retries
                .build();
        // Not in the page: a request that fits only once the spiller dropped its buffer.
        spiller.allocator = allocator;
        try (allocator) {
            spiller.buffers.add(allocator.malloc(10 * ByteSize.GiB));
            long p = allocator.malloc(10 * ByteSize.GiB);
            assertTrue(spiller.buffers.isEmpty(), "spilled");
            assertEquals(1, allocator.stats().outOfMemoryErrors(), "the failed attempt is counted");
            allocator.free(p);
        }
    }

    /** docs/observability.md, "Thresholds". */
    @Test
    void observabilityThresholds() {
        ThresholdListener pressure = new ThresholdListener() {
            @Override
            public void crossedUp(MemoryGauge gauge, long level, long bytes) {
                log.warn("{} rose above {} B", gauge, level);
            }

            @Override
            public void crossedDown(MemoryGauge gauge, long level, long bytes) {
                log.info("{} fell below {} B", gauge, level);
            }
        };
        DeviceAllocator allocator = DeviceAllocators.builder().device("sim:16GiB").allocator("bfc")
                .config("allow_growth:true")
                .threshold(MemoryGauge.RESERVED, pressure, 8 * ByteSize.GiB, 12 * ByteSize.GiB, 14 * ByteSize.GiB)
                .build();
        // Not in the page: reserved rises over two levels and falls back (the log shows it).
        try (allocator) {
            long p = allocator.malloc(13 * ByteSize.GiB);
            assertTrue(allocator.stats().reservedBytes() >= 13 * ByteSize.GiB);
            allocator.free(p);
            allocator.releaseCachedMemory();
            assertEquals(0, allocator.stats().reservedBytes());
        }
    }

    /** docs/observability.md, "Gauges and pools". */
    @Test
    void observabilityGauges() {
        try (DeviceAllocator allocator = DeviceAllocators.open("sim:16GiB", "caching", "")) {
            long p = allocator.malloc(4 * ByteSize.MiB);
            for (PoolUsage u : allocator.memoryUsage()) {   // "all", then "small" and "large" for caching
                log.info("{}: reserved {}, allocated {}, active {}, requested {}, inactive split {}", u.pool(),
                        u.reservedBytes(), u.allocatedBytes(), u.activeBytes(), u.requestedBytes(),
                        u.inactiveSplitBytes());
            }
            // Not in the page: the pools and the large pool's figures.
            List<PoolUsage> usage = allocator.memoryUsage();
            assertEquals(List.of("all", "small", "large"), usage.stream().map(PoolUsage::pool).toList());
            assertEquals(4 * ByteSize.MiB, usage.get(2).allocatedBytes());
            allocator.free(p);
        }
    }

    /** A listener as an application binds it with Guice: counts the device calls. */
    static final class MyTracker implements AllocatorListener {
        static final LongAdder DEVICE_CALLS = new LongAdder();

        @Override
        public void deviceCall(DeviceCall call, long address, long bytes, long nanos, boolean succeeded) {
            DEVICE_CALLS.increment();
        }
    }

    /** docs/observability.md, "Guice". */
    @Test
    void observabilityGuice() {
        Injector injector = Guice.createInjector(new DevallocModule(new DevallocSettings("sim:16GiB", "caching", "")),
                new AbstractModule() {
                    @Override
                    protected void configure() {
                        Multibinder.newSetBinder(binder(), AllocatorListener.class).addBinding().to(MyTracker.class);
                        OptionalBinder.newOptionalBinder(binder(), OutOfMemoryHandler.class).setBinding()
                                .to(Spiller.class);
                    }
                });
        DeviceAllocator allocator = injector.getInstance(DeviceAllocator.class);
        // Not in the page: the bound listener is told of the device calls.
        try (allocator) {
            long before = MyTracker.DEVICE_CALLS.sum();
            allocator.free(allocator.malloc(ByteSize.MiB));
            assertTrue(MyTracker.DEVICE_CALLS.sum() > before);
        }
    }

    /** docs/allocators/bfc.md. */
    @Test
    void bfc() {
        try (SimulatedDevice device = SimulatedDevice.ofCapacity(80 * ByteSize.GiB)) {
            BfcAllocator bfc = BfcAllocatorProvider.create(device, BfcOptions.defaults().withAllowGrowth(true));
            long p = bfc.malloc(1 << 20, 4096, DeviceStream.DEFAULT);   // alignment above 256 B is honoured
            BfcStats s = bfc.bfcStats();                // TensorFlow's AllocatorStats + fragmentation metric
            List<String> dump = bfc.memoryLog(1 << 20); // DumpMemoryLog; memoryDump() is the MemoryDump proto
            String map = bfc.renderOccupancy();         // the 100-character occupancy map
            // Not in the page: what the snippet got.
            assertEquals(0, p % 4096, "aligned");
            assertEquals(1, s.numAllocs());
            assertEquals(1 << 20, s.bytesInUse());
            assertFalse(dump.isEmpty());
            assertEquals(100, map.length(), map);
            bfc.free(p);
            bfc.close();
            long q = device.malloc(ByteSize.MiB);   // the caller's device is still open
            assertTrue(q != 0);
            device.free(q);
        }
    }

    /** docs/allocators/caching.md. */
    @Test
    void caching() throws IOException {
        try (SimulatedDevice device = SimulatedDevice.ofCapacity(80 * ByteSize.GiB)) {
            CachingAllocator torch = new CachingAllocatorProvider().create(device,
                    "max_split_size_mb:128,expandable_segments:True");
            Map<String, Long> stats = torch.memoryStats();   // "allocated_bytes.all.current", "num_alloc_retries", ...
            String summary = torch.memorySummary(false);    // torch.cuda.memory_summary()
            torch.setPerProcessMemoryFraction(0.5);         // with upstream's validation
            torch.recordHistory(100_000);                   // _record_memory_history(max_entries=...)
            long p = torch.malloc(20 * ByteSize.MiB);
            torch.free(p);
            try (OutputStream out = Files.newOutputStream(Path.of("snapshot.pickle"))) {
                PyTorchSnapshots.writePickle(torch.snapshotDict(), out);   // open it at https://pytorch.org/memory_viz
            }
            String json = PyTorchSnapshots.json(torch.snapshotDict(), true);
            // Not in the page: what the snippet got.
            assertEquals(0L, stats.get("allocated_bytes.all.current"));
            assertEquals(0L, stats.get("num_alloc_retries"));
            assertTrue(summary.contains("PyTorch CUDA memory summary"), summary);
            assertTrue(torch.options().expandableSegments(), "the simulator has virtual memory");
            // One page mapped for the block, then the block's life; each snapshotDict() adds a snapshot entry.
            assertEquals(List.of("segment_map", "alloc", "free_requested", "free_completed", "snapshot", "snapshot"),
                    torch.history().stream().map(e -> e.action().wireName()).toList());
            assertTrue(json.contains("\"device_traces\""), json);
            assertArrayEquals(new byte[] {(byte) 0x80, 2}, Arrays.copyOf(Files.readAllBytes(SNAPSHOT_PICKLE), 2));
            torch.close();
        }
    }

    /** docs/allocators/caching-host.md: runs on real page-locked memory (1 MiB, under the usual 8 MiB limit). */
    @Test
    void cachingHost() {
        try (DeviceAllocator a = DeviceAllocators.open("pinned-host:64MiB", "caching-host",
                "pinned_max_cached_size_mb:32")) {
            HostCachingAllocator pinned = a.unwrap(HostCachingAllocator.class).orElseThrow();
            DeviceStream copyStream = a.device().createStream();
            long buf = pinned.malloc(1_000_000);   // a 1 MiB block (the next power of two), page-locked
            pinned.recordEvent(buf, copyStream);   // a non-blocking copy on copyStream reads it
            pinned.free(buf);                      // reused once copyStream's work is done
            checkPinned(a, pinned, buf);   // test only
        }
    }

    private static void checkPinned(DeviceAllocator a, HostCachingAllocator pinned, long buf) {
        assertEquals(ByteSize.MiB, a.stats().reservedBytes(), "one 1 MiB block, cached");
        assertEquals(buf, pinned.malloc(1_000_000), "the cached block is reused");
        assertEquals(1L, pinned.hostMemoryStats().get("num_host_alloc"));
    }

    /** docs/observability.md, Micrometer. */
    @Test
    void micrometer() {
        MeterRegistry registry = new SimpleMeterRegistry();
        DevallocMetrics metrics = DevallocMetrics.named("trainer");
        DeviceAllocator allocator = DeviceAllocators.builder().device("sim:8GiB").allocator("caching")
                .listener(metrics.listener()).build();
        metrics.bindTo(registry, allocator);
        // Not in the page: the meters follow the allocator.
        try (allocator) {
            long p = allocator.malloc(ByteSize.MiB);
            assertEquals(allocator.stats().reservedBytes(), registry.get(DevallocMetrics.MEMORY_RESERVED)
                    .tags("allocator", "trainer", "device", "sim:0", "pool", "all").gauge().value());
            assertEquals(1.0, registry.get(DevallocMetrics.DEVICE_CALLS)
                    .tags("op", "malloc", "outcome", "success").functionCounter().count());
            allocator.free(p);
        }
    }

    /** docs/bounds.md: the bounds of the shipped OPT trace under PyTorch's rounding. */
    @Test
    void bounds() throws IOException {
        Path path = MarkdownSnippets.REPOSITORY.resolve("traces/pt-opt-zeroth-order-fl/memory.pickle");
        SizeRounding rounding = requested -> requested < 512 ? 512 : (requested + 511) / 512 * 512;
        LiveIntervals intervals = LiveIntervals.of(CompactTrace.read(path));   // one pass, primitive arrays
        LowerBound bound = LowerBound.of(intervals, rounding);   // requestedPeakBytes, roundedPeakBytes, their events
        OfflinePlan plan = OfflinePlan.of(intervals, rounding);  // bySizeBytes, byLifetimeBytes, bytes() = the lower
        HeapPlacement.of(intervals, rounding, PlanOrder.BY_SIZE).checkValid();  // one order's offsets, and the check
        // Not in the page: the figures docs/benchmarks.md gives for this trace.
        assertEquals(1_783_664_516L, bound.requestedPeakBytes());
        assertEquals(1_783_665_152L, plan.bytes());
    }

    /** docs/replay.md, recording. */
    @Test
    void recordingAnAllocatorYouHave() throws IOException {
        DeviceAllocator allocator = DeviceAllocators.open("sim:1GiB", "direct", "");
        try (RecordingAllocator recorded = RecordingAllocator.wrap(allocator, Path.of("run.rmm.csv"),
                RecordingAllocator.Format.RMM_CSV)) {
            long p = recorded.malloc(1 << 20);
            recorded.free(p);
        }   // flushes and closes run.rmm.csv, then closes the allocator inside
        // Not in the page: what was recorded, and that the allocator inside was closed.
        assertTrue(allocator.isClosed());
        List<String> rows = Files.readAllLines(RUN_RMM_CSV);
        assertEquals(3, rows.size(), "the header, one allocation and one free: " + rows);
    }

    /** docs/observability.md, JFR: the snippet runs inside a recording, which sees its device calls and release. */
    @Test
    void jfrEvents() {
        List<RecordedEvent> events = new CopyOnWriteArrayList<>();   // test only
        try (RecordingStream stream = new RecordingStream()) {   // test only
            stream.enable("io.devalloc.DeviceAlloc");   // test only
            stream.enable("io.devalloc.DeviceFree");   // test only
            stream.onEvent(e -> events.add(e));   // test only
            stream.startAsync();   // test only
            try (DeviceAllocator allocator = DeviceAllocators.builder().device("sim:80GiB").allocator("caching")
                    .name("trainer").jfrEvents(true).build()) {
                long p = allocator.malloc(1 << 20);   // a new 2 MiB segment: one io.devalloc.DeviceAlloc event
                allocator.free(p);
                allocator.releaseCachedMemory();      // the segment goes back: DeviceFree, then CacheRelease
            }
            stream.stop();   // test only
        }   // test only
        // Not in the page: what the recording saw, between the gauges written as the allocator was built and as it
        // closed (one MemoryUsage event per pool each time).
        List<String> seen = events.stream().filter(e -> "trainer".equals(e.getString("allocator")))
                .map(e -> e.getEventType().getName()).toList();
        assertEquals(List.of("io.devalloc.DeviceAlloc", "io.devalloc.DeviceFree", "io.devalloc.CacheRelease"),
                seen.stream().filter(name -> !name.equals("io.devalloc.MemoryUsage")).toList());
        assertEquals("io.devalloc.MemoryUsage", seen.getFirst());
        assertEquals("io.devalloc.MemoryUsage", seen.getLast());
    }

    /** docs/observability.md, JMX. */
    @Test
    void mxBean() throws MalformedObjectNameException {
        ObjectName name = new ObjectName("io.devalloc:type=Allocator,name=trainer");   // test only
        try (DeviceAllocator allocator = DeviceAllocators.builder().device("sim:80GiB").allocator("caching")
                .name("trainer").registerMXBean(true).build()) {
            allocator.free(allocator.malloc(1 << 20));   // test only
            assertTrue(ManagementFactory.getPlatformMBeanServer().isRegistered(name));   // test only
            AllocatorMXBean bean = JMX.newMXBeanProxy(ManagementFactory.getPlatformMBeanServer(),
                    AllocatorMXBeans.objectName("trainer"), AllocatorMXBean.class);   // what jconsole calls
            long reserved = bean.getReservedBytes();
            bean.emptyCache();
            assertEquals(2 * ByteSize.MiB, reserved);   // test only
            assertEquals(0, allocator.stats().reservedBytes());   // test only
        }   // unregistered here
        // Not in the page: the bean is gone with the allocator.
        assertFalse(ManagementFactory.getPlatformMBeanServer().isRegistered(name));
    }
}
