package io.devalloc.examples.architecture;

import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;

/**
 * docs/build.md promises that a warning in main code fails the build (javac's lint and Error Prone's findings alike).
 * The build does not check its own configuration, and a merge once dropped {@code -Werror} silently: warnings were
 * printed and the build passed. This test reads the parent POM's main-code compile arguments.
 */
class CompilerChecksTest {

    private static final Path PARENT_POM =
            Path.of(System.getProperty("basedir", ".")).toAbsolutePath().resolve("..").normalize().resolve("pom.xml");

    @Test
    void mainCodeCompilesWithWarningsAsErrorsDoclintAndErrorProne() throws IOException {
        String pom = Files.readString(PARENT_POM);
        int start = pom.indexOf("<id>default-compile</id>");
        assertTrue(start > 0, "the parent POM configures default-compile");
        String mainCompile = pom.substring(start, pom.indexOf("</execution>", start));
        for (String arg : new String[] {"<arg>-Xlint:all</arg>", "<arg>-Werror</arg>",
                "<arg>-Xdoclint:all,-missing</arg>", "<arg>-Xplugin:ErrorProne"}) {
            assertTrue(mainCompile.contains(arg), arg + " is missing from the main code's compile arguments");
        }
    }
}
