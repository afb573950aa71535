package io.devalloc.trace.pytorch;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.devalloc.trace.TraceFormatException;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Small pickles built to make the reader expand, recurse, walk quadratically, convert huge integers or fill the heap
 * (an outside campaign's findings): each must end in one clear refusal naming the file, in seconds, or load with its
 * settings left out and noted. Built opcode by opcode, since no pickler writes them.
 */
class HostilePickleTest {

    private static final String FILE = "hostile.pickle";
    /** Generous for a loaded build machine; each case ran for seconds to minutes, or never ended, before. */
    private static final Duration BOUND = Duration.ofSeconds(5);
    private static final Pattern JAVA_NAME = Pattern.compile("java\\.|[A-Z][a-z]+(Exception|Error)|@[0-9a-f]{4,}");

    private static final int EMPTY_DICT = '}';
    private static final int EMPTY_LIST = ']';
    private static final int MARK = '(';
    private static final int POP = '0';
    private static final int APPEND = 'a';
    private static final int APPENDS = 'e';
    private static final int SETITEM = 's';
    private static final int SETITEMS = 'u';
    private static final int BINGET = 'h';
    private static final int BINPUT = 'q';
    private static final int BININT1 = 'K';

    /**
     * A snapshot of one segment whose {@code address} is what {@code address} pushes, with an empty history:
     * {@code {'segments': [{'address': ..., 'total_size': 1, 'blocks': []}], 'device_traces': []}}.
     */
    private static byte[] segmentAddress(PickleBytes before, Consumer<PickleBytes> address) {
        PickleBytes p = before.op(EMPTY_DICT, MARK).str("segments").op(EMPTY_LIST, EMPTY_DICT, MARK).str("address");
        address.accept(p);
        return p.str("total_size").op(BININT1, 1).str("blocks").op(EMPTY_LIST, SETITEMS, APPEND)
                .str("device_traces").op(EMPTY_LIST, SETITEMS).stop();
    }

    /** The refusal of {@code data}, within the time bound. */
    private static String refusal(byte[] data) {
        TraceFormatException e = assertTimeoutPreemptively(BOUND, () -> assertThrows(TraceFormatException.class,
                () -> new PyTorchPickleReader(new ByteArrayInputStream(data), FILE, PyTorchPickleReader.ONLY_DEVICE)));
        String message = e.getMessage();
        assertTrue(message.startsWith(FILE + ": "), message);
        assertFalse(JAVA_NAME.matcher(message).find(), "names no Java class: " + message);
        assertTrue(message.length() < 600, "one bounded line: " + message);
        return message;
    }

    /** The settings of {@code data}, a snapshot that loads, within the time bound. */
    private static RecordedAllocatorSettings settings(byte[] data) {
        return assertTimeoutPreemptively(BOUND, () -> PyTorchSnapshotFile.read(new ByteArrayInputStream(data), FILE)
                .recordedSettings());
    }

    // ---- 1. exponential expansion ----

    @Test
    void aListOfTwoToTheFortyItemsAsAnAddressIsShownWithinItsBudget() {
        String message = refusal(segmentAddress(new PickleBytes().doublingLists(0, 40), p -> p.op(BINGET, 40)));
        assertTrue(message.contains("segments[0]: 'address': expected a non-negative integer below 2^64, got [[[["),
                message);
    }

    @Test
    void nestedSettingsAreLeftOutWithANoteNotCopied() {
        byte[] data = new PickleBytes().doublingDicts(40).doublingLists(100, 40).op(EMPTY_DICT, MARK)
                .str("segments").op(EMPTY_LIST).str("allocator_settings").op(EMPTY_DICT, MARK)
                .str("roundup_power2_divisions").op(BINGET, 40)
                .str("max_split_size").op(BINGET, 140)
                .str("expandable_segments").op(0x88) // NEWTRUE
                .op(SETITEMS, SETITEMS).stop();
        RecordedAllocatorSettings settings = settings(data);
        assertEquals("expandable_segments:True", settings.config());
        assertEquals(2, settings.notes().size(), settings.notes().toString());
        assertTrue(settings.notes().getFirst().startsWith("allocator_settings['roundup_power2_divisions'] holds a list"
                + " or dict inside a list or dict, which PyTorch never writes there"), settings.notes().toString());
        assertFalse(settings.values().containsKey("max_split_size"));
    }

    @Test
    void aWrongTypeNoteShowsAFlatListWithinItsBudget() {
        PickleBytes p = new PickleBytes().op(EMPTY_DICT, MARK).str("segments").op(EMPTY_LIST).str("allocator_settings")
                .op(EMPTY_DICT).str("max_split_size").op(EMPTY_LIST, MARK);
        for (int i = 0; i < 100_000; i++) {
            p.op(BININT1, 7);
        }
        RecordedAllocatorSettings settings = settings(p.op(APPENDS, SETITEM, SETITEMS).stop());
        String note = settings.notes().getFirst();
        assertTrue(note.startsWith("allocator_settings['max_split_size'] is a list or tuple ([7, 7, 7,"), note);
        assertTrue(note.length() < 200, note);
    }

    // ---- 2. cycles and deep nesting ----

    @Test
    void aListThatHoldsItselfAsAnAddressIsRefusedLikeAnyWrongType() {
        // a = []; a.append([a])
        String message = refusal(segmentAddress(new PickleBytes(), p -> p.op(EMPTY_LIST, BINPUT, 0, EMPTY_LIST,
                BINGET, 0, APPEND, APPEND)));
        assertTrue(message.contains("segments[0]: 'address': expected a non-negative integer below 2^64, got [[[["),
                message);
    }

    @Test
    void aHundredThousandLevelsOfNestingAreRefusedWithoutOverflowingTheStack() {
        int depth = 100_000;
        String message = refusal(segmentAddress(new PickleBytes(), p -> {
            for (int i = 0; i < depth; i++) {
                p.op(EMPTY_LIST);
            }
            for (int i = 1; i < depth; i++) {
                p.op(APPEND);
            }
        }));
        assertTrue(message.contains("'address': expected a non-negative integer below 2^64, got [[[["), message);
    }

    @Test
    void deeplyNestedSettingsAreLeftOut() {
        PickleBytes p = new PickleBytes().op(EMPTY_DICT, MARK).str("segments").op(EMPTY_LIST).str("allocator_settings")
                .op(EMPTY_DICT).str("garbage_collection_threshold");
        for (int i = 0; i < 100_000; i++) {
            p.op(EMPTY_LIST);
        }
        for (int i = 1; i < 100_000; i++) {
            p.op(APPEND);
        }
        RecordedAllocatorSettings settings = settings(p.op(SETITEM, SETITEMS).stop());
        assertTrue(settings.notes().getFirst().contains("holds a list or dict inside a list or dict"),
                settings.notes().toString());
    }

    // ---- 3. one segment, blocks list or block listed many times ----

    /**
     * {@code B = {'state': 'active_allocated', 'size': 1, 'address': 0}; S = {'address': 0, 'total_size': 1,
     * 'blocks': [B] * blocks}; {'segments': [S] * segments, 'device_traces': []}}, 2 bytes per reference.
     */
    private static byte[] repeated(int segments, int blocks) {
        PickleBytes p = new PickleBytes().op(EMPTY_DICT, MARK).str("state").str("active_allocated").str("size")
                .op(BININT1, 1).str("address").op(BININT1, 0, SETITEMS, BINPUT, 1, POP)
                .op(EMPTY_DICT, MARK).str("address").op(BININT1, 0).str("total_size").op(BININT1, 1).str("blocks")
                .op(EMPTY_LIST, MARK).get(1, blocks).op(APPENDS, SETITEMS, BINPUT, 0, POP)
                .op(EMPTY_DICT, MARK).str("segments").op(EMPTY_LIST, MARK).get(0, segments).op(APPENDS);
        return p.str("device_traces").op(EMPTY_LIST, SETITEMS).stop();
    }

    @Test
    void oneSegmentListedTenThousandTimesIsRefused() {
        byte[] data = repeated(10_000, 10_000);
        assertTrue(data.length < 41_000, "about 40 KB: " + data.length);
        String message = refusal(data);
        assertTrue(message.contains(" is the very object ") && message.contains("PyTorch writes each segment"),
                message);
    }

    @Test
    void oneSegmentListedTwiceIsRefusedNamingBoth() {
        assertTrue(refusal(repeated(2, 1)).contains("segments[1] is the very object segments[0] is"));
    }

    @Test
    void oneBlocksListInTwoSegmentsIsRefused() {
        // S0 = {'blocks': L}; S1 = {'blocks': L} with L = [7] memoized (an empty one is harmless, and let be).
        byte[] data = new PickleBytes().op(EMPTY_LIST, BININT1, 7, APPEND, BINPUT, 0, POP, EMPTY_DICT, MARK)
                .str("segments")
                .op(EMPTY_LIST, MARK, EMPTY_DICT).str("blocks").op(BINGET, 0, SETITEM)
                .op(EMPTY_DICT).str("blocks").op(BINGET, 0, SETITEM, APPENDS, SETITEMS).stop();
        assertTrue(refusal(data).contains("segments[1]['blocks'] is the very object segments[0]['blocks'] is"));
    }

    // ---- 4. big integers ----

    @Test
    void aTextIntegerOfThreeMillionDigitsIsRefusedAsPythonRefusesIt() {
        byte[] digits = "1".repeat(3_000_000).getBytes(StandardCharsets.US_ASCII);
        String message = refusal(segmentAddress(new PickleBytes(), p -> p.op('L').raw(digits).op('L', '\n')));
        assertTrue(message.contains("LONG with an integer of more than 4300 digits: it exceeds the limit (4300"
                + " digits) for integer string conversion"), message);
    }

    @Test
    void aTextIntegerAtPythonsLimitLoadsAndIsShownByItsSize() {
        byte[] digits = "9".repeat(4300).getBytes(StandardCharsets.US_ASCII);
        String message = refusal(segmentAddress(new PickleBytes(), p -> p.op('L').raw(digits).op('L', '\n')));
        assertTrue(message.endsWith("got an integer of 14,285 bits"), message);
    }

    @Test
    void anEightMebibyteBinaryIntegerIsShownByItsSizeNotConverted() {
        int length = 8 << 20;
        byte[] value = new byte[length];
        Arrays.fill(value, (byte) 0x55);
        String message = refusal(segmentAddress(new PickleBytes(), p -> p.op(0x8b, 0, 0, 0x80, 0).raw(value)));
        assertTrue(message.endsWith("got an integer of 67,108,863 bits"), message);
    }

    // ---- malformed beyond the opcodes' own checks ----

    @Test
    void aTextFloatThatIsNotANumberIsRefusedWithoutNamingAJavaError() {
        String message = refusal(new PickleBytes().op('F').raw("abc\n".getBytes(StandardCharsets.US_ASCII)).stop());
        assertTrue(message.contains("not a readable pickle: an opcode met an argument or a value it cannot work on"),
                message);
    }

    /**
     * Found by {@code TraceFuzzTest} (seeds 20261605, 20263110, 20263423): None where a number belongs, or inside a
     * list there, threw a NullPointerException while the refusal quoted it.
     */
    @Test
    void noneWhereANumberBelongsIsRefusedAndQuotedAsNone() {
        String bare = refusal(segmentAddress(new PickleBytes(), p -> p.op('N')));
        assertTrue(bare.endsWith("segments[0]: 'address': expected a non-negative integer below 2^64, got None"),
                bare);
        String listed = refusal(segmentAddress(new PickleBytes(), p -> p.op(EMPTY_LIST, 'N', APPEND)));
        assertTrue(listed.endsWith("segments[0]: 'address': expected a non-negative integer below 2^64, got [None]"),
                listed);
    }

    /** Found by {@code TraceFuzzTest} (seed 20261215): the names were quoted raw, C1 controls and all. */
    @Test
    void aRefusedGlobalsNamesAreQuotedWithTheirControlsEscaped() {
        String message = refusal(new PickleBytes().op('c').raw("\u001b]0;owned\u0007\n\u0089x\n"
                .getBytes(StandardCharsets.ISO_8859_1)).stop());
        assertTrue(message.contains("refused pickle opcode GLOBAL (\\x1b]0;owned\\x07.\\x89x)"), message);
    }

    /** Found by {@code TraceFuzzTest} (seed 20287614): the unknown action was quoted raw, and whole. */
    @Test
    void anUnknownActionIsQuotedBoundedWithItsControlsEscaped() throws IOException {
        byte[] data = new PickleBytes().op(EMPTY_DICT).str("device_traces").op(EMPTY_LIST, EMPTY_LIST, EMPTY_DICT)
                .str("action").str("\u001b]0;x\u0007" + "a".repeat(200)).op(SETITEM, APPEND, APPEND, SETITEM).stop();
        PyTorchPickleReader reader = new PyTorchPickleReader(new ByteArrayInputStream(data), FILE,
                PyTorchPickleReader.ONLY_DEVICE);
        TraceFormatException e = assertTimeoutPreemptively(BOUND, () -> assertThrows(TraceFormatException.class,
                reader::next));
        String message = e.getMessage();
        assertTrue(message.startsWith(FILE + ":1: device_traces[0][0]: unknown action '\\x1b]0;x\\x07aaa"), message);
        assertTrue(message.contains("… (6 more characters)': expected one of "), message);
    }

    /** Found by {@code TraceFuzzTest} (seed 20272010, a mutated real snapshot): the key was quoted raw. */
    @Test
    void aTextMemoKeyThatIsNotANumberIsQuotedWithItsControlsEscaped() {
        String message = refusal(new PickleBytes().op(EMPTY_LIST, 'p').raw("\u001b]0;x\u0007\n"
                .getBytes(StandardCharsets.US_ASCII)).stop());
        assertTrue(message.contains("PUT with a key that is not a number: '\\x1b]0;x\\x07'"), message);
    }

    @Test
    void aRefusedStackGlobalsHugeNameIsQuotedBounded() {
        String name = "n".repeat(1 << 20);
        String message = refusal(new PickleBytes().str("m").op(0x8d).raw(littleEndian8(name.length()))
                .raw(name.getBytes(StandardCharsets.US_ASCII)).op(0x93).stop()); // BINUNICODE8, STACK_GLOBAL
        assertTrue(message.contains("refused pickle opcode STACK_GLOBAL (m.nnn"), message);
        assertTrue(message.contains(" more characters)"), message);
    }

    private static byte[] littleEndian8(long value) {
        byte[] b = new byte[8];
        for (int i = 0; i < 8; i++) {
            b[i] = (byte) (value >>> (8 * i));
        }
        return b;
    }

    // ---- 5. amplification ----

    /**
     * 48 MiB of 1-byte {@code EMPTY_DICT}s, about 2 to 6 GB of dicts, read by a JVM of its own with {@code -Xmx1g}
     * (as the attack ran): refused within its first few MB, in one line (the dicts wait on the stack, whose bound
     * ends it first), and the process never holds 1 GB.
     */
    @Test
    void emptyDictsThatWouldFillTheHeapAreRefusedByTheBudgetPerByte(@TempDir Path dir) throws Exception {
        Path file = repeated(dir, new byte[] {(byte) EMPTY_DICT}, 48 << 20);
        Child child = readInOwnJvm(file, "-Xmx1g");
        assertTrue(child.refusal().startsWith(file + ": byte "), child.output());
        assertTrue(child.refusal().contains("the file is built to fill memory"), child.output());
        child.assertPeakBelow(1_000_000_000L);
    }

    /**
     * The same dicts appended to a list in Python's batches of 1,000 (so the stack stays short): the budget of
     * containers per byte refuses them a little past its allowance.
     */
    @Test
    void emptyDictsInAListAreRefusedByTheBudgetPerByte() throws Exception {
        byte[] batch = new byte[1002];
        Arrays.fill(batch, (byte) EMPTY_DICT);
        batch[0] = MARK;
        batch[1001] = APPENDS;
        PickleBytes p = new PickleBytes().op(EMPTY_LIST);
        for (int i = 0; i < 2000; i++) {
            p.raw(batch);
        }
        String message = refusal(p.stop());
        assertTrue(message.contains("dicts, lists and tuples by this byte") && message.contains("built to fill memory"),
                message);
    }

    /**
     * A list of as many empty lists as the budget allows outright, 1 byte each (Python's {@code [[] for _ in
     * range(n)]}): denser than any snapshot, but within the allowance, so it loads.
     */
    @Test
    void asManyContainersAsTheAllowanceLoadWhateverTheirDensity() throws Exception {
        PickleBytes p = new PickleBytes().op(EMPTY_LIST);
        int lists = (int) RestrictedUnpickler.CONTAINERS_ALLOWED - 1;
        for (int done = 0; done < lists; done += 1000) {
            p.op(MARK);
            for (int i = done; i < Math.min(lists, done + 1000); i++) {
                p.op(EMPTY_LIST);
            }
            p.op(APPENDS);
        }
        Object loaded = RestrictedUnpickler.load(p.stop());
        assertEquals(lists, ((List<?>) loaded).size());
    }

    /**
     * PyTorch's C++ pickler writes a list's items in one batch (one MARK, every item, one APPENDS): a list of more
     * items than {@link PickleStack#MOST_ITEMS}, each 17 bytes of file, loads, since the stack's budget grows with the
     * bytes read.
     */
    @Test
    void aListInOneBatchLargerThanTheStackAllowanceLoads() throws Exception {
        int items = PickleStack.MOST_ITEMS + PickleStack.MOST_ITEMS / 4;
        PickleBytes p = new PickleBytes().op(EMPTY_LIST, MARK);
        for (int i = 0; i < items; i++) {
            p.str("fifteen letters");
        }
        p.op(APPENDS);
        Object loaded = assertTimeoutPreemptively(BOUND, () -> RestrictedUnpickler.load(p.stop()));
        assertEquals(items, ((List<?>) loaded).size());
    }

    /** 48 MiB of 1-byte {@code NONE}s, 8 bytes of stack each: refused when the stack passes its bound. */
    @Test
    void aFloodOfValuesOnTheStackIsRefusedAtItsBound(@TempDir Path dir) throws Exception {
        Path file = repeated(dir, new byte[] {'N'}, 48 << 20);
        TraceFormatException e = assertTimeoutPreemptively(BOUND,
                () -> assertThrows(TraceFormatException.class, () -> PyTorchSnapshotFile.read(file)));
        assertTrue(e.getMessage().contains("values wait on the pickle's stack at once")
                && e.getMessage().contains("built to fill memory"), e.getMessage());
    }

    /**
     * 8 MiB of 11-byte dicts of two entries each (within the budgets per byte and of the stack), about 110 MB of
     * dicts, read by a JVM of 64 MiB of heap: the heap check ends it with one refusal naming the heap, not an
     * out-of-memory error.
     */
    @Test
    void dictsWithinTheBudgetThatWouldFillTheHeapEndTheLoadWithAClearRefusal(@TempDir Path dir) throws Exception {
        byte[] twoEntries = {(byte) EMPTY_DICT, MARK, BINGET, 0, BINGET, 1, BINGET, 1, BINGET, 0, SETITEMS};
        Path file = repeated(dir, twoEntries, 8 << 20);
        Child child = readInOwnJvm(file, "-Xmx64m");
        assertTrue(child.refusal().startsWith(file + ": this file needs more memory than the Java heap allows"
                + " (-Xmx64m)"), child.output());
    }

    /**
     * A pickle that memoizes "a" and "b" (keys 0 and 1), then {@code unit} repeated to {@code bytes} bytes, then
     * STOP, written in chunks.
     */
    private static Path repeated(Path dir, byte[] unit, int bytes) throws IOException {
        Path file = dir.resolve(FILE);
        byte[] head = new PickleBytes().str("a").op(BINPUT, 0, POP).str("b").op(BINPUT, 1, POP).bytes();
        byte[] chunk = new byte[unit.length * ((1 << 20) / unit.length)];
        for (int i = 0; i < chunk.length; i++) {
            chunk[i] = unit[i % unit.length];
        }
        try (OutputStream out = Files.newOutputStream(file)) {
            out.write(head);
            for (int written = 0; written < bytes; written += chunk.length) {
                out.write(chunk);
            }
            out.write('.');
        }
        return file;
    }

    /** What a {@link ReadSnapshot} in a JVM of its own printed, and its peak resident memory (-1 where unknown). */
    private record Child(String output, String refusal, long peakBytes) {
        void assertPeakBelow(long bytes) {
            if (peakBytes >= 0) {
                assertTrue(peakBytes < bytes, "peak resident memory " + peakBytes + " bytes: " + output);
            }
        }
    }

    /**
     * Reads {@code file} in a JVM of its own with {@code heap} (so that this test's heap is not the one filled);
     * asserts that it ended, refused, printed one line without a Java error or stack, and reports its peak RSS.
     */
    private static Child readInOwnJvm(Path file, String heap) throws Exception {
        Path java = Path.of(System.getProperty("java.home"), "bin", "java");
        Process child = new ProcessBuilder(java.toString(), heap, "-cp", System.getProperty("java.class.path"),
                ReadSnapshot.class.getName(), file.toString()).redirectErrorStream(true).start();
        boolean ended = child.waitFor(60, TimeUnit.SECONDS);
        if (!ended) {
            child.destroyForcibly();
        }
        String output = new String(child.getInputStream().readAllBytes(), StandardCharsets.UTF_8).strip();
        assertTrue(ended, "ended: " + output);
        assertEquals(ReadSnapshot.REFUSED, child.exitValue(), output);
        assertFalse(output.contains("OutOfMemoryError") || output.contains("\tat "), output);
        // The last two lines: a JVM may warn about its own options before the program runs.
        String[] lines = output.split("\n");
        String peak = lines[lines.length - 1];
        assertTrue(peak.startsWith(ReadSnapshot.PEAK), output);
        return new Child(output, lines[lines.length - 2], Long.parseLong(peak.substring(ReadSnapshot.PEAK.length())));
    }

    /**
     * Reads a snapshot in a JVM of its own: prints the refusal and exits with {@link #REFUSED}, or prints "read";
     * then a last line with its peak resident memory in bytes (Linux's VmHWM; -1 elsewhere).
     */
    static final class ReadSnapshot {
        static final int REFUSED = 3;
        static final String PEAK = "peak resident bytes: ";

        private ReadSnapshot() {
        }

        public static void main(String[] args) throws IOException {
            int status = 0;
            try {
                PyTorchSnapshotFile.read(Path.of(args[0]));
                System.out.println("read");
            } catch (TraceFormatException e) {
                System.out.println(e.getMessage());
                status = REFUSED;
            }
            System.out.println(PEAK + peakResidentBytes());
            System.exit(status);
        }

        private static long peakResidentBytes() throws IOException {
            Path status = Path.of("/proc/self/status");
            if (!Files.isReadable(status)) {
                return -1;
            }
            for (String line : Files.readAllLines(status)) {
                if (line.startsWith("VmHWM:")) {
                    return Long.parseLong(line.replaceAll("[^0-9]", "")) * 1024;
                }
            }
            return -1;
        }
    }
}
