package io.devalloc.advisor;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.devalloc.advisor.report.AdviceHtml;
import io.devalloc.advisor.report.AdviceText;
import io.devalloc.api.device.DeviceMemory;
import io.devalloc.api.spi.AllocatorProvider;
import io.devalloc.api.spi.AllocatorRegistry;
import io.devalloc.api.spi.Availability;
import io.devalloc.api.spi.DeviceMemoryProvider;
import io.devalloc.api.units.ByteSize;
import io.devalloc.caching.CachingAllocatorProvider;
import io.devalloc.replay.ReplayProgress;
import io.devalloc.sim.SimulatedDevice;
import io.devalloc.sim.SimulatedDeviceProvider;
import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * What the advisor says about settings it does not run as given: a configuration in the environment (named, and
 * changing no figure), expandable segments on a device without virtual memory (a problem, not the defaults' figures
 * under another name), a key PyTorch does not have (not a {@code PYTORCH_CUDA_ALLOC_CONF} line); and the trust line of
 * a trace that records no allocator decisions.
 */
class AdvisorSettingsTest {

    @TempDir
    static Path dir;
    static AdvisorTrace opt;
    static Path grid;
    static Advice plain;

    @BeforeAll
    static void adviseWithoutEnvironment() throws IOException {
        opt = AdvisorTrace.read(AdvisorTest.OPT_CSV);
        grid = Files.write(dir.resolve("two.txt"), List.of("defaults", "expandable_segments:True"));
        plain = new Advisor(List.of(new CachingAllocatorProvider(Map.of())), List.of(new SimulatedDeviceProvider()))
                .advise(opt, options(), ReplayProgress.NONE);
    }

    private static Advisor.Options options() {
        return new Advisor.Options("caching", grid.toString(), -1, Objective.CAPACITY, 2);
    }

    private static String text(Advice advice) {
        StringWriter out = new StringWriter();
        AdviceText.print(new PrintWriter(out), advice);
        return out.toString();
    }

    @Test
    void aConfigurationInTheEnvironmentIsNamedAndChangesNoFigure() {
        AllocatorProvider withEnvironment = new CachingAllocatorProvider(
                Map.of("PYTORCH_CUDA_ALLOC_CONF", "max_split_size_mb:20"));
        Advice advice = new Advisor(List.of(withEnvironment), List.of(new SimulatedDeviceProvider()))
                .advise(opt, options(), ReplayProgress.NONE);
        assertEquals(plain.trust().config(), advice.trust().config());
        assertEquals(plain.trust().verdict(), advice.trust().verdict());
        assertEquals(plain.settings().size(), advice.settings().size());
        for (int i = 0; i < plain.settings().size(); i++) {
            SettingResult a = plain.settings().get(i);
            SettingResult b = advice.settings().get(i);
            assertEquals(a.config(), b.config());
            assertEquals(a.minCapacityBytes(), b.minCapacityBytes(), a.config());
            assertEquals(a.result().peakReservedBytes(), b.result().peakReservedBytes(), a.config());
            assertEquals(a.result().deviceMallocs(), b.result().deviceMallocs(), a.config());
        }
        assertTrue(plain.trust().notes().stream().noneMatch(n -> n.contains("environment")),
                plain.trust().notes().toString());
        String note = "PYTORCH_CUDA_ALLOC_CONF=max_split_size_mb:20 is set in this environment; advise does not use it";
        assertTrue(advice.trust().notes().stream().anyMatch(n -> n.startsWith(note)),
                advice.trust().notes().toString());
        assertTrue(text(advice).contains("PYTORCH_CUDA_ALLOC_CONF=max_split_size_mb:20 is set in this environment"),
                text(advice));
        assertTrue(AdviceHtml.render(advice).contains(note), "the page names it too");
    }

    @Test
    void expandableSegmentsOnADeviceWithoutVirtualMemoryIsAProblemNotAnotherSettingsFigures() {
        Advice advice = new Advisor(List.of(new CachingAllocatorProvider(Map.of())),
                List.of(new WithoutVirtualMemory())).advise(opt, options(), ReplayProgress.NONE);
        assertEquals(1, advice.grid().problems().size(), advice.grid().problems().toString());
        String problem = advice.grid().problems().getFirst();
        assertTrue(problem.startsWith(grid + ":2: expandable_segments:True cannot run on ")
                && problem.contains("no virtual memory"), problem);
        assertEquals(List.of(""), advice.settings().stream().map(SettingResult::config).toList());
        SettingResult defaults = plain.settings().stream().filter(s -> s.config().isEmpty()).findFirst().orElseThrow();
        assertEquals(defaults.minCapacityBytes(), advice.settings().getFirst().minCapacityBytes());
        assertEquals(defaults.result().peakReservedBytes(), advice.settings().getFirst().result().peakReservedBytes());
    }

    private static AllocatorProvider provider(String name) {
        return AllocatorRegistry.load().get(name).withoutEnvironment();
    }

    @Test
    void aKeyPyTorchDoesNotHaveIsNotAPyTorchLine() {
        assertEquals("PYTORCH_CUDA_ALLOC_CONF=pinned_max_cached_size_mb:4",
                Advisor.envLine(provider("caching-host"), "pinned_max_cached_size_mb:4"));
        assertEquals("DEVALLOC_CONFIG=pinned_round_threshold_mb:64",
                Advisor.envLine(provider("caching-host"), "pinned_round_threshold_mb:64"));
        assertEquals("DEVALLOC_CONFIG=max_split_size_mb:64,search_pool_after_release:True",
                Advisor.envLine(provider("caching"), "max_split_size_mb:64,search_pool_after_release:True"));
        assertEquals("PYTORCH_CUDA_ALLOC_CONF=roundup_power2_divisions:[256:1,512:2,1024:4,>:8]",
                Advisor.envLine(provider("caching"), "roundup_power2_divisions:[256:1,512:2,1024:4,>:8]"));
        assertEquals("DEVALLOC_CONFIG=allow_growth:true", Advisor.envLine(provider("bfc"), "allow_growth:true"));
        assertTrue(provider("caching-host").caveats("pinned_round_threshold_mb:64").stream()
                .anyMatch(c -> c.startsWith("pinned_round_threshold_mb is devalloc's key, not PyTorch's")));
    }

    @Test
    void defaultsTheTraceDidNotRecordAreNeverCalledRecorded() {
        // A CSV records no allocator settings: its baseline is only the defaults, in every sentence of every output.
        assertEquals("the baseline (the defaults)", plain.trust().baselineName());
        String out = text(plain);
        for (String report : List.of(out, AdviceHtml.render(plain))) {
            assertFalse(report.contains("recorded setting"), report);
            assertTrue(report.contains("the baseline (the defaults)")
                    || report.contains("The baseline (the defaults)"), report);
        }
        assertTrue(out.contains("Trust: MATCH - replayed under the defaults ("), out);
        TrustLine fromSnapshot = new TrustLine("", TrustLine.FROM_SNAPSHOT, TrustLine.Verdict.MATCH, null, null,
                List.of());
        assertEquals("the recorded setting", fromSnapshot.baselineName());
    }

    @Test
    void aTraceWithoutAllocatorDecisionsHasNoGroundTruth() throws IOException {
        Path valgrind = Files.write(dir.resolve("tiny.trace"), List.of("Alloc(552),", "Alloc(120),", "Free(0),",
                "Alloc(4096),", "Free(1),", "Free(2),"));
        Advice advice = new Advisor().advise(AdvisorTrace.read(valgrind),
                new Advisor.Options("bfc", null, -1, Objective.CAPACITY, 1), ReplayProgress.NONE);
        assertEquals(TrustLine.Verdict.NOT_COMPARABLE, advice.trust().verdict());
        String out = text(advice);
        assertTrue(out.contains("Trust: NOT COMPARABLE - a valgrind malloc trace records no allocator decisions"),
                out);
        assertFalse(out.contains("trace trace") || out.contains("not comparable: "), out);
        assertTrue(advice.recommendation().env().startsWith("DEVALLOC_CONFIG="), advice.recommendation().env());
    }

    /** Simulated devices without the virtual-memory capability, under the name the advisor asks for. */
    static final class WithoutVirtualMemory implements DeviceMemoryProvider {
        private final SimulatedDeviceProvider sim = new SimulatedDeviceProvider();

        @Override
        public String name() {
            return sim.name();
        }

        @Override
        public String description() {
            return "simulated GPU without virtual memory";
        }

        @Override
        public int priority() {
            return sim.priority();
        }

        @Override
        public Availability probe() {
            return sim.probe();
        }

        @Override
        public int deviceCount() {
            return 1;
        }

        @Override
        public String argumentHelp() {
            return sim.argumentHelp();
        }

        @Override
        public DeviceMemory open(String argument) {
            return SimulatedDevice.builder().capacity(ByteSize.parse(argument)).virtualMemory(false).build();
        }
    }
}
