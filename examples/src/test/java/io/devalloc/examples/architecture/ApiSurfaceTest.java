package io.devalloc.examples.architecture;

import static java.util.Map.entry;
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
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * The surface of {@code allocator-api}, counted honestly. What an application names, observability included, is at
 * most 30 public types, each listed here with why it is public, so that a new one is a decision. The port types an
 * application meets through {@code DeviceAllocator.device()} and the SPI that plug-ins and tools implement and call
 * are listed apart ({@link #PORT_TYPES}, {@link #SPI_PACKAGES}); {@code internal} (exported to the modules that
 * implement devices and allocators only) and {@code collect} (primitive collections, exported to devalloc's modules
 * only) are no API at all.
 */
class ApiSurfaceTest {

    /** Every application-facing type, with why it is public. */
    private static final Map<String, String> APPLICATION_TYPES = Map.ofEntries(
            entry("io.devalloc.api.DeviceAllocator", "the allocator itself: malloc, free, stats, snapshots, unwrap"),
            entry("io.devalloc.api.DeviceAllocators", "the entry point: the builder and what the class path offers"),
            entry("io.devalloc.api.Allocation", "an allocation that frees itself, for try-with-resources"),
            entry("io.devalloc.api.DevallocSettings", "device, allocator and configuration from the environment"),
            entry("io.devalloc.api.ProviderStatus", "what DeviceAllocators.devices() says of each device provider"),
            entry("io.devalloc.api.error.DevallocException", "the base of every failure, to catch them all"),
            entry("io.devalloc.api.error.OutOfMemoryException", "no memory for a request: what an application handles"),
            entry("io.devalloc.api.error.InvalidFreeException", "a double, foreign or unknown free"),
            entry("io.devalloc.api.error.InvalidConfigurationException", "a refused configuration, naming its key"),
            entry("io.devalloc.api.error.DeviceException", "a device call failed"),
            entry("io.devalloc.api.error.DeviceUnavailableException", "no device for the spec, with the reason"),
            entry("io.devalloc.api.error.UnknownStreamException", "a stream the allocator does not know"),
            entry("io.devalloc.api.snapshot.MemorySnapshot", "DeviceAllocator.snapshot(): the segments"),
            entry("io.devalloc.api.snapshot.SegmentSnapshot", "one segment of a snapshot, with its blocks"),
            entry("io.devalloc.api.snapshot.BlockSnapshot", "one block of a segment"),
            entry("io.devalloc.api.snapshot.BlockState", "a block's state: allocated, inactive, ..."),
            entry("io.devalloc.api.stats.AllocatorStats", "DeviceAllocator.stats(): the figures every allocator has"),
            entry("io.devalloc.api.stats.PoolUsage", "DeviceAllocator.memoryUsage(): the gauges per pool"),
            entry("io.devalloc.api.units.ByteSize", "sizes in code and configuration (MiB, parse, format)"),
            entry("io.devalloc.guice.DevallocModule", "the allocator as a Guice binding"),
            entry("io.devalloc.api.observe.AllocatorListener", "watch device calls, failures, retries, releases"),
            entry("io.devalloc.api.observe.DeviceCall", "which device call a listener is told of"),
            entry("io.devalloc.api.observe.AllocationFailure", "what an out-of-memory handler is asked about"),
            entry("io.devalloc.api.observe.OutOfMemoryHandler", "free something and retry when memory runs out"),
            entry("io.devalloc.api.observe.ThresholdListener", "be told when a gauge crosses a level"),
            entry("io.devalloc.api.observe.MemoryGauge", "which gauge a threshold watches"),
            entry("io.devalloc.api.observe.ObservabilitySettings", "name, JFR and JMX from the environment"),
            entry("io.devalloc.api.jfr.JfrEvents", "the event names to record, and JFR for allocators built by hand"),
            entry("io.devalloc.api.jmx.AllocatorMXBean", "the JMX bean's interface (JMX requires it public)"),
            entry("io.devalloc.api.jmx.AllocatorMXBeans", "the bean's ObjectName, to query it"));

    /** The packages whose public types are all application-facing. */
    private static final Set<String> APPLICATION_PACKAGES = Set.of("io.devalloc.api", "io.devalloc.api.error",
            "io.devalloc.api.snapshot", "io.devalloc.api.stats", "io.devalloc.api.units", "io.devalloc.guice",
            "io.devalloc.api.observe", "io.devalloc.api.jfr", "io.devalloc.api.jmx");

    /**
     * The port: what a device implements and an allocator calls. Applications meet these four through
     * {@code DeviceAllocator.device()} and streams; the rest of the port is the SPI's.
     */
    static final Set<String> PORT_TYPES = Set.of("io.devalloc.api.device.DeviceMemory",
            "io.devalloc.api.device.DeviceStream", "io.devalloc.api.device.DeviceDescriptor",
            "io.devalloc.api.device.DeviceKind");

    /**
     * The SPI: what plug-ins implement and tools call (providers and their registries, the allocator base, the
     * capabilities reached with unwrap, configuration schemas, the device port's details, the direct allocator).
     */
    static final Set<String> SPI_PACKAGES = Set.of("io.devalloc.api.spi", "io.devalloc.api.config",
            "io.devalloc.api.device", "io.devalloc.api.direct");

    /** No API: exported to devalloc's own modules only. */
    static final Set<String> NOT_API_PACKAGES = Set.of("io.devalloc.api.internal", "io.devalloc.api.collect");

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
            if (isPublicTopLevel(c) && APPLICATION_PACKAGES.contains(c.getPackageName())) {
                names.add(c.getName());
            }
        }
        return names;
    }

    private static boolean isPublicTopLevel(JavaClass c) {
        return c.isTopLevelClass() && c.getModifiers().contains(JavaModifier.PUBLIC)
                && !c.getSimpleName().equals("package-info");
    }

    @Test
    void atMostThirtyApplicationFacingTypesEachWithItsReason() {
        Set<String> found = applicationFacing();
        assertEquals(new TreeSet<>(APPLICATION_TYPES.keySet()), found,
                "a new application-facing type is a decision: list it here with why it is public");
        assertTrue(found.size() <= 30, found.size() + " application-facing types");
        for (Map.Entry<String, String> e : APPLICATION_TYPES.entrySet()) {
            assertFalse(e.getValue().isBlank(), e.getKey() + " says why it is public");
        }
    }

    /** Every public type of the API module is application-facing, port, SPI, or in a package that is no API. */
    @Test
    void everyPublicTypeIsCountedSomewhere() {
        List<String> uncounted = new ArrayList<>();
        for (JavaClass c : API) {
            String p = c.getPackageName();
            if (isPublicTopLevel(c) && !APPLICATION_PACKAGES.contains(p) && !SPI_PACKAGES.contains(p)
                    && !NOT_API_PACKAGES.contains(p)) {
                uncounted.add(c.getName());
            }
        }
        assertEquals(List.of(), uncounted, "a public type in a package no list names");
        for (String port : PORT_TYPES) {
            assertTrue(classExists(port), port);
        }
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
                assertTrue(facing.contains(type) || PORT_TYPES.contains(type),
                        type + " is named by the README but is neither application-facing nor a port type");
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
