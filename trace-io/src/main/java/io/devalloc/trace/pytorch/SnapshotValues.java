package io.devalloc.trace.pytorch;

import io.devalloc.api.config.UntrustedText;
import io.devalloc.trace.TraceFormatException;
import java.math.BigInteger;
import java.util.ArrayDeque;
import java.util.Arrays;
import java.util.Iterator;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * The plain values of an unpickled snapshot, checked as Python would see them: dicts, lists (tuples read as lists),
 * integers in [0, 2^64), with messages in Python's words ({@code a dict}, {@code an int}) that name the file and where
 * in the snapshot the value is. Shared by {@link PyTorchSnapshotFile} and {@link PyTorchPickleReader}.
 */
final class SnapshotValues {

    private static final BigInteger TWO_TO_64 = BigInteger.ONE.shiftLeft(64);
    /** The most characters of a value that a message shows. */
    private static final int SHOWN = 60;
    /** Integers beyond this many bits are described by their size, not converted to decimal (quadratic in size). */
    private static final int PRINTED_BITS = 256;

    private SnapshotValues() {
    }

    static Map<?, ?> dict(String file, Object o, String what) throws TraceFormatException {
        if (o instanceof Map<?, ?> m) {
            return m;
        }
        throw new TraceFormatException(file, 0, what + ": expected a dict, got " + pythonType(o));
    }

    static List<?> list(String file, Object o, String what) throws TraceFormatException {
        if (o instanceof List<?> l) {
            return l;
        }
        if (o instanceof Object[] tuple) {
            return Arrays.asList(tuple);
        }
        throw new TraceFormatException(file, 0, what + ": expected a list, got " + pythonType(o));
    }

    static long unsigned(String file, Map<?, ?> map, String key, String where) throws TraceFormatException {
        if (!map.containsKey(key)) {
            throw new TraceFormatException(file, 0, where + ": '" + key + "' is missing");
        }
        Long v = asUnsigned(map.get(key));
        if (v == null) {
            throw new TraceFormatException(file, 0, where + ": '" + key
                    + "': expected a non-negative integer below 2^64, got " + show(map.get(key)));
        }
        return v;
    }

    static long size(String file, Map<?, ?> map, String key, String where) throws TraceFormatException {
        long v = unsigned(file, map, key, where);
        if (v < 0) {
            throw new TraceFormatException(file, 0, where + ": '" + key + "': expected a size below 2^63, got "
                    + Long.toUnsignedString(v));
        }
        return v;
    }

    static boolean isInteger(Object v) {
        return v instanceof Integer || v instanceof Long || v instanceof BigInteger || v instanceof Short
                || v instanceof Byte;
    }

    static BigInteger toBig(Object v) {
        return v instanceof BigInteger b ? b : BigInteger.valueOf(((Number) v).longValue());
    }

    /** A Python int in [0, 2^64) as an unsigned long, or null (booleans, floats, strings, out of range). */
    static Long asUnsigned(Object v) {
        if (!isInteger(v)) {
            return null;
        }
        BigInteger b = toBig(v);
        if (b.signum() < 0 || b.compareTo(TWO_TO_64) >= 0) {
            return null;
        }
        return b.longValue();
    }

    /**
     * A value for a message: strings quoted, at most {@value #SHOWN} characters, control characters escaped. The
     * work is bounded by that budget, not by the value: a pickle's memo lets a few hundred bytes describe a list
     * nested 40 deep with each level holding the one below twice (2^40 items in print), a list can hold itself, and
     * nesting can go 10^5 deep, so the value is printed item by item from an explicit stack and the printing stops
     * when the budget is spent, never by a whole {@code toString} first (exponential, or a stack overflow).
     */
    static String show(Object v) {
        if (v instanceof Object[]) {
            return "a tuple";
        }
        if (v instanceof SkippedValue) {
            return "a value that is not read";
        }
        StringBuilder out = new StringBuilder();
        if (v instanceof String s) {
            out.append('\'');
            appendBounded(out, s);
            if (out.length() < SHOWN) {
                out.append('\'');
            }
        } else {
            print(v, out);
        }
        String text = out.length() > SHOWN ? out.substring(0, SHOWN) + "..." : out.toString();
        // Only escapes control characters here: the text is already within the budget.
        return UntrustedText.excerpt(text, Math.max(1, text.length()));
    }

    /**
     * Prints {@code root} into {@code out} as Java prints collections ({@code [a, b]}, {@code {k=v}}), tuples as
     * {@code (a, b)}, until {@code out} holds more than {@value #SHOWN} characters. Each step appends at least one
     * character, so the stack of open containers never holds more than the budget.
     */
    private static void print(Object root, StringBuilder out) {
        ArrayDeque<Iterator<?>> open = new ArrayDeque<>();
        ArrayDeque<String> closers = new ArrayDeque<>();
        Object next = root;
        boolean have = true;
        while (out.length() <= SHOWN) {
            if (have) {
                have = false;
                switch (next) {
                    case Map<?, ?> m -> {
                        out.append('{');
                        open.push(m.entrySet().iterator());
                        closers.push("}");
                        continue;
                    }
                    case List<?> l -> {
                        out.append('[');
                        open.push(l.iterator());
                        closers.push("]");
                        continue;
                    }
                    case Object[] tuple -> {
                        out.append('(');
                        open.push(Arrays.asList(tuple).iterator());
                        closers.push(")");
                        continue;
                    }
                    case Map.Entry<?, ?> e -> {
                        // A key is a scalar or a tuple (the load refuses a list or dict as a key): never opened.
                        appendScalar(out, e.getKey());
                        out.append('=');
                        next = e.getValue();
                        have = true;
                        continue;
                    }
                    // None (a snapshot field that holds it) prints as a scalar does; the switch would throw on it.
                    case null, default -> appendScalar(out, next);
                }
            }
            Iterator<?> items = open.peek();
            if (items == null) {
                return;
            }
            if (items.hasNext()) {
                // The first item follows the opening bracket; each later one a separator.
                char last = out.charAt(out.length() - 1);
                if (last != '[' && last != '{' && last != '(') {
                    out.append(", ");
                }
                next = items.next();
                have = true;
            } else {
                open.pop();
                out.append(closers.pop());
            }
        }
    }

    /** A value that holds no other, bounded: a long string is cut, a big integer told by its size. */
    private static void appendScalar(StringBuilder out, Object v) {
        switch (v) {
            case String s -> appendBounded(out, s);
            case BigInteger b when b.bitLength() > PRINTED_BITS ->
                    out.append(b.signum() < 0 ? "a negative integer of " : "an integer of ")
                            .append(String.format(Locale.ROOT, "%,d", b.bitLength())).append(" bits");
            case SkippedValue _ -> out.append("a value that is not read");
            case EntryRow _ -> out.append("a trace entry");
            case null -> out.append("None");
            default -> {
                if (isInteger(v) || v instanceof Double || v instanceof Boolean) {
                    out.append(v);
                } else {
                    out.append(pythonType(v));
                }
            }
        }
    }

    /** Appends as much of {@code s} as the budget has room for (and one character more, to show it was cut). */
    private static void appendBounded(StringBuilder out, String s) {
        int room = Math.max(0, SHOWN + 1 - out.length());
        out.append(s, 0, Math.min(s.length(), room));
    }

    /** What Python calls the type of an unpickled value, for messages. */
    static String pythonType(Object o) {
        return switch (o) {
            case null -> "None";
            case Map<?, ?> _ -> "a dict";
            case EntryRow _ -> "a trace entry (a dict kept as one as it loaded)";
            case List<?> _ -> "a list";
            case Object[] _ -> "a tuple";
            case String _ -> "a str";
            case Boolean _ -> "a bool";
            case Double _ -> "a float";
            default -> isInteger(o) ? "an int" : "a value of another type";
        };
    }
}
