package io.devalloc.sim.broken;

import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.platform.engine.discovery.DiscoverySelectors.selectMethod;

import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.platform.engine.TestExecutionResult;
import org.junit.platform.testkit.engine.EngineTestKit;
import org.junit.platform.testkit.engine.Event;
import org.junit.platform.testkit.engine.Events;

/** The contract suites would fail on a violation: run them against broken allocators and expect failures. */
class ContractCatchesViolationsTest {

    private static Events run(Class<?> fixture, String method) {
        return EngineTestKit.engine("junit-jupiter")
                .selectors(selectMethod(fixture.getName() + "#" + method))
                .execute()
                .testEvents();
    }

    private static String failureMessages(Events events) {
        List<Event> failed = events.failed().stream().toList();
        StringBuilder sb = new StringBuilder();
        for (Event e : failed) {
            e.getPayload(TestExecutionResult.class)
                    .flatMap(TestExecutionResult::getThrowable)
                    .ifPresent(t -> sb.append(t.getMessage()).append('\n'));
        }
        return sb.toString();
    }

    @Test
    void anAllocatorThatIgnoresBadFreesFailsTheContract() {
        Events events = run(BrokenAllocatorFixtures.ForgivingFree.class, "invalidFreesAreRefusedAndChangeNothing");
        events.assertStatistics(s -> s.failed(1));
        assertTrue(failureMessages(events).contains("InvalidFreeException"), failureMessages(events));
    }

    @Test
    void anAllocatorWhoseStatsLieFailsTheContract() {
        Events events = run(BrokenAllocatorFixtures.MiscountingStats.class, "longRandomWorkloadKeepsEveryInvariant");
        events.assertStatistics(s -> s.failed(1));
        assertTrue(failureMessages(events).contains("activeAllocations"), failureMessages(events));
    }

    @Test
    void anAllocatorThatOverlapsAllocationsFailsTheContract() {
        Events events = run(BrokenAllocatorFixtures.Overlapping.class, "longRandomWorkloadKeepsEveryInvariant");
        events.assertStatistics(s -> s.failed(1));
        assertTrue(failureMessages(events).contains("overlaps"), failureMessages(events));
    }

    @Test
    void aDeviceThatLeavesAFailedUnmapsRangeMappedFailsTheContract() {
        Events events = run(BrokenDeviceFixtures.MappedAfterFailedUnmap.class,
                "virtualMemoryFailedUnmapLeavesTheRangeUnmapped");
        events.assertStatistics(s -> s.failed(1));
        assertTrue(failureMessages(events).contains("its range counts as unmapped"), failureMessages(events));
    }

    @Test
    void theSameDeviceCheckOnTheCorrectDevicePasses() throws ClassNotFoundException {
        Events events = run(Class.forName("io.devalloc.sim.SimulatedDeviceContractTest"),
                "virtualMemoryFailedUnmapLeavesTheRangeUnmapped");
        events.assertStatistics(s -> s.succeeded(1).failed(0));
    }

    @Test
    void theSameSuiteOnTheCorrectAllocatorPasses() throws ClassNotFoundException {
        Events events = run(Class.forName("io.devalloc.sim.DirectAllocatorOnSimContractTest"),
                "longRandomWorkloadKeepsEveryInvariant");
        events.assertStatistics(s -> s.succeeded(1).failed(0));
    }
}
