package io.devalloc.benchmarks;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.devalloc.trace.TraceEvent;
import io.devalloc.trace.pytorch.PyTorchPickleReader;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The long snapshot's generator ({@link LongSnapshot}) writes what it says: the same file for the same entries,
 * every allocation and free read back by devalloc's reader, and, when {@code python3} is on the PATH, CPython's
 * {@code pickle.load} sees the sharing of real snapshots (one frames list per allocator call, frame dicts shared
 * between calls).
 */
class LongSnapshotTest {

    private static final int ENTRIES = 3000;

    @Test
    void theSameEntriesGiveTheSameFile(@TempDir Path dir) throws IOException {
        LongSnapshot.Written a = LongSnapshot.write(ENTRIES, dir.resolve("a.pickle"));
        LongSnapshot.Written b = LongSnapshot.write(ENTRIES, dir.resolve("b.pickle"));
        assertArrayEquals(Files.readAllBytes(a.file()), Files.readAllBytes(b.file()));
        Path cached = LongSnapshot.cached(ENTRIES, dir);
        assertEquals("long-snapshot-" + ENTRIES + ".pickle", cached.getFileName().toString());
        assertArrayEquals(Files.readAllBytes(a.file()), Files.readAllBytes(cached));
        assertEquals(cached, LongSnapshot.cached(ENTRIES, dir), "found, not written again");
    }

    @Test
    void devallocReadsBackEveryAllocationAndFree(@TempDir Path dir) throws IOException {
        LongSnapshot.Written w = LongSnapshot.write(ENTRIES, dir.resolve("s.pickle"));
        assertEquals(ENTRIES, w.entries(), 0.01 * ENTRIES);
        long allocs = 0;
        long frees = 0;
        try (PyTorchPickleReader reader = new PyTorchPickleReader(w.file())) {
            for (TraceEvent e = reader.next(); e != null; e = reader.next()) {
                allocs += e.kind() == TraceEvent.Kind.ALLOC ? 1 : 0;
                frees += e.kind() == TraceEvent.Kind.FREE ? 1 : 0;
            }
        }
        assertEquals(w.allocs(), allocs);
        assertEquals(w.frees(), frees);
    }

    @Test
    void cpythonSeesOneFramesListPerCallAndSharedFrameDicts(@TempDir Path dir) throws Exception {
        assumeTrue(pythonAvailable(), "python3 is not on the PATH: CPython's view of the pickle is not checked");
        LongSnapshot.Written w = LongSnapshot.write(ENTRIES, dir.resolve("s.pickle"));
        String out = python(dir, """
                import pickle, sys
                t = pickle.load(open(sys.argv[1], 'rb'))['device_traces'][-1]
                lists = {id(e['frames']) for e in t}
                frames = {id(f) for e in t for f in e['frames']}
                pairs = [i for i in range(len(t) - 1) if t[i]['action'] == 'free_requested']
                print(len(t), len(lists), len(frames) <= 4096, len(frames) > 1000,
                      all(len(e['frames']) == 32 for e in t),
                      all(t[i]['frames'] is t[i + 1]['frames'] for i in pairs),
                      all(k in t[0] for k in ('time_us', 'compile_context', 'user_metadata')))
                """, w.file().toString());
        assertEquals(w.entries() + " " + w.calls() + " True True True True True", out.strip());
    }

    private static boolean pythonAvailable() {
        try {
            Process p = new ProcessBuilder("python3", "-c", "print(3)").redirectErrorStream(true).start();
            if (!p.waitFor(30, TimeUnit.SECONDS)) {
                p.destroyForcibly();
                return false;
            }
            return p.exitValue() == 0;
        } catch (IOException e) {
            return false;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        }
    }

    /** Runs {@code python3 -c script arg}; fails unless it exits with 0; returns its stdout. */
    private static String python(Path dir, String script, String arg) throws IOException, InterruptedException {
        Path stdout = dir.resolve("python.out");
        Path stderr = dir.resolve("python.err");
        Process p = new ProcessBuilder(List.of("python3", "-c", script, arg)).redirectOutput(stdout.toFile())
                .redirectError(stderr.toFile()).start();
        if (!p.waitFor(120, TimeUnit.SECONDS)) {
            p.destroyForcibly();
            throw new AssertionError("python3 timed out");
        }
        assertEquals(0, p.exitValue(), () -> "python3 failed: " + read(stderr));
        return read(stdout);
    }

    private static String read(Path file) {
        try {
            return Files.readString(file, StandardCharsets.UTF_8);
        } catch (IOException e) {
            return e.toString();
        }
    }
}
