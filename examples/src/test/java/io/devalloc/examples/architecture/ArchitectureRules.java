package io.devalloc.examples.architecture;

import static com.tngtech.archunit.base.DescribedPredicate.not;
import static com.tngtech.archunit.core.domain.JavaClass.Predicates.resideInAPackage;
import static com.tngtech.archunit.core.domain.JavaClass.Predicates.resideInAnyPackage;
import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.classes;
import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;
import static com.tngtech.archunit.library.dependencies.SlicesRuleDefinition.slices;

import com.tngtech.archunit.lang.ArchRule;
import java.util.ArrayList;
import java.util.List;

/**
 * The project's dependency rules, written against a root package so that the same rules check the real code
 * ({@code io.devalloc}) and, in {@link ArchitectureRulesCatchViolationsTest}, deliberately broken fixtures.
 *
 * <p>The arrows they encode (see {@code docs/architecture.md}): algorithms ({@code bfc}, {@code caching}) and adapters
 * ({@code sim}, {@code host}, {@code cuda}) see only the API; {@code trace} (trace-io) sees only the API;
 * {@code replay} sees the API, {@code trace} and the simulator, never an algorithm (it reaches allocator capabilities
 * through the SPI); {@code advisor} sees the API, {@code trace} and {@code replay}, never an algorithm or a device
 * adapter (grids come from the SPI, devices from the registry); {@code micrometer} (devalloc-micrometer, optional)
 * sees the API's public packages and Micrometer, and is the only module besides the launcher that sees Micrometer;
 * the API sees none of them; only the launcher
 * ({@code examples}) sees everything but the API's internal package, which only the modules that implement devices
 * and allocators use. On the module path the
 * module descriptors enforce the same fence at compile time; these rules hold it for class-path users too.
 */
final class ArchitectureRules {

    /** Pure algorithm modules: they see nothing but the API. */
    static final List<String> ALGORITHMS = List.of("bfc", "caching");
    /** Device adapters. */
    static final List<String> ADAPTERS = List.of("sim", "host", "cuda");
    /** The trace tools: formats (trace-io), the replay engine and the advisor. */
    static final List<String> TOOLS = List.of("trace", "replay", "advisor");
    /** Optional integrations with a third-party library each. */
    static final List<String> INTEGRATIONS = List.of("micrometer");

    private ArchitectureRules() {
    }

    static List<ArchRule> all(String root) {
        List<ArchRule> rules = new ArrayList<>();
        for (String algorithm : ALGORITHMS) {
            rules.add(algorithmUsesOnlyTheApi(root, algorithm));
        }
        rules.add(apiImportsNoAdapterNoJcudaNoGuice(root));
        rules.add(onlyWiringUsesGuice(root));
        for (String adapter : ADAPTERS) {
            rules.add(adapterIsIndependent(root, adapter));
        }
        rules.add(onlyTheCudaAdapterUsesJcuda(root));
        rules.add(traceIoUsesOnlyTheApi(root));
        rules.add(replayUsesTheApiTraceIoAndTheSimulatorOnly(root));
        rules.add(advisorUsesTheApiTraceIoAndTheReplayOnly(root));
        rules.add(micrometerUsesThePublicApiAndMicrometerOnly(root));
        rules.add(onlyTheMicrometerModuleAndTheLauncherUseMicrometer(root));
        rules.add(onlyImplementationsUseTheInternalPackage(root));
        rules.add(noPackageCycles(root));
        return rules;
    }

    static ArchRule algorithmUsesOnlyTheApi(String root, String algorithm) {
        return classes().that().resideInAPackage(root + "." + algorithm + "..")
                .should().onlyDependOnClassesThat().resideInAnyPackage(root + ".api..", root + "." + algorithm + "..",
                        "java..", "org.slf4j..", "")
                .because("algorithm modules import nothing but allocator-api: no JCuda, no Guice, no adapter")
                .allowEmptyShould(true);
    }

    static ArchRule apiImportsNoAdapterNoJcudaNoGuice(String root) {
        List<String> forbidden = new ArrayList<>(List.of("jcuda..", "com.google.inject..", "jakarta.inject..",
                root + ".guice..", root + ".examples.."));
        for (String a : ADAPTERS) {
            forbidden.add(root + "." + a + "..");
        }
        for (String a : ALGORITHMS) {
            forbidden.add(root + "." + a + "..");
        }
        for (String t : TOOLS) {
            forbidden.add(root + "." + t + "..");
        }
        for (String i : INTEGRATIONS) {
            forbidden.add(root + "." + i + "..");
        }
        return noClasses().that().resideInAPackage(root + ".api..")
                .should().dependOnClassesThat().resideInAnyPackage(forbidden.toArray(String[]::new))
                .because("the API is the hexagon's core: adapters, algorithms, tools and wiring depend on it, never the"
                        + " reverse (and it knows no file format)");
    }

    static ArchRule onlyWiringUsesGuice(String root) {
        return noClasses().that().resideOutsideOfPackages("..guice..", root + ".examples..")
                .and().resideInAPackage(root + "..")
                .should().dependOnClassesThat().resideInAnyPackage("com.google.inject..", "jakarta.inject..")
                .because("users who do not use Guice must not need it on their class path");
    }

    static ArchRule adapterIsIndependent(String root, String adapter) {
        List<String> others = new ArrayList<>();
        for (String a : ADAPTERS) {
            if (!a.equals(adapter)) {
                others.add(root + "." + a + "..");
            }
        }
        for (String a : ALGORITHMS) {
            others.add(root + "." + a + "..");
        }
        for (String t : TOOLS) {
            others.add(root + "." + t + "..");
        }
        for (String i : INTEGRATIONS) {
            others.add(root + "." + i + "..");
        }
        others.add(root + ".examples..");
        return noClasses().that().resideInAPackage(root + "." + adapter + "..")
                .should().dependOnClassesThat().resideInAnyPackage(others.toArray(String[]::new))
                .because("adapters implement the DeviceMemory port and know nothing of each other or of algorithms")
                .allowEmptyShould(true);
    }

    static ArchRule onlyTheCudaAdapterUsesJcuda(String root) {
        return noClasses().that().resideOutsideOfPackage(root + ".cuda..").and().resideInAPackage(root + "..")
                .should().dependOnClassesThat().resideInAPackage("jcuda..")
                .because("JCuda stays behind the CUDA adapter's port, so nothing else can break without a driver");
    }

    static ArchRule traceIoUsesOnlyTheApi(String root) {
        return classes().that().resideInAPackage(root + ".trace..")
                .should().onlyDependOnClassesThat().resideInAnyPackage(root + ".api..", root + ".trace..", "java..",
                        "org.slf4j..", "net.razorvine..", "")
                .because("trace-io reads and writes formats over the API only: any allocator, any device")
                .allowEmptyShould(true);
    }

    static ArchRule replayUsesTheApiTraceIoAndTheSimulatorOnly(String root) {
        return classes().that().resideInAPackage(root + ".replay..")
                .should().onlyDependOnClassesThat().resideInAnyPackage(root + ".api..", root + ".trace..",
                        root + ".sim..", root + ".replay..", "java..", "org.slf4j..", "picocli..", "")
                .because("the replay reaches allocators through the SPI (unwrap to a capability), never through an"
                        + " algorithm's own classes; the simulator is its one device dependency, for scripted"
                        + " placement")
                .allowEmptyShould(true);
    }

    static ArchRule advisorUsesTheApiTraceIoAndTheReplayOnly(String root) {
        return classes().that().resideInAPackage(root + ".advisor..")
                .should().onlyDependOnClassesThat().resideInAnyPackage(root + ".api..", root + ".trace..",
                        root + ".replay..", root + ".advisor..", "java..", "org.slf4j..", "picocli..", "")
                .because("the advisor drives the replay engine and reaches allocators through the SPI (their default"
                        + " grids included), never through an algorithm's or a device's own classes")
                .allowEmptyShould(true);
    }

    static ArchRule micrometerUsesThePublicApiAndMicrometerOnly(String root) {
        return classes().that().resideInAPackage(root + ".micrometer..")
                .should().onlyDependOnClassesThat(resideInAnyPackage(root + ".api..", root + ".micrometer..",
                        "io.micrometer..", "java..", "org.slf4j..", "")
                        .and(not(resideInAPackage(root + ".api.internal.."))))
                .because("devalloc-micrometer is an optional add-on over allocator-api's public packages (the"
                        + " listener SPI and the stats): no algorithm, no device, no internal class")
                .allowEmptyShould(true);
    }

    static ArchRule onlyTheMicrometerModuleAndTheLauncherUseMicrometer(String root) {
        return noClasses().that().resideOutsideOfPackages(root + ".micrometer..", root + ".examples..")
                .and().resideInAPackage(root + "..")
                .should().dependOnClassesThat().resideInAPackage("io.micrometer..")
                .because("Micrometer is optional: an application without it on its class path must run every other"
                        + " module");
    }

    /**
     * allocator-api's internal package serves the modules that implement devices and allocators (the API itself, the
     * algorithms, the adapters); the tools, the integrations and the launcher, whose example programs stand for
     * application code, use the public API and the SPI, as the module descriptor's qualified export says.
     */
    static ArchRule onlyImplementationsUseTheInternalPackage(String root) {
        List<String> implementing = new ArrayList<>(List.of(root + ".api..", root + ".guice.."));
        for (String module : ALGORITHMS) {
            implementing.add(root + "." + module + "..");
        }
        for (String module : ADAPTERS) {
            implementing.add(root + "." + module + "..");
        }
        return noClasses().that().resideInAPackage(root + "..")
                .and().resideOutsideOfPackages(implementing.toArray(String[]::new))
                .should().dependOnClassesThat().resideInAPackage(root + ".api.internal..")
                .because("allocator-api exports its internal package only to the modules that implement devices and"
                        + " allocators: tools build allocators with DeviceAllocators.builder() and the SPI")
                .allowEmptyShould(true);
    }

    static ArchRule noPackageCycles(String root) {
        // allocator-api's packages depend on each other both ways by nature (providers create allocators, the entry
        // point uses the providers); every other package, and the modules among themselves, form a layered graph.
        return slices().matching(root + ".(**)").should().beFreeOfCycles()
                .ignoreDependency(resideInAPackage(root + ".api.."), resideInAPackage(root + ".api.."))
                .because("packages form a layered graph");
    }
}
