package io.devalloc.trace.pytorch;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.lang.reflect.Field;
import java.lang.reflect.Modifier;
import java.util.HashMap;
import java.util.Map;
import net.razorvine.pickle.Opcodes;
import net.razorvine.pickle.PickleException;
import net.razorvine.pickle.Unpickler;

/**
 * Pyrolite's unpickler behind an allow-list of opcodes: only those that build {@code None}, booleans, integers,
 * floats, strings, lists, tuples and dicts (and the stack, mark, memo and framing opcodes that assemble them) run.
 * Every opcode that names a global ({@code GLOBAL}, {@code STACK_GLOBAL}, {@code INST}), calls or constructs
 * ({@code REDUCE}, {@code BUILD}, {@code OBJ}, {@code NEWOBJ}, {@code NEWOBJ_EX}, {@code EXT1/2/4}), looks up a
 * persistent id or an out-of-band buffer, or makes bytes or sets is refused before Pyrolite sees it, so a hostile
 * file cannot reach any class or function: none of Pyrolite's registered constructors is ever called.
 *
 * <p>The whole pickle is in memory (a pickle is one object graph and cannot be streamed), so every length that an
 * opcode declares is checked against the bytes left before anything is allocated for it.
 */
final class RestrictedUnpickler extends Unpickler {

    /** Raised for a refused or impossible opcode; the message says which and where. */
    static final class Refused extends PickleException {
        private static final long serialVersionUID = 1L;

        Refused(String message) {
            super(message);
        }
    }

    private static final boolean[] ALLOWED = new boolean[256];
    private static final Map<Integer, String> NAMES = new HashMap<>();

    static {
        short[] allowed = {
            Opcodes.PROTO, Opcodes.FRAME, Opcodes.STOP, Opcodes.MARK, Opcodes.POP, Opcodes.POP_MARK, Opcodes.DUP,
            Opcodes.NONE, Opcodes.NEWTRUE, Opcodes.NEWFALSE,
            Opcodes.INT, Opcodes.BININT, Opcodes.BININT1, Opcodes.BININT2, Opcodes.LONG, Opcodes.LONG1, Opcodes.LONG4,
            Opcodes.FLOAT, Opcodes.BINFLOAT,
            Opcodes.STRING, Opcodes.BINSTRING, Opcodes.SHORT_BINSTRING,
            Opcodes.UNICODE, Opcodes.BINUNICODE, Opcodes.SHORT_BINUNICODE, Opcodes.BINUNICODE8,
            Opcodes.EMPTY_LIST, Opcodes.APPEND, Opcodes.APPENDS, Opcodes.LIST,
            Opcodes.EMPTY_TUPLE, Opcodes.TUPLE, Opcodes.TUPLE1, Opcodes.TUPLE2, Opcodes.TUPLE3,
            Opcodes.EMPTY_DICT, Opcodes.DICT, Opcodes.SETITEM, Opcodes.SETITEMS,
            Opcodes.GET, Opcodes.BINGET, Opcodes.LONG_BINGET, Opcodes.PUT, Opcodes.BINPUT, Opcodes.LONG_BINPUT,
            Opcodes.MEMOIZE,
        };
        for (short op : allowed) {
            ALLOWED[op] = true;
        }
        for (Field f : Opcodes.class.getFields()) {
            if (f.getType() == short.class && Modifier.isStatic(f.getModifiers())) {
                try {
                    NAMES.put((int) f.getShort(null), f.getName());
                } catch (IllegalAccessException e) {
                    throw new ExceptionInInitializerError(e);
                }
            }
        }
    }

    /** The pickle's bytes, with the read position visible. */
    private static final class Bytes extends ByteArrayInputStream {
        Bytes(byte[] data) {
            super(data);
        }

        int position() {
            return pos;
        }

        int remaining() {
            return count - pos;
        }

        int peek(int offset) {
            return buf[pos + offset] & 0xff;
        }
    }

    private final Bytes bytes;

    private RestrictedUnpickler(Bytes bytes) {
        this.bytes = bytes;
    }

    /**
     * Unpickles plain data.
     *
     * @throws Refused        for an opcode outside the allow-list, or a length beyond the end of the data
     * @throws PickleException for any other malformed pickle (Pyrolite's own checks)
     * @throws IOException    when the data ends early
     */
    static Object load(byte[] data) throws IOException {
        Bytes in = new Bytes(data);
        RestrictedUnpickler u = new RestrictedUnpickler(in);
        try {
            return u.load(in);
        } finally {
            u.close();
        }
    }

    @Override
    protected Object dispatch(short key) throws PickleException, IOException {
        int at = bytes.position() - 1;
        if (key < 0 || key > 255 || !ALLOWED[key]) {
            String name = NAMES.get((int) key);
            if (name == null) {
                throw new Refused("byte " + at + ": unknown pickle opcode 0x" + Integer.toHexString(key));
            }
            throw new Refused("byte " + at + ": refused pickle opcode " + name + global(key)
                    + ": a PyTorch snapshot holds only dicts, lists, tuples, strings, numbers, booleans and None,"
                    + " and this reader constructs no class and calls no function");
        }
        long declared = declaredLength(key);
        if (declared > bytes.remaining()) {
            throw new Refused("byte " + at + ": " + NAMES.get((int) key) + " declares " + declared
                    + " bytes but only " + bytes.remaining() + " are left");
        }
        return super.dispatch(key);
    }

    /** The bytes that a length-prefixed opcode reads after itself (its prefix included), or 0 for the others. */
    private long declaredLength(short key) {
        return switch (key) {
            case Opcodes.BINSTRING, Opcodes.BINUNICODE, Opcodes.LONG4 -> prefixed(4);
            case Opcodes.BINUNICODE8 -> prefixed(8);
            case Opcodes.SHORT_BINSTRING, Opcodes.SHORT_BINUNICODE, Opcodes.LONG1 -> prefixed(1);
            // FRAME's length only announces what follows; it reads its 8-byte prefix and nothing more.
            case Opcodes.FRAME -> 8;
            default -> 0;
        };
    }

    /** The little-endian length after the opcode plus the prefix's own width; beyond any data when impossible. */
    private long prefixed(int width) {
        if (bytes.remaining() < width) {
            return Long.MAX_VALUE;
        }
        long length = 0;
        for (int i = width - 1; i >= 0; i--) {
            length = (length << 8) | bytes.peek(i);
        }
        if (length < 0 || (width == 4 && length > Integer.MAX_VALUE)) {
            return Long.MAX_VALUE;
        }
        return width + length;
    }

    /** For GLOBAL, INST and STACK_GLOBAL, the {@code module.name} they would have looked up, for the message. */
    private String global(short key) {
        String module = null;
        String name = null;
        if (key == Opcodes.GLOBAL || key == Opcodes.INST) {
            module = line();
            name = line();
        } else if (key == Opcodes.STACK_GLOBAL && stack.size() >= 2) {
            Object n = stack.pop();
            Object m = stack.pop();
            module = m instanceof String text ? text : null;
            name = n instanceof String text ? text : null;
        }
        return module == null || name == null ? "" : " (" + module + "." + name + ")";
    }

    /** A short text line from the data (at most 200 bytes), or null. */
    private String line() {
        StringBuilder sb = new StringBuilder();
        for (int i = 0; i < 200; i++) {
            int c = bytes.read();
            if (c < 0) {
                return null;
            }
            if (c == '\n') {
                return sb.toString();
            }
            sb.append((char) c);
        }
        return null;
    }
}
