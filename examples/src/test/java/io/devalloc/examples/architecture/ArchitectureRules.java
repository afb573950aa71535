package io.devalloc.examples.architecture;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.classes;
import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;
import static com.tngtech.archunit.library.dependencies.SlicesRuleDefinition.slices;

import com.tngtech.archunit.lang.ArchRule;
import java.util.ArrayList;
import java.util.List;

/**
 * The project's dependency rules, written against a root package so that the same rules check the real code
 * ({@code io.devalloc}) and, in {@link ArchitectureRulesCatchViolationsTest}, deliberately broken fixtures.
 */
final class ArchitectureRules {

    /** Pure algorithm modules: they see nothing but the API. */
    static final List<String> ALGORITHMS = List.of("bfc", "caching");
    /** Device adapters. */
    static final List<String> ADAPTERS = List.of("sim", "host", "cuda");

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
        return noClasses().that().resideInAPackage(root + ".api..")
                .should().dependOnClassesThat().resideInAnyPackage(forbidden.toArray(String[]::new))
                .because("the API is the hexagon's core: adapters, algorithms and wiring depend on it, never the reverse");
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

    static ArchRule noPackageCycles(String root) {
        return slices().matching(root + ".(**)").should().beFreeOfCycles()
                .because("packages form a layered graph");
    }
}
