package io.devalloc.examples.architecture;

import static org.junit.jupiter.api.Assertions.assertTrue;

import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import com.tngtech.archunit.lang.CompositeArchRule;
import org.junit.jupiter.api.Test;

/**
 * The dependency rules on the real code. This module depends on every other module, so every production class of
 * the project is on its class path.
 */
class ArchitectureTest {

    private static final JavaClasses PRODUCTION = new ClassFileImporter()
            .withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
            // replay's test fixtures come as a test jar, which DO_NOT_INCLUDE_TESTS does not recognise
            .withImportOption(location -> !location.contains("-tests.jar"))
            .importPackages("io.devalloc");

    @Test
    void everyModuleIsOnTheClassPath() {
        for (String pkg : new String[] {"io.devalloc.api", "io.devalloc.sim", "io.devalloc.host", "io.devalloc.guice",
                "io.devalloc.bfc", "io.devalloc.caching", "io.devalloc.cuda", "io.devalloc.trace", "io.devalloc.replay",
                "io.devalloc.api.internal",
                "io.devalloc.micrometer"}) {
            assertTrue(PRODUCTION.containPackage(pkg), "missing " + pkg + ": the rules would check nothing there");
        }
    }

    @Test
    void productionCodeFollowsEveryRule() {
        // One composite rule, so that a failure reports every broken rule at once.
        CompositeArchRule.of(ArchitectureRules.all("io.devalloc")).check(PRODUCTION);
    }
}
