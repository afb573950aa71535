package io.devalloc.integration;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.w3c.dom.Element;

/**
 * devalloc-bom manages exactly the published modules, at the reactor's version, and nothing else: no parent (whose
 * dependencyManagement an import would pass on) and no third-party library.
 */
class BomTest {

    private final Reactor reactor = Reactor.read(Reactor.rootDirectory());
    private final Element bom = Reactor.parse(reactor.root().resolve(Reactor.BOM).resolve("pom.xml"));

    BomTest() throws IOException {
    }

    @Test
    void listsEveryPublishedModuleAtTheProjectVersion() {
        List<String> managed = new ArrayList<>();
        Element dependencies = Reactor.child(Reactor.child(bom, "dependencyManagement"), "dependencies");
        for (Element dependency : Reactor.children(dependencies, "dependency")) {
            String coordinates = Reactor.text(dependency, "groupId") + ":" + Reactor.text(dependency, "artifactId");
            assertEquals("io.devalloc", Reactor.text(dependency, "groupId"), coordinates + ": not devalloc's");
            assertEquals("${project.version}", Reactor.text(dependency, "version"), coordinates);
            managed.add(Reactor.text(dependency, "artifactId"));
        }
        assertEquals(reactor.publishedLibraries(), managed,
                "devalloc-bom/pom.xml must list every published module (a module without maven.install.skip), in"
                        + " the root pom's order");
    }

    @Test
    void hasTheReactorsCoordinatesAndNoParent() {
        assertNull(Reactor.child(bom, "parent"), "an import would pass on the parent's dependencyManagement");
        assertEquals("io.devalloc", Reactor.text(bom, "groupId"));
        assertEquals(Reactor.BOM, Reactor.text(bom, "artifactId"));
        assertEquals("pom", Reactor.text(bom, "packaging"));
        assertEquals(reactor.version(), Reactor.text(bom, "version"),
                "devalloc-bom has no parent: set its version with the reactor's");
        assertEquals(reactor.version(), System.getProperty("devalloc.version", reactor.version()));
    }

    @Test
    void theApplicationsAndTheseTestsAreNotPublished() {
        List<String> unpublished = reactor.modules().stream().filter(m -> !m.published())
                .map(Reactor.ReactorModule::artifactId).toList();
        assertEquals(List.of("examples", "integration-tests", "benchmarks"), unpublished);
        assertTrue(reactor.publishedLibraries().contains("allocator-api"), reactor::toString);
    }
}
