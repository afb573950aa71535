package io.devalloc.examples.architecture;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.tngtech.archunit.core.domain.JavaClass;
import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.domain.JavaModifier;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * The application-facing surface of {@code allocator-api}: the public types an application names, at most 26,
 * listed here so that a new one is a decision, and the observability surface beside it, at most 13. The SPI
 * packages ({@code spi}, {@code config}, and the {@code device} port's types a plug-in implements) and
 * {@code internal} are not part of it; module-info exports {@code internal} to devalloc's own modules only, and
 * {@code ArchitectureRules} keeps the example programs off it.
 */
class ApiSurfaceTest {

    /** Packages whose public types are all application-facing. */
    private static final Set<String> APPLICATION_PACKAGES = Set.of("io.devalloc.api", "io.devalloc.api.error",
            "io.devalloc.api.snapshot", "io.devalloc.api.stats", "io.devalloc.api.units", "io.devalloc.guice");

    /** Types an application names from the port and SPI packages (what {@code DeviceAllocator} hands out, say). */
    private static final Set<String> APPLICATION_TYPES_ELSEWHERE = Set.of("io.devalloc.api.device.DeviceMemory",
            "io.devalloc.api.device.DeviceStream", "io.devalloc.api.device.DeviceDescriptor",
            "io.devalloc.api.device.DeviceKind", "io.devalloc.api.direct.DirectAllocatorProvider");

    /**
     * The observability surface, counted apart: what an application names only to watch an allocator (the listener
     * SPI, the out-of-memory handler, thresholds, JFR, JMX). Its own budget, so that watching stays a small,
     * separate thing to learn and the core's 26 stay what allocating needs.
     */
    private static final Set<String> OBSERVABILITY_PACKAGES = Set.of("io.devalloc.api.observe",
            "io.devalloc.api.jfr", "io.devalloc.api.jmx");

    private static final Set<String> EXPECTED_OBSERVABILITY = Set.of(
            "io.devalloc.api.observe.AllocationFailure", "io.devalloc.api.observe.AllocatorListener",
            "io.devalloc.api.observe.DeviceCall", "io.devalloc.api.observe.MemoryGauge",
            "io.devalloc.api.observe.ObservabilitySettings", "io.devalloc.api.observe.OutOfMemoryHandler",
            "io.devalloc.api.observe.RetryCause",
            "io.devalloc.api.observe.ThresholdListener", "io.devalloc.api.jfr.JfrEvents",
            "io.devalloc.api.jfr.JfrListener", "io.devalloc.api.jmx.AllocatorMXBean",
            "io.devalloc.api.jmx.AllocatorMXBeans");

    private static final Set<String> EXPECTED = Set.of(
            "io.devalloc.api.Allocation", "io.devalloc.api.DevallocSettings", "io.devalloc.api.DeviceAllocator",
            "io.devalloc.api.DeviceAllocators", "io.devalloc.api.ProviderStatus",
            "io.devalloc.api.error.DevallocException", "io.devalloc.api.error.DeviceException",
            "io.devalloc.api.error.DeviceUnavailableException",
            "io.devalloc.api.error.InvalidConfigurationException", "io.devalloc.api.error.InvalidFreeException",
            "io.devalloc.api.error.OutOfMemoryException", "io.devalloc.api.error.UnknownStreamException",
            "io.devalloc.api.snapshot.BlockSnapshot", "io.devalloc.api.snapshot.BlockState",
            "io.devalloc.api.snapshot.MemorySnapshot", "io.devalloc.api.snapshot.PythonTuple",
            "io.devalloc.api.snapshot.SegmentSnapshot",
            "io.devalloc.api.stats.AllocatorStats", "io.devalloc.api.stats.PoolUsage",
            "io.devalloc.api.units.ByteSize",
            "io.devalloc.guice.DevallocModule",
            "io.devalloc.api.device.DeviceMemory", "io.devalloc.api.device.DeviceStream",
            "io.devalloc.api.device.DeviceDescriptor", "io.devalloc.api.device.DeviceKind",
            "io.devalloc.api.direct.DirectAllocatorProvider");

    /** Surefire runs in the module directory; the README is one level up. */
    private static final Path README = Path.of(System.getProperty("basedir", ".")).toAbsolutePath()
            .resolve("../README.md").normalize();

    private static final JavaClasses API = new ClassFileImporter()
            .withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
            .withImportOption(location -> !location.contains("-tests.jar"))
            .importPackages("io.devalloc.api", "io.devalloc.guice");

    private static Set<String> applicationFacing() {
        Set<String> names = new TreeSet<>();
        for (JavaClass c : API) {
            if (isPublicTopLevel(c) && (APPLICATION_PACKAGES.contains(c.getPackageName())
                    || APPLICATION_TYPES_ELSEWHERE.contains(c.getName()))) {
                names.add(c.getName());
            }
        }
        return names;
    }

    private static boolean isPublicTopLevel(JavaClass c) {
        return c.isTopLevelClass() && c.getModifiers().contains(JavaModifier.PUBLIC)
                && !c.getSimpleName().equals("package-info");
    }

    /** At most 26: the 25 of allocating, plus the one an application reads gauges with ({@code PoolUsage}). */
    @Test
    void atMostTwentySixTypesAndExactlyTheListedOnes() {
        Set<String> found = applicationFacing();
        assertEquals(new TreeSet<>(EXPECTED), found, "a new application-facing type is a decision: list it here");
        assertTrue(found.size() <= 26, found.size() + " application-facing types");
    }

    @Test
    void atMostThirteenObservabilityTypesAndExactlyTheListedOnes() {
        Set<String> found = new TreeSet<>();
        for (JavaClass c : API) {
            if (isPublicTopLevel(c) && OBSERVABILITY_PACKAGES.contains(c.getPackageName())) {
                found.add(c.getName());
            }
        }
        assertEquals(new TreeSet<>(EXPECTED_OBSERVABILITY), found,
                "a new observability type is a decision: list it here");
        assertTrue(found.size() <= 13, found.size() + " observability types");
    }

    /**
     * The README's API page, docs/api.md, lists each package its snippets name, with the types; every API type it
     * lists is application-facing, and every listed type exists in the listed package.
     */
    @Test
    void theReadmeNamesOnlyApplicationFacingApiTypes() throws IOException {
        String api = Files.readString(README.resolveSibling("docs").resolve("api.md"));
        assertTrue(api.startsWith("# Using devalloc from Java"), "docs/api.md, the README's page for the API");
        // The page's list, up to its first snippet.
        String section = api.substring(0, api.indexOf("```"));
        Matcher item = Pattern.compile("`(io\\.devalloc[a-z.]*)`: ([^;\\n(]+)").matcher(section);
        List<String> named = new ArrayList<>();
        while (item.find()) {
            for (Matcher type = Pattern.compile("`([A-Z]\\w*)`").matcher(item.group(2)); type.find(); ) {
                named.add(item.group(1) + "." + type.group(1));
            }
        }
        assertFalse(named.isEmpty(), "no package list found in:\n" + section);
        // And the README's own Main.java ("Use it from your build") imports only what applications may use.
        Matcher imports = Pattern.compile("(?m)^import (io\\.devalloc\\.[\\w.]+);").matcher(Files.readString(README));
        int readmeImports = 0;
        while (imports.find()) {
            named.add(imports.group(1));
            readmeImports++;
        }
        assertTrue(readmeImports >= 3, "the README's Main.java imports devalloc's API");
        Set<String> facing = applicationFacing();
        for (String type : named) {
            if (type.startsWith("io.devalloc.api.") || type.startsWith("io.devalloc.guice.")) {
                assertTrue(facing.contains(type), type + " is named by the README but is not application-facing");
            } else {
                assertTrue(classExists(type), type + " is named by the README but does not exist");
            }
        }
    }

    private static boolean classExists(String name) {
        try {
            Class.forName(name, false, ApiSurfaceTest.class.getClassLoader());
            return true;
        } catch (ClassNotFoundException e) {
            return false;
        }
    }
}
