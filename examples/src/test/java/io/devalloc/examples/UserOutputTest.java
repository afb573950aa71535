package io.devalloc.examples;

import static io.devalloc.examples.LauncherTest.run;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.devalloc.examples.LauncherTest.Run;
import io.devalloc.replay.cli.TextWrap;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * What users read: every command's normal output (tables, help, notes) on the shipped OPT trace stays within
 * {@value TextWrap#MAX_WIDTH} columns, and no message, error paths included, names a Java class or one of
 * devalloc's packages.
 */
class UserOutputTest {

    /** The PyTorch trace shipped with the repository; surefire runs in the module directory. */
    static final Path OPT_TRACE = Path.of(System.getProperty("basedir", ".")).toAbsolutePath()
            .resolve("../traces/pt-opt-zeroth-order-fl/memory.csv").normalize();

    /**
     * A Java class or package name: an exception type, a devalloc or picocli package, devalloc's own classes. Not
     * {@code CachingAllocator}: PyTorch's own messages name its class ("CachingAllocator option max_split_size_mb
     * too small, must be >= 20"), and the caching allocator repeats them word for word. Not {@code java.lang.foreign}
     * either: the host devices name the JDK API they allocate through, as others name cudaMalloc or mlock.
     */
    private static final Pattern CLASS_NAME = Pattern.compile(
            "\\b[A-Z]\\w*(?:Exception|Error)\\b"
                    + "|\\b(?:io\\.devalloc|picocli|java\\.(?:lang|util|io|nio))\\.(?!foreign\\b)[a-z]\\w*"
                    + "|\\b(?:Replayer|ReplayCommand|CompareCommand|DemoCommand|DevicesCommand|Launcher|TraceReplays"
                    + "|CachingArena|BfcArena|AllocatorRegistry|DeviceRegistry|DevallocException"
                    // PyTorch's tokenizer class, which its boolean configuration messages name.
                    + "|ConfigTokenizer)\\b");

    private static void assertWithinWidth(Run run, String what) {
        for (String line : (run.out() + run.err()).split("\\R")) {
            assertTrue(line.length() <= TextWrap.MAX_WIDTH, what + ": a line of " + line.length() + " columns: "
                    + line + "\n" + run);
        }
    }

    private static void assertNamesNoClass(Run run, String what) {
        Matcher m = CLASS_NAME.matcher(run.out() + run.err());
        assertFalse(m.find(), () -> what + " names '" + m.group() + "':\n" + run);
    }

    @Test
    void theOptTraceIsThere() {
        assertTrue(Files.isRegularFile(OPT_TRACE), "the repository ships " + OPT_TRACE);
    }

    @Test
    void everyCommandsNormalOutputFitsIn120Columns() {
        String trace = OPT_TRACE.toString();
        List<String[]> commands = List.of(
                new String[] {"replay", trace},
                new String[] {"replay", trace, "--warm", "--allocator", "bfc"},
                new String[] {"compare", trace},
                new String[] {"compare", trace, trace, "--run", "caching", "--run", "caching:max_split_size_mb:128,"
                        + "garbage_collection_threshold:0.6,roundup_power2_divisions:[256:1,512:2,1024:4,>:8]"},
                new String[] {"devices"},
                new String[] {"demo"},
                new String[] {"demo", "--device", "sim:80GiB", "--allocator", "caching", "--config",
                        "expandable_segments:True"},
                new String[] {"--help"},
                new String[] {"replay", "--help"},
                new String[] {"compare", "--help"},
                new String[] {"devices", "--help"},
                new String[] {"demo", "--help"},
                new String[] {"help", "replay"});
        for (String[] args : commands) {
            Run r = run(args);
            String what = "devalloc " + String.join(" ", args);
            assertEquals(0, r.exitCode(), () -> what + ":\n" + r);
            assertWithinWidth(r, what);
            assertNamesNoClass(r, what);
        }
    }

    @Test
    void errorsNameNoClass(@TempDir Path dir) throws IOException {
        Path bad = Files.writeString(dir.resolve("bad.csv"), "seq,action,addr,size,stream,time_us\n0,alloc,12\n");
        Path unreadable = Files.createDirectories(dir.resolve("a-directory.csv"));
        List<String[]> cases = new ArrayList<>(List.of(
                new String[] {"demo", "--device", "nosuch"},
                new String[] {"demo", "--device", "sim:lots"},
                new String[] {"demo", "--allocator", "nosuch"},
                new String[] {"demo", "--config", "bogus:1"},
                new String[] {"demo", "--allocator", "caching", "--config", "max_split_size_mb:2"},
                new String[] {"demo", "--steps", "0"},
                new String[] {"demo", "--steps", "many"},
                new String[] {"replay", dir.resolve("missing.csv").toString()},
                new String[] {"replay", bad.toString()},
                new String[] {"replay", unreadable.toString()},
                new String[] {"replay", OPT_TRACE.toString(), "--html", dir.toString()},
                new String[] {"replay", OPT_TRACE.toString(), "--config", "a:1", "--conf", "b:2"},
                new String[] {"replay", OPT_TRACE.toString(), "--config", "expandable_segments:yes"},
                new String[] {"replay", OPT_TRACE.toString(), "--config", "max_split_size_mb:20,a:b:c"},
                new String[] {"replay", OPT_TRACE.toString(), "--config", "expandable_segments:True,,"},
                new String[] {"compare", OPT_TRACE.toString(), "--run", ":x"},
                new String[] {"compare"},
                new String[] {"frobnicate"},
                new String[] {}));
        for (String[] args : cases) {
            Run r = run(args);
            String what = "devalloc " + String.join(" ", args);
            assertEquals(Launcher.EXIT_USAGE, r.exitCode(), () -> what + ":\n" + r);
            assertTrue(r.err().startsWith("devalloc: error: "), () -> what + ":\n" + r);
            assertNamesNoClass(r, what);
        }
    }
}
