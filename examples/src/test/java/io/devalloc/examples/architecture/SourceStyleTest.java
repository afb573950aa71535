package io.devalloc.examples.architecture;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.CharBuffer;
import java.nio.charset.CharsetDecoder;
import java.nio.charset.CoderResult;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.nio.file.FileVisitResult;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.SimpleFileVisitor;
import java.nio.file.attribute.BasicFileAttributes;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * The repository's sources keep the settings of its {@code .editorconfig}: every {@code *.java}, {@code *.xml},
 * {@code *.md}, {@code *.properties} and {@code *.sh} file, and each of the {@code devalloc}, {@code mvnw} and
 * {@code .ci/run} scripts, is UTF-8 with LF line endings, has no tab and no trailing whitespace, and ends with a
 * newline; a Java line has at most {@value #MAX_JAVA_LINE} characters (characters, not bytes). Two exceptions,
 * both where the characters mean something: two trailing spaces in Markdown are a line break, and a shell
 * here-document opened with {@code <<-} (one in {@code mvnw}, the Maven wrapper's own script) is indented with
 * tabs, which the shell strips.
 * Build output ({@code target/}), {@code .git}, {@code node_modules/}, the IDE folders {@code .gitignore} names and
 * {@code mvnw.cmd} (CRLF on purpose, as Windows wants it) are not looked at. One failure lists every offending line.
 */
class SourceStyleTest {

    /** Surefire runs in the module directory ({@code examples}); the repository root is one level up. */
    private static final Path REPOSITORY = Path.of(System.getProperty("basedir", ".")).toAbsolutePath().resolve("..")
            .normalize();

    static final int MAX_JAVA_LINE = 120;

    /** Build output, version control, JavaScript packages, and the IDE folders {@code .gitignore} names. */
    private static final Set<String> SKIPPED_DIRECTORIES =
            Set.of("target", ".git", "node_modules", ".idea", ".vscode");
    private static final Set<String> CHECKED_EXTENSIONS = Set.of(".java", ".xml", ".md", ".properties", ".sh");
    /** Scripts without an extension, relative to the repository root. */
    private static final Set<String> CHECKED_SCRIPTS = Set.of("devalloc", "mvnw", ".ci/run");

    /** {@code <<-WORD}, {@code <<-'WORD'} or {@code <<-"WORD"}: a here-document whose leading tabs the shell strips. */
    private static final Pattern TAB_STRIPPED_HERE_DOCUMENT = Pattern.compile("<<-\\s*['\"]?(\\w+)['\"]?");

    @Test
    void everySourceFileFollowsTheEditorConfig() throws IOException {
        List<Path> files = sourceFiles();
        Set<String> names = new TreeSet<>();
        for (Path file : files) {
            names.add(name(file));
        }
        // Guards against walking the wrong directory, which would check nothing.
        for (String expected : List.of("pom.xml", "README.md", "mvnw", ".ci/run",
                "examples/src/test/java/io/devalloc/examples/architecture/SourceStyleTest.java")) {
            assertTrue(names.contains(expected), expected + " not found under " + REPOSITORY);
        }
        List<String> problems = new ArrayList<>();
        for (Path file : files) {
            problems.addAll(check(name(file), Files.readAllBytes(file)));
        }
        assertTrue(problems.isEmpty(), problems.size() + " problem(s) with .editorconfig's rules (" + files.size()
                + " files checked):\n" + String.join("\n", problems));
    }

    /**
     * Every Java file's imports are one block: the static imports first, then the others, each sorted by name (as
     * {@code String.compareTo}: upper case before lower case), with no import twice.
     */
    @Test
    void importsAreSortedStaticFirst() throws IOException {
        List<String> problems = new ArrayList<>();
        for (Path file : sourceFiles()) {
            if (file.toString().endsWith(".java")) {
                String problem = importOrder(Files.readAllLines(file, StandardCharsets.UTF_8));
                if (problem != null) {
                    problems.add(name(file) + ": " + problem);
                }
            }
        }
        assertTrue(problems.isEmpty(), problems.size() + " file(s) with imports out of order:\n"
                + String.join("\n", problems));
    }

    @Test
    void theImportOrderRuleCatchesWhatItForbids() {
        assertEquals(null, importOrder(List.of("package a;", "", "import static x.Y.z;", "", "import a.B;",
                "import a.b.C;", "import java.util.List;", "", "class A {}")));
        assertEquals("import a.b.C; before import a.B;", importOrder(List.of("import a.b.C;", "import a.B;")));
        assertEquals("import static x.Y.z; after import a.B;", importOrder(List.of("import a.B;",
                "import static x.Y.z;")));
        assertEquals("import a.B; twice", importOrder(List.of("import a.B;", "import a.B;")));
    }

    /**
     * Code names types by their simple names, with imports: no fully-qualified type name outside imports, comments
     * and strings. Module descriptors name services and providers in full, as they must; a type whose simple name
     * is taken by {@code java.lang} (Guice's {@code Module}) stays qualified.
     */
    @Test
    void codeNamesTypesByTheirImports() throws IOException {
        List<String> problems = new ArrayList<>();
        for (Path file : sourceFiles()) {
            String name = name(file);
            if (name.endsWith(".java") && !name.endsWith("module-info.java") && !name.endsWith("package-info.java")) {
                for (String q : qualifiedNames(Files.readString(file, StandardCharsets.UTF_8))) {
                    problems.add(name + ": " + q);
                }
            }
        }
        assertTrue(problems.isEmpty(), problems.size() + " fully-qualified type name(s) in code:\n"
                + String.join("\n", problems));
    }

    @Test
    void theQualifiedNameRuleSeesCodeOnly() {
        assertEquals(List.of("2: java.util.List"), qualifiedNames("import java.util.Map;\n"
                + "class A { java.util.List<String> l; // java.util.Set\n"
                + " String s = \"java.util.Deque\"; /* java.util.Queue */ }"));
        assertEquals(List.of(), qualifiedNames("class A { com.google.inject.Module m; Map.Entry<K, V> e; }"));
    }

    /**
     * The tools ask an allocator's provider what they need to know of it (its replay configuration, whether PyTorch's
     * ground truth judges it, its caveats, the variable its setting goes in): no allocator's name stands as a string
     * in the code of {@code replay} and {@code advisor}, except in a constant that names a default.
     */
    @Test
    void toolsAskProvidersNotAllocatorNames() throws IOException {
        List<String> problems = new ArrayList<>();
        for (Path file : sourceFiles()) {
            String name = name(file);
            boolean tool = name.startsWith("replay/src/main/") || name.startsWith("advisor/src/main/");
            if (tool && name.endsWith(".java")) {
                for (String line : allocatorNames(Files.readAllLines(file, StandardCharsets.UTF_8))) {
                    problems.add(name + ":" + line);
                }
            }
        }
        assertTrue(problems.isEmpty(), problems.size() + " allocator name(s) tested as strings in the tools:\n"
                + String.join("\n", problems));
    }

    @Test
    void theAllocatorNameRuleAllowsOnlyDefaults() {
        assertEquals(List.of("2: if (allocator.equals(\"bfc\")) {"), allocatorNames(List.of(
                "static final String DEFAULT_ALLOCATOR = \"caching\";", "if (allocator.equals(\"bfc\")) {",
                "String conf = \"caching:expandable_segments:True\";", "// \"direct\" in a comment is prose")));
    }

    private static final Pattern ALLOCATOR_NAME = Pattern.compile("\"(direct|bfc|caching|caching-host)\"");

    /** {@code line: text} of each line whose code has an allocator's name as a string, outside a constant. */
    private static List<String> allocatorNames(List<String> lines) {
        List<String> found = new ArrayList<>();
        for (int i = 0; i < lines.size(); i++) {
            String line = lines.get(i);
            String code = line.strip();
            boolean prose = code.startsWith("//") || code.startsWith("*") || code.startsWith("/*");
            if (prose || line.contains("static final")) {
                continue;
            }
            if (ALLOCATOR_NAME.matcher(line).find()) {
                found.add((i + 1) + ": " + code);
            }
        }
        return found;
    }

    private static final Pattern QUALIFIED = Pattern.compile(
            "(?<![\\w.])((?:java|javax|io|org|com|jdk|picocli|net)\\.(?:[a-z_]\\w*\\.)+[A-Z]\\w*)");

    /** {@code line: name} of each fully-qualified type name in the code of {@code source}. */
    static List<String> qualifiedNames(String source) {
        String code = codeOnly(source);
        List<String> found = new ArrayList<>();
        int line = 1;
        int lineStart = 0;
        Matcher m = QUALIFIED.matcher(code);
        while (m.find()) {
            for (int i = lineStart; i < m.start(); i++) {
                if (code.charAt(i) == '\n') {
                    line++;
                }
            }
            lineStart = m.start();
            int start = code.lastIndexOf('\n', m.start()) + 1;
            String text = code.substring(start, m.start());
            if (text.startsWith("import ") || text.startsWith("package ")
                    || m.group(1).equals("com.google.inject.Module")) {
                continue;
            }
            found.add(line + ": " + m.group(1));
        }
        return found;
    }

    /** {@code source} with comments, strings, text blocks and character literals blanked (line breaks kept). */
    private static String codeOnly(String source) {
        StringBuilder out = new StringBuilder(source.length());
        int n = source.length();
        int i = 0;
        while (i < n) {
            int end;
            if (source.startsWith("//", i)) {
                end = source.indexOf('\n', i);
                end = end < 0 ? n : end;
            } else if (source.startsWith("/*", i)) {
                end = source.indexOf("*/", i + 2);
                end = end < 0 ? n : end + 2;
            } else if (source.startsWith("\"\"\"", i)) {
                end = source.indexOf("\"\"\"", i + 3);
                end = end < 0 ? n : end + 3;
            } else if (source.charAt(i) == '"' || source.charAt(i) == '\'') {
                char quote = source.charAt(i);
                end = i + 1;
                while (end < n && source.charAt(end) != quote && source.charAt(end) != '\n') {
                    end += source.charAt(end) == '\\' ? 2 : 1;
                }
                end = Math.min(n, end + 1);
            } else {
                out.append(source.charAt(i++));
                continue;
            }
            for (int k = i; k < end; k++) {
                out.append(source.charAt(k) == '\n' ? '\n' : ' ');
            }
            i = end;
        }
        return out.toString();
    }

    /** What is wrong with the order of these lines' imports, or null. */
    static String importOrder(List<String> lines) {
        String previous = null;
        boolean seenPlain = false;
        for (String line : lines) {
            if (!line.startsWith("import ")) {
                continue;
            }
            boolean isStatic = line.startsWith("import static ");
            if (isStatic && seenPlain) {
                return line + " after " + previous;
            }
            if (previous != null && previous.startsWith("import static ") == isStatic) {
                int order = importName(previous).compareTo(importName(line));
                if (order == 0) {
                    return line + " twice";
                }
                if (order > 0) {
                    return previous + " before " + line;
                }
            }
            seenPlain |= !isStatic;
            previous = line;
        }
        return null;
    }

    private static String importName(String line) {
        String name = line.startsWith("import static ") ? line.substring("import static ".length())
                : line.substring("import ".length());
        return name.endsWith(";") ? name.substring(0, name.length() - 1) : name;
    }

    @Test
    void eachRuleNamesTheFileAndLine() {
        String tooLong = "x".repeat(MAX_JAVA_LINE + 1);
        assertEquals(List.of(
                        "A.java:1: tab",
                        "A.java:1: CR (a CRLF line ending)",
                        "A.java:3: " + (MAX_JAVA_LINE + 1) + " characters, more than " + MAX_JAVA_LINE,
                        "A.java:4: trailing whitespace",
                        "A.java:5: no newline at the end of the file"),
                check("A.java", bytes("class A {\t}\r\n" + "x".repeat(MAX_JAVA_LINE) + "\n" + tooLong + "\n"
                        + "int a; \nend")));
        assertEquals(List.of(), check("B.java", bytes("é".repeat(MAX_JAVA_LINE) + "\n")), "characters, not bytes");
        assertEquals(List.of(), check("ok.xml", bytes(tooLong + "\n")), "the line limit is for Java only");
        assertEquals(List.of(), check("empty.properties", new byte[0]));

        assertEquals(List.of("doc.md:2: trailing whitespace", "doc.md:3: trailing whitespace",
                        "doc.md:4: trailing whitespace"),
                check("doc.md", bytes("a line break  \none space \nthree spaces   \n  \n")),
                "Markdown keeps exactly two trailing spaces after text (a line break), nothing else");

        assertEquals(List.of("bad.xml:2: not UTF-8", "bad.xml:4: not UTF-8"),
                check("bad.xml", new byte[] {'<', 'a', '/', '>', '\n', (byte) 0xC3, '(', (byte) 0xFF, '\n', 'b', '\n',
                        (byte) 0x80, '\n'}));

        assertEquals(List.of("run.sh:5: tab", "run.sh:6: tab"),
                check("run.sh", bytes("cat <<-'END'\n\tkept\n\t\tdeeper\n\tEND\n\tafter\nx\ty\n")),
                "leading tabs inside a <<- here-document are shell syntax; elsewhere they are not");
    }

    /**
     * The problems of one file, as {@code name:line: rule} in line order; {@code name} is the path relative to the
     * repository root, which also decides the rules that apply. Works on the bytes, without making a string of
     * every line, so that the whole repository takes a few tens of milliseconds.
     */
    static List<String> check(String name, byte[] content) {
        List<String> problems = new ArrayList<>();
        int lastReported = -1;
        for (int malformed : malformedBytes(content)) {
            int line = lineIndexOf(content, malformed);
            if (line != lastReported) {
                problems.add(at(name, line) + "not UTF-8");
                lastReported = line;
            }
        }
        boolean java = name.endsWith(".java");
        boolean markdown = name.endsWith(".md");
        boolean shell = name.endsWith(".sh") || CHECKED_SCRIPTS.contains(name);
        String hereDocumentEnd = null;
        int index = 0;
        for (int start = 0; start < content.length; index++) {
            int newline = indexOf(content, (byte) '\n', start, content.length);
            int end = newline < 0 ? content.length : newline;
            int tabsFrom = start;
            if (hereDocumentEnd != null) {
                while (tabsFrom < end && content[tabsFrom] == '\t') {
                    tabsFrom++;
                }
                if (new String(content, tabsFrom, end - tabsFrom, StandardCharsets.UTF_8).equals(hereDocumentEnd)) {
                    hereDocumentEnd = null;
                }
            } else if (shell) {
                Matcher opened = TAB_STRIPPED_HERE_DOCUMENT.matcher(
                        new String(content, start, end - start, StandardCharsets.UTF_8));
                if (opened.find()) {
                    hereDocumentEnd = opened.group(1);
                }
            }
            if (indexOf(content, (byte) '\t', tabsFrom, end) >= 0) {
                problems.add(at(name, index) + "tab");
            }
            int textEnd = end;
            if (indexOf(content, (byte) '\r', start, end) >= 0) {
                problems.add(at(name, index) + "CR (a CRLF line ending)");
                if (content[end - 1] == '\r') {
                    textEnd--;
                }
            }
            if (java && textEnd - start > MAX_JAVA_LINE) {
                int characters = 0;
                for (int i = start; i < textEnd; i++) {
                    if ((content[i] & 0xC0) != 0x80) { // not a UTF-8 continuation byte
                        characters++;
                    }
                }
                if (characters > MAX_JAVA_LINE) {
                    problems.add(at(name, index) + characters + " characters, more than " + MAX_JAVA_LINE);
                }
            }
            if (hasTrailingWhitespace(content, start, textEnd, markdown)) {
                problems.add(at(name, index) + "trailing whitespace");
            }
            if (newline < 0) {
                problems.add(at(name, index) + "no newline at the end of the file");
                break;
            }
            start = newline + 1;
        }
        return problems;
    }

    /** {@code name:line: } for the line at {@code index} (from 0). */
    private static String at(String name, int index) {
        return name + ":" + (index + 1) + ": ";
    }

    /** The positions of the byte sequences that are not UTF-8 (none for a well-formed file). */
    private static List<Integer> malformedBytes(byte[] content) {
        CharsetDecoder strict = StandardCharsets.UTF_8.newDecoder()
                .onMalformedInput(CodingErrorAction.REPORT)
                .onUnmappableCharacter(CodingErrorAction.REPORT);
        ByteBuffer in = ByteBuffer.wrap(content);
        CharBuffer out = CharBuffer.allocate(content.length);
        List<Integer> positions = new ArrayList<>();
        for (CoderResult result = strict.decode(in, out, true); result.isError();
                result = strict.decode(in, out, true)) {
            positions.add(in.position());
            in.position(in.position() + result.length());
        }
        return positions;
    }

    private static int lineIndexOf(byte[] content, int position) {
        int index = 0;
        for (int i = 0; i < position; i++) {
            if (content[i] == '\n') {
                index++;
            }
        }
        return index;
    }

    private static int indexOf(byte[] content, byte wanted, int from, int to) {
        for (int i = from; i < to; i++) {
            if (content[i] == wanted) {
                return i;
            }
        }
        return -1;
    }

    private static boolean hasTrailingWhitespace(byte[] content, int start, int end, boolean markdown) {
        if (end == start || !isBlank(content[end - 1])) {
            return false;
        }
        // A Markdown line break: text, then exactly two spaces.
        boolean lineBreak = markdown && end - start > 2 && content[end - 1] == ' ' && content[end - 2] == ' '
                && !isBlank(content[end - 3]);
        return !lineBreak;
    }

    private static boolean isBlank(byte b) {
        return b == ' ' || b == '\t' || b == '\f' || b == 0x0B;
    }

    private static List<Path> sourceFiles() throws IOException {
        List<Path> files = new ArrayList<>();
        Files.walkFileTree(REPOSITORY, new SimpleFileVisitor<>() {
            @Override
            public FileVisitResult preVisitDirectory(Path dir, BasicFileAttributes attributes) {
                return dir.equals(REPOSITORY) || !SKIPPED_DIRECTORIES.contains(dir.getFileName().toString())
                        ? FileVisitResult.CONTINUE : FileVisitResult.SKIP_SUBTREE;
            }

            @Override
            public FileVisitResult visitFile(Path file, BasicFileAttributes attributes) {
                if (attributes.isRegularFile() && isChecked(name(file))) {
                    files.add(file);
                }
                return FileVisitResult.CONTINUE;
            }
        });
        files.sort(null);
        return files;
    }

    private static boolean isChecked(String name) {
        if (CHECKED_SCRIPTS.contains(name)) {
            return true;
        }
        int dot = name.lastIndexOf('.');
        return dot > name.lastIndexOf('/') && CHECKED_EXTENSIONS.contains(name.substring(dot));
    }

    /** The path relative to the repository root, with {@code /} between names on every platform. */
    private static String name(Path file) {
        return REPOSITORY.relativize(file).toString().replace('\\', '/');
    }

    private static byte[] bytes(String text) {
        return text.getBytes(StandardCharsets.UTF_8);
    }
}
