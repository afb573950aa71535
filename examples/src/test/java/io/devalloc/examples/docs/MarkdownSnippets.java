package io.devalloc.examples.docs;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.fail;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * Ties the Java snippets of the documentation to test code that compiles and runs them: every {@code ```java} block
 * of a Markdown file must appear, line for line, in the source of the test that holds it. Lines are compared with
 * their indentation stripped and blank lines left out, so a snippet may sit at any depth in a method; everything
 * else (statements, comments, string literals) must be the same text. A line of the test that ends with
 * {@value #TEST_ONLY} is not part of any snippet: the checks a test makes inside a snippet's block.
 */
final class MarkdownSnippets {

    /** Surefire runs in the module directory ({@code examples}); the repository root is one level up. */
    static final Path REPOSITORY = Path.of(System.getProperty("basedir", ".")).toAbsolutePath().resolve("..")
            .normalize();

    /** Marks a line of test code that the documentation does not show. */
    static final String TEST_ONLY = "// test only";

    private MarkdownSnippets() {
    }

    /** A {@code ```java} block: the file it is in, the line its code starts on, and its lines. */
    record Snippet(Path file, int line, List<String> lines) {
        @Override
        public String toString() {
            return REPOSITORY.relativize(file) + ":" + line;
        }
    }

    /** The {@code ```java} blocks of {@code markdown}, in order. */
    static List<Snippet> javaBlocks(Path markdown) throws IOException {
        List<String> text = Files.readAllLines(markdown);
        List<Snippet> blocks = new ArrayList<>();
        List<String> current = null;
        int start = 0;
        for (int i = 0; i < text.size(); i++) {
            String trimmed = text.get(i).strip();
            if (current == null) {
                if (trimmed.equals("```java")) {
                    current = new ArrayList<>();
                    start = i + 2;
                }
            } else if (trimmed.equals("```")) {
                blocks.add(new Snippet(markdown, start, List.copyOf(current)));
                current = null;
            } else {
                current.add(text.get(i));
            }
        }
        if (current != null) {
            fail(markdown + ": the java block starting on line " + start + " is never closed");
        }
        return blocks;
    }

    /** The source file of a test class in this module. */
    static Path testSource(Class<?> testClass) {
        return REPOSITORY.resolve("examples/src/test/java")
                .resolve(testClass.getName().replace('.', '/') + ".java");
    }

    /**
     * Fails unless every snippet appears in {@code source} as consecutive lines (indentation and blank lines
     * aside), naming the first snippet line that is missing or different.
     */
    static void assertEachSnippetIsIn(List<Snippet> snippets, Path source) throws IOException {
        assertFalse(snippets.isEmpty(), "no java snippets found; the check would be empty");
        List<String> code = new ArrayList<>();
        for (String line : significant(Files.readAllLines(source))) {
            if (!line.endsWith(TEST_ONLY)) {
                code.add(line);
            }
        }
        for (Snippet snippet : snippets) {
            List<String> wanted = significant(snippet.lines());
            if (wanted.isEmpty()) {
                fail(snippet + ": an empty java block");
            }
            if (indexOf(code, wanted) < 0) {
                fail(snippet + ": this snippet is not the code " + REPOSITORY.relativize(source) + " runs; "
                        + closest(code, wanted) + ". Change the snippet and the test together.");
            }
        }
    }

    private static List<String> significant(List<String> lines) {
        List<String> kept = new ArrayList<>();
        for (String line : lines) {
            String trimmed = line.strip();
            if (!trimmed.isEmpty()) {
                kept.add(trimmed);
            }
        }
        return kept;
    }

    private static int indexOf(List<String> code, List<String> wanted) {
        for (int i = 0; i + wanted.size() <= code.size(); i++) {
            if (code.subList(i, i + wanted.size()).equals(wanted)) {
                return i;
            }
        }
        return -1;
    }

    /** Where the longest prefix of {@code wanted} matches, which line of the snippet differs there. */
    private static String closest(List<String> code, List<String> wanted) {
        int best = 0;
        for (int i = 0; i < code.size(); i++) {
            int n = 0;
            while (n < wanted.size() && i + n < code.size() && code.get(i + n).equals(wanted.get(n))) {
                n++;
            }
            best = Math.max(best, n);
        }
        return best == 0 ? "its first line, '" + wanted.get(0) + "', is nowhere in the test"
                : "the test has its first " + best + " line(s), then differs at '" + wanted.get(best) + "'";
    }
}
