package io.devalloc.sim.broken;

import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.platform.engine.discovery.DiscoverySelectors.selectMethod;

import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.platform.engine.TestExecutionResult;
import org.junit.platform.testkit.engine.EngineTestKit;
import org.junit.platform.testkit.engine.Event;
import org.junit.platform.testkit.engine.Events;

/**
 * The reliability suites would fail on a violation: run them against broken allocators (overlapping, miscounting,
 * books that drift after a device error, a heap that grows with every allocation) and expect failures.
 */
class ReliabilityCatchesViolationsTest {

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
    void theModelBasedRunCatchesOverlaps() {
        Events events = run(BrokenReliabilityFixtures.Overlapping.class, "modelBasedLongRun");
        events.assertStatistics(s -> s.failed(1));
        assertTrue(failureMessages(events).contains("overlaps"), failureMessages(events));
    }

    @Test
    void theModelBasedRunCatchesStatsThatDisagreeWithTheModel() {
        Events events = run(BrokenReliabilityFixtures.MiscountingStats.class, "modelBasedLongRun");
        events.assertStatistics(s -> s.failed(1));
        assertTrue(failureMessages(events).contains("stats disagree with the model"), failureMessages(events));
    }

    @Test
    void theFaultSuiteCatchesBooksThatDriftAfterADeviceError() {
        Events events = run(BrokenReliabilityFixtures.SwallowsDeviceErrors.class, "faultInjection");
        events.assertStatistics(s -> s.failed(1));
        assertTrue(failureMessages(events).contains("FREE"), failureMessages(events));
    }

    @Test
    void theHeapSuiteCatchesAHeapThatGrows() {
        Events events = run(BrokenReliabilityFixtures.HoardsHeap.class, "heapStaysFlatWithHistoryOff");
        events.assertStatistics(s -> s.failed(1));
        assertTrue(failureMessages(events).contains("the retained heap grew"), failureMessages(events));
    }
}
