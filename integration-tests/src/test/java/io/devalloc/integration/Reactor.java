package io.devalloc.integration;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import javax.xml.parsers.DocumentBuilderFactory;
import javax.xml.parsers.ParserConfigurationException;
import org.w3c.dom.Document;
import org.w3c.dom.Element;
import org.w3c.dom.Node;
import org.w3c.dom.NodeList;
import org.xml.sax.SAXException;

/**
 * devalloc's reactor as its poms declare it: the root's modules, in order, each with its artifactId and whether
 * it is published. A module is published unless its pom sets {@code maven.install.skip} to {@code true}
 * (applications and tests: examples, benchmarks, integration-tests); the BOM is published but lists only the others.
 *
 * @param root       the repository root (the directory of the parent pom)
 * @param version    the parent pom's version, every module's
 * @param modules    every module, in the root pom's order
 */
record Reactor(Path root, String version, List<ReactorModule> modules) {

    /** The BOM module's directory and artifactId. */
    static final String BOM = "devalloc-bom";

    /**
     * One module of the reactor.
     *
     * @param directory  its directory under the root
     * @param artifactId its artifactId
     * @param published  whether {@code ./mvnw install} installs it
     */
    record ReactorModule(String directory, String artifactId, boolean published) {
    }

    /** Surefire runs in the module's directory ({@code integration-tests}); the root is one level up. */
    static Path rootDirectory() {
        return Path.of(System.getProperty("basedir", ".")).toAbsolutePath().resolve("..").normalize();
    }

    static Reactor read(Path root) throws IOException {
        Element parent = parse(root.resolve("pom.xml"));
        List<ReactorModule> modules = new ArrayList<>();
        for (Element module : children(child(parent, "modules"), "module")) {
            String directory = module.getTextContent().trim();
            Element pom = parse(root.resolve(directory).resolve("pom.xml"));
            Element properties = child(pom, "properties");
            Element skip = properties == null ? null : child(properties, "maven.install.skip");
            boolean published = skip == null || !"true".equals(skip.getTextContent().trim());
            modules.add(new ReactorModule(directory, text(pom, "artifactId"), published));
        }
        return new Reactor(root, text(parent, "version"), List.copyOf(modules));
    }

    /** The published modules that devalloc-bom must manage: every published module but the BOM itself. */
    List<String> publishedLibraries() {
        return modules.stream().filter(m -> m.published() && !m.artifactId().equals(BOM))
                .map(ReactorModule::artifactId).toList();
    }

    /** The directories of the modules {@code ./mvnw install} skips, as {@code -pl} exclusions. */
    String unpublishedExclusions() {
        return String.join(",", modules.stream().filter(m -> !m.published()).map(m -> "!" + m.directory()).toList());
    }

    static Element parse(Path pom) throws IOException {
        try {
            DocumentBuilderFactory factory = DocumentBuilderFactory.newInstance();
            factory.setFeature("http://apache.org/xml/features/disallow-doctype-decl", true);
            Document document = factory.newDocumentBuilder().parse(pom.toFile());
            return document.getDocumentElement();
        } catch (ParserConfigurationException | SAXException e) {
            throw new IOException("cannot read " + pom + ": " + e.getMessage(), e);
        }
    }

    /** The first child element of that name, or null. */
    static Element child(Element element, String name) {
        List<Element> found = children(element, name);
        return found.isEmpty() ? null : found.getFirst();
    }

    static List<Element> children(Element element, String name) {
        List<Element> found = new ArrayList<>();
        NodeList nodes = element.getChildNodes();
        for (int i = 0; i < nodes.getLength(); i++) {
            if (nodes.item(i).getNodeType() == Node.ELEMENT_NODE && name.equals(nodes.item(i).getNodeName())) {
                found.add((Element) nodes.item(i));
            }
        }
        return found;
    }

    static String text(Element element, String name) {
        Element found = child(element, name);
        if (found == null) {
            throw new IllegalStateException("no <" + name + "> in <" + element.getNodeName() + ">");
        }
        return found.getTextContent().trim();
    }
}
