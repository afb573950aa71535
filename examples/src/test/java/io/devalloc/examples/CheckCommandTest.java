package io.devalloc.examples;

import static io.devalloc.examples.LauncherTest.run;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.devalloc.api.DeviceAllocator;
import io.devalloc.api.config.ConfigSchema;
import io.devalloc.api.spi.AllocatorProvider;
import io.devalloc.api.spi.AllocatorRegistry;
import io.devalloc.api.spi.AllocatorSetup;
import io.devalloc.api.spi.DeviceRegistry;
import io.devalloc.examples.LauncherTest.Run;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * {@code devalloc check DEVICE} on the devices this machine has: every check passes (or does not apply), the latency
 * line follows, the exit code is 0; a device that cannot be opened is a usage error; a broken allocator fails its
 * checks with exit code 3 and the others still run.
 */
class CheckCommandTest {

    @ParameterizedTest
    @ValueSource(strings = {"sim", "sim:1GiB", "host"})
    void everyCheckPassesOnTheDevicesOfThisMachine(String device) {
        Run r = run("check", device, "--pairs", "20");
        assertEquals(0, r.exitCode(), r::toString);
        List<String> lines = r.out().lines().filter(l -> l.matches("  (PASS|FAIL|SKIP) .*")).toList();
        assertEquals(10, lines.size(), r.out());
        assertTrue(lines.stream().noneMatch(l -> l.startsWith("  FAIL")), r.out());
        long skipped = lines.stream().filter(l -> l.startsWith("  SKIP")).count();
        // Page-locked memory goes with host (pinned-host) and cuda; a simulated GPU has none.
        assertEquals(device.startsWith("sim") ? 1 : 0, skipped, r.out());
        assertTrue(r.out().contains("Latency: a device malloc and free of 1.00 MiB, the median of 20: "), r.out());
        assertTrue(r.out().contains("10 checks: " + (10 - skipped) + " passed, " + skipped + " did not apply, 0"
                + " failed."), r.out());
    }

    @Test
    void aNonCachingAllocatorSkipsTheCachedPairAndAutoChecksWhatItResolvesTo() {
        Run direct = run("check", "sim:1GiB", "--allocator", "direct", "--pairs", "10");
        assertEquals(0, direct.exitCode(), direct::toString);
        assertTrue(direct.out().contains("  SKIP  direct allocator: a cached pair makes no device call"), direct.out());
        assertTrue(direct.out().contains("direct does not cache"), direct.out());
        // auto is host here (no GPU): page-locked memory beside it is checked, not skipped.
        Run auto = run("check", "auto", "--pairs", "10");
        assertEquals(0, auto.exitCode(), auto::toString);
        assertTrue(auto.out().contains("  PASS  page-locked host memory beside the device"), auto.out());
    }

    @Test
    void aDeviceThatCannotBeOpenedIsAUsageErrorThatSaysWhy() {
        Run unknown = run("check", "nosuch");
        assertEquals(Launcher.EXIT_USAGE, unknown.exitCode(), unknown::toString);
        assertTrue(unknown.err().contains("unknown device provider 'nosuch'"), unknown.err());
        Run cuda = run("check", "cuda:0");
        assertEquals(Launcher.EXIT_USAGE, cuda.exitCode(), cuda::toString);
        assertTrue(cuda.err().contains("device provider 'cuda' is unavailable"), cuda.err());
        Run pairs = run("check", "sim", "--pairs", "0");
        assertEquals(Launcher.EXIT_USAGE, pairs.exitCode(), pairs::toString);
        assertTrue(pairs.err().contains("--pairs 0: give 1 to 100000"), pairs.err());
    }

    @Test
    void aBrokenAllocatorFailsItsChecksAndTheDevicesChecksStillPass() {
        // An allocator whose free never returns a block to its cache: every allocation is a device malloc.
        AllocatorProvider direct = AllocatorRegistry.load().get("direct");
        AllocatorProvider leaky = new AllocatorProvider() {
            @Override
            public String name() {
                return "caching";
            }

            @Override
            public String description() {
                return "direct, named caching: frees go to the device";
            }

            @Override
            public ConfigSchema configSchema() {
                return direct.configSchema();
            }

            @Override
            public DeviceAllocator create(AllocatorSetup setup) {
                return direct.create(setup);
            }
        };
        DeviceCheck check = new DeviceCheck("sim:1GiB", "caching", DeviceRegistry.load(),
                AllocatorRegistry.of(List.of(leaky)));
        List<DeviceCheck.Result> results = check.run();
        DeviceCheck.Result cached = results.stream().filter(x -> x.name().contains("a cached pair")).findFirst()
                .orElseThrow();
        assertEquals(DeviceCheck.Outcome.FAIL, cached.outcome(), cached.toString());
        assertEquals("the second allocation of 1 MiB made a device malloc", cached.detail());
        assertTrue(results.stream().filter(x -> !x.name().startsWith("caching allocator"))
                .allMatch(x -> x.outcome() != DeviceCheck.Outcome.FAIL), results.toString());
    }

    @Test
    void pageLockedMemoryGoesWithCudaAndHost() {
        assertEquals("cuda-host:1", DeviceCheck.pinnedSpec("cuda:1"));
        assertEquals("cuda-host", DeviceCheck.pinnedSpec("cuda"));
        assertEquals("pinned-host:64MiB", DeviceCheck.pinnedSpec("host:8GiB"));
        assertNull(DeviceCheck.pinnedSpec("sim:80GiB"));
    }
}
