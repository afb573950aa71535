package io.devalloc.examples;

import static io.devalloc.examples.LauncherTest.assertNoStackTrace;
import static io.devalloc.examples.LauncherTest.run;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.devalloc.examples.LauncherTest.Run;
import io.devalloc.replay.TraceSource;
import io.devalloc.replay.TraceSources;
import io.devalloc.replay.cli.TraceReplays;
import java.io.EOFException;
import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Parameters;

/**
 * Every failure on a stranger's trace is one line, exit 2, with no stack trace and no Java class name: a file too
 * big for the heap, one nested too deep for the stack, a directory, a pipe, a line of megabytes, escape sequences.
 */
class HostileInputCommandTest {

    @TempDir
    Path dir;

    /** A PyTorch CSV's header line. */
    private static final String HEADER = "seq,action,addr,size,stream,time_us";
    /** The longest line the text readers take (MAX_LINE_BYTES, in a package not exported here). */
    private static final int MAX_LINE_BYTES = 1 << 20;

    private Function<Path, TraceSource> saved;

    @BeforeEach
    void injectTraces() {
        saved = TraceReplays.sources;
        // A load that runs out of heap or stack, without filling the test JVM's heap or stack to get there.
        TraceReplays.sources = path -> switch (path.toString()) {
            case "heap.csv" -> () -> {
                throw new OutOfMemoryError("Java heap space");
            };
            case "deep.csv" -> () -> {
                throw new StackOverflowError();
            };
            case "cut.csv" -> () -> {
                throw new EOFException();
            };
            default -> TraceSources.of(path);
        };
    }

    @AfterEach
    void restoreTraces() {
        TraceReplays.sources = saved;
    }

    private static void assertOneLine(Run r, String start) {
        assertEquals(Launcher.EXIT_USAGE, r.exitCode(), r::toString);
        assertTrue(r.err().startsWith(start), () -> "expected '" + start + "':\n" + r);
        assertEquals(1, r.err().lines().count(), r::toString);
        assertNoStackTrace(r);
        assertFalse(r.err().contains("java.") || r.err().contains("io.devalloc."), r::toString);
        assertTrue(r.err().chars().noneMatch(c -> c < 0x20 && c != '\n'), r::toString);
    }

    @Test
    void aLoadOutOfHeapIsOneLineNamingTheFileAndTheHeap() {
        for (String command : List.of("replay", "compare")) {
            Run r = run(command, "heap.csv");
            assertOneLine(r, "devalloc: error: heap.csv: this file needs more memory than the Java heap allows"
                    + " (-Xmx, ");
            assertTrue(r.err().contains("JDK_JAVA_OPTIONS=-Xmx"), r::toString);
        }
        Run verbose = run("replay", "heap.csv", "--verbose");
        assertEquals(Launcher.EXIT_USAGE, verbose.exitCode(), verbose::toString);
        assertTrue(verbose.err().contains("\tat "), () -> "--verbose shows the stack:\n" + verbose);
    }

    @Test
    void aLoadOutOfStackIsOneLineSayingItIsNestedTooDeep() {
        assertOneLine(run("replay", "deep.csv"), "devalloc: error: deep.csv: nested too deep to read");
    }

    @Test
    void anInputErrorWithoutAMessageIsSaidInWordsNotByItsClassName() {
        assertOneLine(run("replay", "cut.csv"), "devalloc: error: cannot read trace cut.csv: the file ends in the"
                + " middle of its content");
    }

    @Test
    void aDirectoryIsRefusedAsADirectory() {
        for (String command : List.of("replay", "compare", "advise")) {
            assertOneLine(run(command, dir.toString()), "devalloc: error: " + dir + " is a directory, not a trace"
                    + " file");
        }
    }

    @Test
    void aPipeIsRefusedSayingWhatItIs() throws IOException, InterruptedException {
        Path fifo = dir.resolve("trace.fifo");
        boolean made;
        try {
            Process p = new ProcessBuilder("mkfifo", fifo.toString()).redirectErrorStream(true).start();
            made = p.waitFor(10, TimeUnit.SECONDS) && p.exitValue() == 0;
        } catch (IOException noMkfifo) {
            made = false;
        }
        assumeTrue(made && Files.exists(fifo), "mkfifo is not available here");
        for (String command : List.of("replay", "advise")) {
            assertOneLine(run(command, fifo.toString()), "devalloc: error: " + fifo + " is a pipe, not a regular"
                    + " file: a trace is read more than once");
        }
    }

    @Test
    void aLineOfMegabytesIsRefusedInOneShortLine() throws IOException {
        Path file = dir.resolve("long.csv");
        Files.writeString(file, HEADER + "\n" + "1".repeat(MAX_LINE_BYTES + 1) + "\n");
        Run r = run("replay", file.toString());
        assertOneLine(r, "devalloc: error: " + file + ":2: line 2 is longer than " + MAX_LINE_BYTES
                + " bytes");
        assertTrue(r.err().length() < 400, r.err().length() + " characters");
    }

    @Test
    void aHugeFieldWithAnEscapeSequenceIsQuotedShortWithTheEscapeShown() throws IOException {
        Path file = dir.resolve("field.csv");
        Files.writeString(file, HEADER + "\n1,alloc,\u001b]0;owned\u0007" + "9".repeat(900_000)
                + ",2,0,\n");
        Run r = run("replay", file.toString());
        assertOneLine(r, "devalloc: error: " + file + ":2: addr: expected a non-negative decimal integer, got"
                + " '\\x1b]0;owned\\x07999");
        assertTrue(r.err().length() < 600, r.err().length() + " characters");
    }

    /** A command that runs out of heap or stack outside a trace's load, where no command turns it into a message. */
    @Command(name = "exhaust")
    static final class Exhaust implements Callable<Integer> {
        @Parameters
        String what;

        @Override
        public Integer call() {
            throw "stack".equals(what) ? new StackOverflowError() : new OutOfMemoryError("Java heap space");
        }
    }

    @Test
    void anyOtherRunOutOfHeapOrStackIsStillOneLine() {
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        CommandLine cmd = Launcher.commandLine(new PrintWriter(out, true), new PrintWriter(err, true));
        cmd.addSubcommand(new Exhaust());

        assertEquals(Launcher.EXIT_USAGE, cmd.execute("exhaust", "heap"));
        assertTrue(err.toString().startsWith("devalloc: error: the command needs more memory than the Java heap"
                + " allows (-Xmx, "), err::toString);
        assertEquals(1, err.toString().lines().count(), err::toString);
        err.getBuffer().setLength(0);
        assertEquals(Launcher.EXIT_USAGE, cmd.execute("exhaust", "stack"));
        assertTrue(err.toString().startsWith("devalloc: error: the input is nested too deep"), err::toString);
        assertEquals(1, err.toString().lines().count(), err::toString);
        err.getBuffer().setLength(0);
        assertEquals(Launcher.EXIT_USAGE, cmd.execute("--verbose", "exhaust", "heap"));
        assertTrue(err.toString().contains("\tat "), () -> "--verbose shows the stack:\n" + err);
    }
}
