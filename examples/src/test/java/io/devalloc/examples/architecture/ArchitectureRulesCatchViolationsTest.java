package io.devalloc.examples.architecture;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.lang.ArchRule;
import com.tngtech.archunit.lang.EvaluationResult;
import org.junit.jupiter.api.Test;

/**
 * The rules fail on a violation: the test fixtures under {@code fixtures.devalloc} break each rule on purpose
 * (an algorithm importing an adapter and Guice, an adapter importing another, the API importing an adapter, and a
 * package cycle).
 */
class ArchitectureRulesCatchViolationsTest {

    private static final String ROOT = "fixtures.devalloc";
    private static final JavaClasses BROKEN = new ClassFileImporter().importPackages(ROOT);

    private static String violations(ArchRule rule) {
        EvaluationResult result = rule.evaluate(BROKEN);
        assertTrue(result.hasViolation(), "the rule should have flagged the fixtures: " + rule.getDescription());
        return String.join("\n", result.getFailureReport().getDetails());
    }

    @Test
    void algorithmImportingAnAdapterIsCaught() {
        String report = violations(ArchitectureRules.algorithmUsesOnlyTheApi(ROOT, "bfc"));
        assertTrue(report.contains("fixtures.devalloc.sim.FakeSimDevice"), report);
        assertTrue(report.contains("com.google.inject"), report);
    }

    @Test
    void apiImportingAnAdapterIsCaught() {
        String report = violations(ArchitectureRules.apiImportsNoAdapterNoJcudaNoGuice(ROOT));
        assertTrue(report.contains("fixtures.devalloc.api.BadApi"), report);
        assertTrue(report.contains("fixtures.devalloc.sim.FakeSimDevice"), report);
    }

    @Test
    void traceIoImportingAnAdapterIsCaught() {
        String report = violations(ArchitectureRules.traceIoUsesOnlyTheApi(ROOT));
        assertTrue(report.contains("fixtures.devalloc.trace.a.CycleA"), report);
        assertTrue(report.contains("fixtures.devalloc.sim.FakeSimDevice"), report);
    }

    @Test
    void replayReachingIntoAnAlgorithmIsCaught() {
        String report = violations(ArchitectureRules.replayUsesTheApiTraceIoAndTheSimulatorOnly(ROOT));
        assertTrue(report.contains("fixtures.devalloc.caching.SomeAllocator"), report);
    }

    @Test
    void theAdvisorReachingIntoAnAlgorithmIsCaught() {
        String report = violations(ArchitectureRules.advisorUsesTheApiTraceIoAndTheReplayOnly(ROOT));
        assertTrue(report.contains("fixtures.devalloc.advisor.BadAdvisor"), report);
        assertTrue(report.contains("fixtures.devalloc.caching.SomeAllocator"), report);
    }

    @Test
    void aToolOrAnExampleNamingTheInternalPackageIsCaught() {
        String report = violations(ArchitectureRules.onlyImplementationsUseTheInternalPackage(ROOT));
        assertTrue(report.contains("fixtures.devalloc.examples.BadExample"), report);
        assertTrue(report.contains("fixtures.devalloc.replay.InternalReplay"), report);
        assertTrue(report.contains("fixtures.devalloc.api.internal.Helper"), report);
    }

    @Test
    void theMicrometerModuleReachingIntoAnAlgorithmOrTheInternalPackageIsCaught() {
        String report = violations(ArchitectureRules.micrometerUsesThePublicApiAndMicrometerOnly(ROOT));
        assertTrue(report.contains("fixtures.devalloc.caching.SomeAllocator"), report);
        assertTrue(report.contains("fixtures.devalloc.api.internal.Helper"), report);
    }

    @Test
    void micrometerOutsideItsModuleIsCaught() {
        String report = violations(ArchitectureRules.onlyTheMicrometerModuleAndTheLauncherUseMicrometer(ROOT));
        assertTrue(report.contains("fixtures.devalloc.caching.MeteredAllocator"), report);
        assertFalse(report.contains("fixtures.devalloc.micrometer."), report);
    }

    @Test
    void guiceOutsideTheWiringIsCaught() {
        String report = violations(ArchitectureRules.onlyWiringUsesGuice(ROOT));
        assertTrue(report.contains("BadAlgorithm"), report);
    }

    @Test
    void adapterImportingAnAlgorithmIsCaught() {
        String report = violations(ArchitectureRules.adapterIsIndependent(ROOT, "sim"));
        assertTrue(report.contains("fixtures.devalloc.bfc.BadAlgorithm"), report);
    }

    @Test
    void packageCycleIsCaught() {
        String report = violations(ArchitectureRules.noPackageCycles(ROOT));
        assertFalse(report.isBlank());
    }

    @Test
    void aCleanAlgorithmPasses() {
        JavaClasses clean = new ClassFileImporter().importClasses(fixtures.devalloc.bfc.GoodAlgorithm.class);
        assertFalse(ArchitectureRules.algorithmUsesOnlyTheApi(ROOT, "bfc").evaluate(clean).hasViolation());
    }
}
