package io.devalloc.trace.pytorch;

import io.devalloc.trace.TraceFormatException;
import java.math.BigInteger;
import java.util.Arrays;
import java.util.List;
import java.util.Map;

/**
 * The plain values of an unpickled snapshot, checked as Python would see them: dicts, lists (tuples read as lists),
 * integers in [0, 2^64), with messages in Python's words ({@code a dict}, {@code an int}) that name the file and where
 * in the snapshot the value is. Shared by {@link PyTorchSnapshotFile} and {@link PyTorchPickleReader}.
 */
final class SnapshotValues {

    private static final BigInteger TWO_TO_64 = BigInteger.ONE.shiftLeft(64);

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

    /** A value for a message: strings quoted, at most 60 characters. */
    static String show(Object v) {
        String text = v instanceof String s ? "'" + s + "'" : v instanceof Object[] ? "a tuple"
                : v instanceof SkippedValue ? "a value that is not read" : String.valueOf(v);
        return text.length() > 60 ? text.substring(0, 60) + "..." : text;
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
