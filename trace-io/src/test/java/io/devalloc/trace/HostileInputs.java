package io.devalloc.trace;

import io.devalloc.trace.pytorch.PyTorchCsvReader;
import io.devalloc.trace.rmm.RmmCsvReader;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.math.BigInteger;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.IdentityHashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Random;
import java.util.zip.CRC32;
import java.util.zip.ZipEntry;
import java.util.zip.ZipFile;
import java.util.zip.ZipOutputStream;

/**
 * Hostile trace files of every format the readers take, each made from one seed alone (the same seed gives the same
 * bytes, so a failure reproduces): pickles (random opcode streams, snapshots whose fields hold wrong types, shared
 * and cyclic objects, bombs), PyTorch and RMM CSVs, valgrind and Android text, zips of them, and random mutations of
 * all of these and of the smallest real traces in {@code ../shared/traces} when they are there.
 */
final class HostileInputs {

    /** One input: the seed it came from, what it is (for messages), and its file. */
    record Input(long seed, String kind, Path file) {
    }

    private static final String[] PICKLE_KEYS = {"segments", "device_traces", "blocks", "address", "total_size",
        "size", "state", "action", "addr", "stream", "device", "allocator_settings", "frames", "requested_size",
        "segment_type", "is_expandable", "device_free", "time_us", "allocated_size", "active_size"};
    private static final String[] ACTIONS = {"alloc", "free_requested", "free_completed", "segment_alloc",
        "segment_free", "segment_map", "segment_unmap", "oom", "snapshot", "bogus"};
    private static final String[] STATES = {"active_allocated", "active_pending_free", "active_awaiting_free",
        "inactive", "weird"};
    private static final String[] SETTINGS = {"max_split_size", "expandable_segments", "garbage_collection_threshold",
        "roundup_power2_divisions", "release_lock_on_cudamalloc", "pinned_use_cuda_host_register", "unknown_key"};
    /** Opcodes that take no argument (BUILD among them, which the allow-list refuses), and bytes that are none. */
    private static final byte[] BARE_OPCODES = bytes("(0123.NabeltsuN\u0085\u0086\u0087\u0088\u0089\u0094}]");
    /** GLOBAL, REDUCE, BUILD, INST, PERSID, STACK_GLOBAL, NEWOBJ, NEWOBJ_EX: what runs code, outside the list. */
    private static final byte[] REFUSED_OPCODES = bytes("cRbiP\u0093\u0081\u0092");
    /** Fields that no format takes where a number or a word belongs. */
    private static final String[] BAD_FIELDS = {"", "-1", "-0", "+5", "0x", "0xfffffffffffffffff", "1e10", "1.5",
        "NaN", "99999999999999999999999", "18446744073709551616", "9223372036854775808", " 7", "7 ", "\"7\"",
        "\u001b]0;owned\u0007", "\u202eevil", "\u0000", "é", "\uD83D\uDE00", "(nil)", "x,y", "\t", "\r"};

    private final List<Real> reals = new ArrayList<>();
    /**
     * How many fields in a thousand the text being made spoils, drawn per input: a file with a bad field in every
     * row stops at its first, so most files spoil few, and some none (those are read to their end).
     */
    private int spoiled;

    /** A small real trace: its name and bytes. */
    private record Real(String name, String ext, byte[] data) {
    }

    /** Loads the smallest real traces under {@code sharedTraces}, when it is a folder; none otherwise. */
    HostileInputs(Path sharedTraces) throws IOException {
        if (sharedTraces == null || !Files.isDirectory(sharedTraces)) {
            return;
        }
        for (String name : new String[] {"malloc-weealloc-valgrind/ls.trace",
            "malloc-weealloc-valgrind/cpp-demangle.trace", "malloc-weealloc-valgrind/grep-random-data.trace"}) {
            addReal(sharedTraces, name, "trace", Integer.MAX_VALUE);
        }
        // Prefixes keep each read short: a mutation near the start is found as well in 300 lines as in 3,000.
        addReal(sharedTraces, "pt-cs336-medium/medium_128_inference_memory_snapshot.csv", "csv", 300);
        addReal(sharedTraces, "pt-cnn-eor-small/snapshot.pickle", "pickle", -1);
        Path zip = sharedTraces.resolve("malloc-aosp-memory-replay/systemui.zip");
        if (Files.isRegularFile(zip)) {
            try (ZipFile z = new ZipFile(zip.toFile())) {
                ZipEntry entry = z.entries().nextElement();
                try (InputStream in = z.getInputStream(entry)) {
                    byte[] text = firstLines(in.readNBytes(1 << 16), 300);
                    reals.add(new Real("systemui.txt (300 lines)", "txt", text));
                    reals.add(new Real("systemui.zip (300 lines)", "zip", zip(List.of(new Entry(entry.getName(),
                            text, false)))));
                }
            }
        }
    }

    private void addReal(Path dir, String name, String ext, int lines) throws IOException {
        Path file = dir.resolve(name);
        if (Files.isRegularFile(file)) {
            byte[] data;
            if (lines < 0) {
                data = Files.readAllBytes(file);
            } else {
                try (InputStream in = Files.newInputStream(file)) {
                    data = firstLines(in.readNBytes(1 << 16), lines);
                }
            }
            reals.add(new Real(name, ext, data));
        }
    }

    /** How many real traces the mutations start from. */
    int reals() {
        return reals.size();
    }

    /** The input of {@code seed}, written under {@code dir}. */
    Input make(long seed, Path dir) throws IOException {
        Random r = new Random(seed);
        int pick = r.nextInt(100);
        spoiled = new int[] {0, 0, 2, 10, 50, 150}[r.nextInt(6)];
        String kind;
        String ext;
        byte[] data;
        if (pick < 12) {
            kind = "pickle opcodes";
            ext = "pickle";
            data = opcodeStream(r);
        } else if (pick < 30) {
            kind = "pickle snapshot";
            ext = "pickle";
            data = encode(r, snapshot(r));
        } else if (pick < 42) {
            kind = "pytorch csv";
            ext = "csv";
            data = pytorchCsv(r);
        } else if (pick < 52) {
            kind = "rmm csv";
            ext = "csv";
            data = rmmCsv(r);
        } else if (pick < 60) {
            kind = "valgrind";
            ext = "trace";
            data = valgrind(r);
        } else if (pick < 70) {
            kind = "android";
            ext = "txt";
            data = android(r);
        } else if (pick < 78) {
            kind = "zip";
            ext = "zip";
            data = smallZip(r);
        } else if (pick < 80) {
            Path file = dir.resolve(seed + ".zip");
            return new Input(seed, "large zip: " + largeZip(r, file), file);
        } else if (pick < 90 && !reals.isEmpty()) {
            Real real = reals.get(r.nextInt(reals.size()));
            kind = "mutated real " + real.name();
            ext = real.ext();
            data = mutate(r, real.data());
        } else {
            // A mutation of a well-formed generated input: most of its bytes still parse, so the reader goes deep.
            int inner = r.nextInt(5);
            kind = "mutated " + new String[] {"pickle snapshot", "pytorch csv", "rmm csv", "android", "zip"}[inner];
            ext = new String[] {"pickle", "csv", "csv", "txt", "zip"}[inner];
            data = mutate(r, switch (inner) {
                case 0 -> encode(r, snapshot(r));
                case 1 -> pytorchCsv(r);
                case 2 -> rmmCsv(r);
                case 3 -> android(r);
                default -> smallZip(r);
            });
        }
        Path file = dir.resolve(seed + "." + ext);
        Files.write(file, data);
        return new Input(seed, kind, file);
    }

    // ---- mutations ----

    /** One to three of: byte flips, a truncation, a slice duplicated, random bytes inserted. */
    static byte[] mutate(Random r, byte[] data) {
        byte[] out = data;
        for (int n = 1 + r.nextInt(3); n > 0; n--) {
            if (out.length == 0) {
                return out;
            }
            switch (r.nextInt(4)) {
                case 0 -> {
                    out = out.clone();
                    for (int k = 1 + r.nextInt(8); k > 0; k--) {
                        int at = r.nextInt(out.length);
                        out[at] = r.nextBoolean() ? (byte) (out[at] ^ (1 << r.nextInt(8))) : (byte) r.nextInt(256);
                    }
                }
                case 1 -> out = Arrays.copyOf(out, r.nextInt(out.length));
                case 2 -> {
                    int from = r.nextInt(out.length);
                    int to = from + r.nextInt(Math.min(out.length - from, 4096) + 1);
                    out = splice(out, r.nextInt(out.length + 1), Arrays.copyOfRange(out, from, to));
                }
                default -> {
                    byte[] noise = new byte[1 + r.nextInt(64)];
                    r.nextBytes(noise);
                    out = splice(out, r.nextInt(out.length + 1), noise);
                }
            }
        }
        return out;
    }

    private static byte[] splice(byte[] data, int at, byte[] inserted) {
        byte[] out = new byte[data.length + inserted.length];
        System.arraycopy(data, 0, out, 0, at);
        System.arraycopy(inserted, 0, out, at, inserted.length);
        System.arraycopy(data, at, out, at + inserted.length, data.length - at);
        return out;
    }

    // ---- pickles ----

    /** Bytes a pickle's encoder writes as they are: a hostile payload that pushes one value (most of them). */
    private record Raw(byte[] bytes) {
    }

    /** A random stream of opcodes, mostly allow-listed, with arguments of random (often absurd) lengths. */
    static byte[] opcodeStream(Random r) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        out.write(0x80);
        out.write(2 + r.nextInt(4));
        for (int n = r.nextInt(200); n > 0; n--) {
            int what = r.nextInt(20);
            switch (what) {
                case 0, 1, 2, 3, 4, 5 -> out.write(BARE_OPCODES[r.nextInt(BARE_OPCODES.length)]);
                case 6 -> out.writeBytes(new byte[] {'K', (byte) r.nextInt(256)});
                case 7 -> out.writeBytes(new byte[] {(byte) (r.nextBoolean() ? 'q' : 'h'), (byte) r.nextInt(8)});
                case 8 -> {
                    out.write(r.nextBoolean() ? 'r' : 'j');
                    le(out, r.nextBoolean() ? r.nextInt(8) : r.nextInt(), 4);
                }
                case 9 -> {
                    byte[] s = PICKLE_KEYS[r.nextInt(PICKLE_KEYS.length)].getBytes(StandardCharsets.UTF_8);
                    out.write(0x8c);
                    out.write(s.length);
                    out.writeBytes(s);
                }
                case 10 -> {
                    // A declared length with fewer bytes, or none, after it.
                    out.write(new int[] {'X', 0x8d, 'T', 0x8b, 'B'}[r.nextInt(5)]);
                    le(out, r.nextBoolean() ? -1 : r.nextInt(1 << 20), 4);
                    out.writeBytes(new byte[r.nextInt(8)]);
                }
                case 11 -> out.writeBytes(bytes(new String[] {"I12345\n", "I-1\n", "L99999999999999999999L\n",
                    "Fnan\n", "F1e999\n", "Fx\n", "I\n", "S'abc'\n", "S'abc\n", "Vabc\n", "p7\n", "g7\n", "g-1\n",
                    "I01\n", "I0x10\n"}[r.nextInt(15)]));
                case 12 -> {
                    out.write(0x8a);
                    int n1 = r.nextInt(256);
                    out.write(n1);
                    byte[] b = new byte[n1];
                    r.nextBytes(b);
                    out.writeBytes(b);
                }
                case 13 -> out.write(REFUSED_OPCODES[r.nextInt(REFUSED_OPCODES.length)]);
                case 14 -> {
                    out.write(0x95); // FRAME with a random length
                    le(out, r.nextInt(1 << 16), 8);
                }
                case 15 -> out.write(r.nextInt(256));
                case 16 -> {
                    out.write('G');
                    byte[] b = new byte[8];
                    r.nextBytes(b);
                    out.writeBytes(b);
                }
                default -> out.writeBytes(payload(r, new int[] {2_000_000 + r.nextInt(1000)}).bytes());
            }
        }
        if (r.nextInt(4) > 0) {
            out.write('.');
        }
        return out.toByteArray();
    }

    /** A payload built to expand, recurse, convert a huge integer or flood: pushes one value. */
    private static Raw payload(Random r, int[] nextKey) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        switch (r.nextInt(10)) {
            case 0 -> {
                int depth = 1 + r.nextInt(r.nextBoolean() ? 100 : 100_000);
                out.writeBytes(repeat((byte) ']', depth));
                out.writeBytes(repeat((byte) 'a', depth - 1));
            }
            case 1, 2 -> {
                // L0 = [] (or {}); L(i) = [L(i-1), L(i-1)] through the memo: 2^depth items from a few bytes.
                boolean dicts = r.nextBoolean();
                int depth = 5 + r.nextInt(56);
                int key = nextKey[0];
                nextKey[0] += depth + 1;
                out.write(dicts ? '}' : ']');
                put(out, key);
                out.write('0');
                for (int i = 1; i <= depth; i++) {
                    out.write(dicts ? '}' : ']');
                    out.write('(');
                    if (dicts) {
                        out.writeBytes(new byte[] {(byte) 0x8c, 1, 'a'});
                        get(out, key + i - 1);
                        out.writeBytes(new byte[] {(byte) 0x8c, 1, 'b'});
                        get(out, key + i - 1);
                        out.write('u');
                    } else {
                        get(out, key + i - 1);
                        get(out, key + i - 1);
                        out.write('e');
                    }
                    put(out, key + i);
                    out.write('0');
                }
                get(out, key + depth);
            }
            case 3 -> out.writeBytes(bytes((r.nextBoolean() ? "I" : "L") + "9".repeat(1 + r.nextInt(200_000))
                    + "\n"));
            case 4 -> {
                int n = 1 + r.nextInt(1 << 18);
                out.write(0x8b); // LONG4
                le(out, n, 4);
                byte[] b = new byte[n];
                r.nextBytes(b);
                out.writeBytes(b);
            }
            case 5 -> {
                out.write(']');
                out.write('(');
                out.writeBytes(repeat((byte) '}', 1 + r.nextInt(200_000)));
                out.write('e');
            }
            case 6 -> out.writeBytes(new byte[] {'X', 3, 0, 0, 0, (byte) 0xff, (byte) 0xfe, (byte) 0xc0});
            case 7 -> out.writeBytes(new byte[] {'N', 'N', (byte) 0x86});
            case 8 -> {
                // A list that holds itself: a = []; a.append([a])
                int key = nextKey[0]++;
                out.write(']');
                put(out, key);
                out.write(']');
                get(out, key);
                out.write('a');
                out.write('a');
            }
            default -> {
                out.write('X');
                le(out, 5, 4);
                out.writeBytes(bytes("\u001b]0;x"));
            }
        }
        return new Raw(out.toByteArray());
    }

    /** A snapshot-shaped tree with random, sometimes wrong, values; shared objects and cycles among them. */
    static Object snapshot(Random r) {
        List<Object> pool = new ArrayList<>();
        Map<Object, Object> root = new LinkedHashMap<>();
        List<Object> segments = new ArrayList<>();
        List<Object> traces = new ArrayList<>();
        List<Long> blockAddresses = new ArrayList<>();
        List<Long> segmentAddresses = new ArrayList<>();
        int devices = r.nextInt(4);
        for (int s = r.nextInt(6); s > 0; s--) {
            long base = 0x7f00_0000_0000L + (long) segments.size() * 0x20_0000L;
            long total = 0x20_0000L;
            segmentAddresses.add(base);
            Map<Object, Object> seg = new LinkedHashMap<>();
            seg.put("device", (long) r.nextInt(Math.max(devices, 1)));
            seg.put("address", base);
            seg.put("total_size", total);
            seg.put("stream", r.nextInt(4) == 0 ? (long) r.nextInt(1 << 20) : 0L);
            seg.put("segment_type", r.nextBoolean() ? "large" : "small");
            if (r.nextInt(4) == 0) {
                seg.put("is_expandable", r.nextBoolean());
            }
            List<Object> blocks = new ArrayList<>();
            long at = base;
            for (int b = r.nextInt(5); b > 0 && at < base + total; b--) {
                long size = 512L * (1 + r.nextInt(1024));
                Map<Object, Object> block = new LinkedHashMap<>();
                block.put("address", at);
                block.put("size", size);
                block.put("requested_size", size - r.nextInt(512));
                block.put("state", STATES[r.nextInt(STATES.length)]);
                blocks.add(block);
                blockAddresses.add(at);
                pool.add(block);
                at += size;
            }
            seg.put("blocks", blocks);
            pool.add(blocks);
            pool.add(seg);
            segments.add(seg);
        }
        List<Object> frames = new ArrayList<>();
        frames.add(dictOf("filename", "train.py", "line", 7L, "name", "step"));
        for (int d = 0; d < devices; d++) {
            List<Object> entries = new ArrayList<>();
            for (int e = r.nextInt(40); e > 0; e--) {
                String action = ACTIONS[r.nextInt(ACTIONS.length)];
                Map<Object, Object> entry = new LinkedHashMap<>();
                entry.put("action", action);
                boolean segmentEvent = action.startsWith("segment");
                List<Long> addresses = segmentEvent ? segmentAddresses : blockAddresses;
                entry.put("addr", addresses.isEmpty() || r.nextInt(5) == 0 ? 0x7e00_0000_0000L + 512L * r.nextInt(4096)
                        : addresses.get(r.nextInt(addresses.size())));
                entry.put("size", segmentEvent ? 0x20_0000L : 512L * (1 + r.nextInt(64)));
                entry.put("stream", 0L);
                entry.put("time_us", 1_700_000_000_000_000L + e);
                if (action.equals("oom")) {
                    entry.put("device_free", (long) r.nextInt(1 << 30));
                }
                // PyTorch shares frames between entries; the reader compares their identity.
                entry.put("frames", r.nextBoolean() ? frames : new ArrayList<>());
                entries.add(entry);
                pool.add(entry);
            }
            traces.add(entries);
            pool.add(entries);
        }
        if (r.nextInt(4) > 0) {
            root.put("segments", segments);
        }
        if (r.nextInt(4) > 0) {
            root.put("device_traces", traces);
        }
        if (r.nextBoolean()) {
            Map<Object, Object> settings = new LinkedHashMap<>();
            for (int k = r.nextInt(4); k > 0; k--) {
                String key = SETTINGS[r.nextInt(SETTINGS.length)];
                settings.put(key, r.nextBoolean() ? (Object) (long) r.nextInt(1 << 20) : (Object) r.nextBoolean());
            }
            root.put("allocator_settings", settings);
            pool.add(settings);
        }
        pool.add(segments);
        pool.add(traces);
        pool.add(root);
        int[] nextKey = {1_000_000};
        for (int k = r.nextInt(5); k > 0; k--) {
            hostileEdit(r, pool, nextKey);
        }
        return root;
    }

    @SuppressWarnings("unchecked")
    private static void hostileEdit(Random r, List<Object> pool, int[] nextKey) {
        Object target = pool.get(r.nextInt(pool.size()));
        Object value = hostileValue(r, pool, target, nextKey);
        if (target instanceof Map<?, ?> m) {
            Map<Object, Object> map = (Map<Object, Object>) m;
            if (!map.isEmpty() && r.nextInt(4) > 0) {
                List<Object> keys = new ArrayList<>(map.keySet());
                map.put(keys.get(r.nextInt(keys.size())), value);
            } else if (r.nextInt(8) == 0) {
                map.put(hostileKey(r), value);
            } else {
                map.put(PICKLE_KEYS[r.nextInt(PICKLE_KEYS.length)], value);
            }
        } else if (target instanceof List<?> l) {
            List<Object> list = (List<Object>) l;
            if (!list.isEmpty() && r.nextBoolean()) {
                list.set(r.nextInt(list.size()), value);
            } else if (!list.isEmpty() && r.nextInt(4) == 0) {
                list.remove(r.nextInt(list.size()));
            } else {
                list.add(value);
            }
        }
    }

    /** A dict key PyTorch never writes: an integer, None, a tuple. */
    private static Object hostileKey(Random r) {
        return switch (r.nextInt(3)) {
            case 0 -> (long) r.nextInt();
            case 1 -> new Object[] {"a", 1L};
            default -> NONE;
        };
    }

    /** Stands for Python's None in the trees, since a map cannot hold null everywhere and null reads badly. */
    private static final Object NONE = new Object();

    private static Object hostileValue(Random r, List<Object> pool, Object target, int[] nextKey) {
        return switch (r.nextInt(17)) {
            case 0 -> -1L;
            case 1 -> Long.MIN_VALUE;
            case 2 -> BigInteger.ONE.shiftLeft(64);
            case 3 -> BigInteger.ONE.shiftLeft(64).subtract(BigInteger.ONE);
            case 4 -> BigInteger.ONE.shiftLeft(63);
            case 5 -> BigInteger.ONE.shiftLeft(1 + r.nextInt(20_000)).negate();
            case 6 -> r.nextBoolean() ? 1.5 : Double.NaN;
            case 7 -> BAD_FIELDS[r.nextInt(BAD_FIELDS.length)];
            case 8 -> NONE;
            case 9 -> r.nextBoolean();
            case 10 -> new ArrayList<>();
            case 11 -> new LinkedHashMap<>();
            case 12, 13 -> pool.get(r.nextInt(pool.size())); // shared through the memo
            case 14 -> target; // a cycle
            case 15 -> new Object[] {1L, "x"};
            default -> payload(r, nextKey);
        };
    }

    private static Map<Object, Object> dictOf(Object... keysAndValues) {
        Map<Object, Object> m = new LinkedHashMap<>();
        for (int i = 0; i < keysAndValues.length; i += 2) {
            m.put(keysAndValues[i], keysAndValues[i + 1]);
        }
        return m;
    }

    /** {@code tree} as a pickle, every list and dict memoized before its items, so that sharing and cycles hold. */
    static byte[] encode(Random r, Object tree) {
        PickleEncoder e = new PickleEncoder(r);
        e.out.write(0x80);
        e.out.write(2 + r.nextInt(4));
        e.value(tree);
        e.out.write('.');
        return e.out.toByteArray();
    }

    private static final class PickleEncoder {
        final ByteArrayOutputStream out = new ByteArrayOutputStream();
        final IdentityHashMap<Object, Integer> memo = new IdentityHashMap<>();
        final Random r;

        PickleEncoder(Random r) {
            this.r = r;
        }

        void value(Object v) {
            Integer key = memo.get(v);
            if (key != null) {
                get(out, key);
                return;
            }
            switch (v) {
                case Raw raw -> out.writeBytes(raw.bytes());
                case Boolean b -> out.write(b ? 0x88 : 0x89);
                case Long l -> integer(BigInteger.valueOf(l));
                case BigInteger b -> integer(b);
                case Double d -> {
                    out.write('G');
                    le(out, Long.reverseBytes(Double.doubleToRawLongBits(d)), 8);
                }
                case String s -> {
                    byte[] b = s.getBytes(StandardCharsets.UTF_8);
                    out.write('X');
                    le(out, b.length, 4);
                    out.writeBytes(b);
                }
                case List<?> list -> {
                    out.write(']');
                    memoize(v);
                    if (!list.isEmpty()) {
                        out.write('(');
                        for (Object item : list) {
                            value(item);
                        }
                        out.write('e');
                    }
                }
                case Map<?, ?> map -> {
                    out.write('}');
                    memoize(v);
                    if (!map.isEmpty()) {
                        out.write('(');
                        for (Map.Entry<?, ?> e : map.entrySet()) {
                            value(e.getKey());
                            value(e.getValue());
                        }
                        out.write('u');
                    }
                }
                case Object[] tuple -> {
                    out.write('(');
                    for (Object item : tuple) {
                        value(item);
                    }
                    out.write('t');
                    memoize(v);
                }
                default -> out.write('N');
            }
        }

        private void memoize(Object v) {
            int key = memo.size();
            memo.put(v, key);
            if (key < 256 && r.nextBoolean()) {
                out.write('q');
                out.write(key);
            } else {
                put(out, key);
            }
        }

        private void integer(BigInteger b) {
            if (b.signum() >= 0 && b.bitLength() <= 8) {
                out.write('K');
                out.write(b.intValue());
            } else if (b.bitLength() < 32) {
                out.write('J');
                le(out, b.intValue(), 4);
            } else {
                byte[] big = b.toByteArray();
                if (big.length < 256) {
                    out.write(0x8a);
                    out.write(big.length);
                } else {
                    out.write(0x8b);
                    le(out, big.length, 4);
                }
                for (int i = big.length - 1; i >= 0; i--) {
                    out.write(big[i]);
                }
            }
        }
    }

    private static void put(ByteArrayOutputStream out, int key) {
        out.write('r');
        le(out, key, 4);
    }

    private static void get(ByteArrayOutputStream out, int key) {
        out.write('j');
        le(out, key, 4);
    }

    private static void le(ByteArrayOutputStream out, long value, int width) {
        for (int i = 0; i < width; i++) {
            out.write((int) (value >>> (8 * i)) & 0xff);
        }
    }

    // ---- text ----

    /**
     * {@code typical}, except {@link #spoiled} times in a thousand: then a field no format takes, a huge one with an
     * escape sequence, or one longer than the readers' longest line.
     */
    private String field(Random r, String typical) {
        if (r.nextInt(1000) >= spoiled) {
            return typical;
        }
        int pick = r.nextInt(100);
        if (pick < 75) {
            return BAD_FIELDS[r.nextInt(BAD_FIELDS.length)];
        }
        if (pick < 99) {
            return "\u001b[2J" + "9".repeat(r.nextInt(300_000));
        }
        return "7".repeat((1 << 20) + r.nextInt(1000)); // past the readers' longest line
    }

    /** Lines joined with random line ends, some lines cut, columns dropped or added, blank lines between. */
    private byte[] lines(Random r, String header, List<String> rows) {
        StringBuilder b = new StringBuilder();
        if (header != null) {
            b.append(r.nextInt(20) == 0 ? "\uFEFF" : "").append(header).append(r.nextInt(10) == 0 ? "\r\n" : "\n");
        }
        for (String row : rows) {
            String line = row;
            int damage = r.nextInt(1000) < spoiled ? r.nextInt(4) : -1;
            if (damage == 0 && !line.isEmpty()) {
                line = line.substring(0, r.nextInt(line.length()));
            } else if (damage == 1) {
                int comma = line.lastIndexOf(',');
                line = comma < 0 ? line : line.substring(0, comma);
            } else if (damage == 2) {
                line = line + "," + field(r, "0");
            } else if (damage == 3) {
                b.append(r.nextBoolean() ? "\n" : "   \t\n");
            }
            b.append(line).append(switch (r.nextInt(1000) < spoiled ? r.nextInt(3) : 2) {
                case 0 -> "\r\n";
                case 1 -> "\r";
                default -> "\n";
            });
        }
        if (r.nextInt(1000) < 3 * spoiled && b.length() > 0) {
            b.setLength(r.nextInt(b.length())); // cut mid-line
        }
        return b.toString().getBytes(StandardCharsets.UTF_8);
    }

    byte[] pytorchCsv(Random r) {
        List<String> rows = new ArrayList<>();
        List<Long> live = new ArrayList<>();
        for (int i = 0, n = r.nextInt(60); i < n; i++) {
            String action = r.nextInt(10) == 0 ? new String[] {"presegment", "prealloc", "oom", "snapshot",
                "segment_alloc", "segment_free", "segment_map", "segment_unmap", "free_requested", "x"}[r.nextInt(10)]
                    : live.isEmpty() || r.nextBoolean() ? "alloc" : "free_completed";
            long addr = action.equals("free_completed") && !live.isEmpty() ? live.remove(r.nextInt(live.size()))
                    : 0x7f00_0000_0000L + 512L * r.nextInt(1 << 16);
            if (action.equals("alloc")) {
                live.add(addr);
            }
            rows.add(field(r, Integer.toString(i)) + "," + field(r, action) + "," + field(r, Long.toString(addr))
                    + "," + field(r, Integer.toString(512 * (1 + r.nextInt(100)))) + "," + field(r, "0") + ","
                    + field(r, Long.toString(1_700_000_000_000_000L + i)));
        }
        return lines(r, r.nextInt(30) == 0 ? "seq,action,addr,size" : PyTorchCsvReader.HEADER, rows);
    }

    byte[] rmmCsv(Random r) {
        List<String> rows = new ArrayList<>();
        List<String> live = new ArrayList<>();
        for (int i = 0, n = r.nextInt(60); i < n; i++) {
            String action = r.nextInt(15) == 0 ? "allocate failure"
                    : live.isEmpty() || r.nextBoolean() ? "allocate" : "free";
            String ptr = action.equals("free") ? live.remove(r.nextInt(live.size()))
                    : r.nextInt(20) == 0 ? "(nil)" : "0x" + Long.toHexString(0x7f00_0000_0000L + 256L * i);
            if (action.equals("allocate")) {
                live.add(ptr);
            }
            String time = r.nextInt(10) == 0 ? "1.000" + i : String.format(Locale.ROOT, "15:47:%02d.%06d", i % 60, i);
            rows.add(field(r, Integer.toString(1000 + r.nextInt(3))) + "," + field(r, time) + ","
                    + field(r, action) + "," + field(r, ptr) + "," + field(r, Integer.toString(256 * (1 + i))) + ","
                    + field(r, r.nextBoolean() ? "0" : "0x55d0"));
        }
        return lines(r, RmmCsvReader.HEADER, rows);
    }

    byte[] valgrind(Random r) {
        List<String> rows = new ArrayList<>();
        int allocs = 0;
        rows.add("Alloc(" + (1 + r.nextInt(100)) + "),");
        for (int n = r.nextInt(60); n > 0; n--) {
            if (r.nextBoolean()) {
                rows.add("Alloc(" + field(r, Integer.toString(r.nextInt(1 << 20))) + ")" + (r.nextInt(10) > 0 ? ","
                        : ""));
                allocs++;
            } else {
                rows.add("Free(" + field(r, Integer.toString(r.nextInt(allocs + 2))) + "),");
            }
        }
        return lines(r, null, rows);
    }

    byte[] android(Random r) {
        return lines(r, null, androidRows(r, r.nextInt(60)));
    }

    private List<String> androidRows(Random r, int n) {
        List<String> rows = new ArrayList<>();
        List<String> live = new ArrayList<>();
        rows.add("1: malloc 0x1000 16");
        for (int i = 0; i < n; i++) {
            String tid = field(r, Integer.toString(1 + r.nextInt(4)));
            String ptr = "0x" + Long.toHexString(0xb400_0000L + 64L * i);
            String verb = new String[] {"malloc", "calloc", "memalign", "realloc", "free", "thread_done"}[r.nextInt(6)];
            String args = switch (verb) {
                case "malloc" -> field(r, ptr) + " " + field(r, Integer.toString(r.nextInt(4096)));
                case "calloc" -> field(r, ptr) + " " + field(r, "4") + " " + field(r, "16");
                case "memalign" -> field(r, ptr) + " " + field(r, "64") + " " + field(r, "128");
                case "realloc" -> field(r, ptr) + " " + field(r, live.isEmpty() ? "0x0" : live.getFirst()) + " "
                        + field(r, "32");
                case "free" -> field(r, live.isEmpty() ? "0x0" : live.removeFirst());
                default -> field(r, "0x0");
            };
            if (!verb.equals("free") && !verb.equals("thread_done")) {
                live.add(ptr);
            }
            String times = r.nextBoolean() ? "" : " " + field(r, Long.toString(1_000_000L * i)) + " "
                    + field(r, Long.toString(1_000_000L * i + 5));
            rows.add(tid + ": " + field(r, verb) + " " + args + times);
        }
        return rows;
    }

    // ---- zips ----

    private record Entry(String name, byte[] data, boolean stored) {
    }

    /** One to three entries of any text format, some with names that no file has, sometimes cut or corrupted. */
    private byte[] smallZip(Random r) throws IOException {
        List<Entry> entries = new ArrayList<>();
        int n = r.nextInt(8) == 0 ? r.nextInt(4) : 1;
        for (int i = 0; i < n; i++) {
            String name = switch (r.nextInt(8)) {
                case 0 -> "e\u001b]0;owned\u0007" + i + ".txt";
                case 1 -> "../../etc/passwd" + i;
                case 2 -> "x".repeat(1 + r.nextInt(20_000)) + i;
                case 3 -> "dir" + i + "/";
                case 4 -> "\u202etxt.exe" + i;
                default -> "systemui" + i + ".txt";
            };
            byte[] data = switch (r.nextInt(6)) {
                case 0 -> pytorchCsv(r);
                case 1 -> valgrind(r);
                case 2 -> rmmCsv(r);
                default -> android(r);
            };
            entries.add(new Entry(name, name.endsWith("/") ? new byte[0] : data, r.nextInt(4) == 0));
        }
        byte[] zip = zip(entries);
        return r.nextInt(6) == 0 ? mutate(r, zip) : zip;
    }

    private static byte[] zip(List<Entry> entries) throws IOException {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        try (ZipOutputStream zip = new ZipOutputStream(bytes)) {
            for (Entry e : entries) {
                ZipEntry entry = new ZipEntry(e.name());
                if (e.stored()) {
                    CRC32 crc = new CRC32();
                    crc.update(e.data());
                    entry.setMethod(ZipEntry.STORED);
                    entry.setSize(e.data().length);
                    entry.setCompressedSize(e.data().length);
                    entry.setCrc(crc.getValue());
                }
                zip.putNextEntry(entry);
                zip.write(e.data());
                zip.closeEntry();
            }
        }
        return bytes.toByteArray();
    }

    /**
     * A zip of one entry of 8 to 40 MiB that deflates to little, written as it is made (never held whole): valid
     * lines throughout, one endless line after a valid first one, or zeros.
     */
    private static String largeZip(Random r, Path file) throws IOException {
        long size = (8L + r.nextInt(33)) << 20;
        int shape = r.nextInt(3);
        byte[] chunk = switch (shape) {
            case 0 -> bytes("7: malloc 0xb4827400 1024\n7: free 0xb4827400\n".repeat(1 << 10));
            case 1 -> repeat((byte) 'A', 1 << 16);
            default -> new byte[1 << 16];
        };
        try (OutputStream out = Files.newOutputStream(file); ZipOutputStream zip = new ZipOutputStream(out)) {
            zip.putNextEntry(new ZipEntry("big.txt"));
            zip.write(bytes("1: malloc 0x1000 16\n"));
            for (long written = 0; written < size; written += chunk.length) {
                zip.write(chunk);
            }
            zip.closeEntry();
        }
        return (size >> 20) + " MiB of " + new String[] {"valid lines", "one endless line", "zeros"}[shape];
    }

    // ---- bytes ----

    private static byte[] bytes(String s) {
        // ISO-8859-1 keeps each char below 256 as the one byte it stands for (opcodes above 0x7f).
        boolean latin = s.chars().allMatch(c -> c < 256);
        return s.getBytes(latin ? StandardCharsets.ISO_8859_1 : StandardCharsets.UTF_8);
    }

    private static byte[] repeat(byte b, int n) {
        byte[] out = new byte[n];
        Arrays.fill(out, b);
        return out;
    }

    /** The first {@code n} lines of {@code data} (all of it when it has fewer). */
    private static byte[] firstLines(byte[] data, int n) {
        int lines = 0;
        for (int i = 0; i < data.length; i++) {
            if (data[i] == '\n' && ++lines == n) {
                return Arrays.copyOf(data, i + 1);
            }
        }
        return data;
    }
}
