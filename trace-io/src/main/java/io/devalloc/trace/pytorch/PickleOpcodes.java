package io.devalloc.trace.pytorch;

import java.lang.reflect.Field;
import java.lang.reflect.Modifier;
import net.razorvine.pickle.Opcodes;

/**
 * The allow-list of pickle opcodes, each with the argument it reads after itself: the one description that the memo
 * scan ({@link MemoScan}, which skips arguments) and the load ({@link RestrictedUnpickler}, which checks declared
 * lengths against the bytes left and refuses every opcode not listed) both read, so that the scan stops exactly where
 * the load would. Tables indexed by the opcode byte, for the loops that run once per opcode.
 */
final class PickleOpcodes {

    /** Outside the allow-list: the load refuses it, the scan stops at it. */
    static final byte REFUSED = 0;
    /** Nothing after the opcode. */
    static final byte NO_ARGUMENT = 1;
    /** {@link #width} bytes. */
    static final byte FIXED = 2;
    /** A line of text through its newline (a decimal, a float or a string's repr). */
    static final byte LINE = 3;
    /** An unsigned little-endian length of {@link #width} bytes, then that many bytes. */
    static final byte LENGTH_PREFIXED = 4;

    private static final byte[] ARGUMENT = new byte[256];
    private static final byte[] WIDTH = new byte[256];
    private static final String[] NAMES = new String[256];

    static {
        allow(NO_ARGUMENT, 0, Opcodes.STOP, Opcodes.MARK, Opcodes.POP, Opcodes.POP_MARK, Opcodes.DUP,
                Opcodes.NONE, Opcodes.NEWTRUE, Opcodes.NEWFALSE,
                Opcodes.EMPTY_LIST, Opcodes.APPEND, Opcodes.APPENDS, Opcodes.LIST,
                Opcodes.EMPTY_TUPLE, Opcodes.TUPLE, Opcodes.TUPLE1, Opcodes.TUPLE2, Opcodes.TUPLE3,
                Opcodes.EMPTY_DICT, Opcodes.DICT, Opcodes.SETITEM, Opcodes.SETITEMS, Opcodes.MEMOIZE);
        allow(FIXED, 1, Opcodes.PROTO, Opcodes.BININT1, Opcodes.BINPUT, Opcodes.BINGET);
        allow(FIXED, 2, Opcodes.BININT2);
        allow(FIXED, 4, Opcodes.BININT, Opcodes.LONG_BINPUT, Opcodes.LONG_BINGET);
        // FRAME's 8 bytes are the length of the frame that follows, which is read as opcodes, not skipped.
        allow(FIXED, 8, Opcodes.BINFLOAT, Opcodes.FRAME);
        allow(LINE, 0, Opcodes.INT, Opcodes.LONG, Opcodes.FLOAT, Opcodes.STRING, Opcodes.UNICODE, Opcodes.PUT,
                Opcodes.GET);
        allow(LENGTH_PREFIXED, 1, Opcodes.SHORT_BINSTRING, Opcodes.SHORT_BINUNICODE, Opcodes.LONG1);
        allow(LENGTH_PREFIXED, 4, Opcodes.BINSTRING, Opcodes.BINUNICODE, Opcodes.LONG4);
        allow(LENGTH_PREFIXED, 8, Opcodes.BINUNICODE8);
        for (Field f : Opcodes.class.getFields()) {
            if (f.getType() == short.class && Modifier.isStatic(f.getModifiers())) {
                try {
                    short opcode = f.getShort(null);
                    if (opcode >= 0 && opcode < NAMES.length) {
                        NAMES[opcode] = f.getName();
                    }
                } catch (IllegalAccessException e) {
                    throw new ExceptionInInitializerError(e);
                }
            }
        }
    }

    private PickleOpcodes() {
    }

    private static void allow(byte argument, int width, short... opcodes) {
        for (short opcode : opcodes) {
            ARGUMENT[opcode] = argument;
            WIDTH[opcode] = (byte) width;
        }
    }

    /** What {@code opcode} (0 to 255) reads after itself: {@link #REFUSED} if it is not allowed. */
    static byte argument(int opcode) {
        return ARGUMENT[opcode];
    }

    /** The bytes of a {@link #FIXED} argument, or of a {@link #LENGTH_PREFIXED} argument's length. */
    static int width(int opcode) {
        return WIDTH[opcode];
    }

    /** The name of {@code opcode} in Python's pickle module, or null if there is no such opcode. */
    static String name(int opcode) {
        return opcode >= 0 && opcode < NAMES.length ? NAMES[opcode] : null;
    }
}
