package io.devalloc.trace.pytorch;

import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;

/**
 * A pickle built opcode by opcode (protocol 4), for the tests that need byte sequences no pickler writes: memo
 * sharing, bombs, floods, malformed opcodes. Not thread-safe.
 */
final class PickleBytes {

    private static final int EMPTY_DICT = '}';
    private static final int EMPTY_LIST = ']';
    private static final int MARK = '(';
    private static final int POP = '0';
    private static final int APPENDS = 'e';
    private static final int SETITEMS = 'u';
    private static final int BINGET = 'h';
    private static final int BINPUT = 'q';

    private final ByteArrayOutputStream out = new ByteArrayOutputStream();

    PickleBytes() {
        op(0x80, 4); // PROTO 4
    }

    PickleBytes op(int... bytes) {
        for (int b : bytes) {
            out.write(b);
        }
        return this;
    }

    PickleBytes raw(byte[] bytes) {
        out.writeBytes(bytes);
        return this;
    }

    /** SHORT_BINUNICODE. */
    PickleBytes str(String s) {
        byte[] b = s.getBytes(StandardCharsets.UTF_8);
        return op(0x8c, b.length).raw(b);
    }

    /** BINUNICODE (four-byte length). */
    PickleBytes longStr(String s) {
        byte[] b = s.getBytes(StandardCharsets.UTF_8);
        return op(0x58, b.length & 0xff, (b.length >>> 8) & 0xff, (b.length >>> 16) & 0xff, b.length >>> 24).raw(b);
    }

    /** Pushes memo key {@code key}'s object {@code times} times (2 bytes each). */
    PickleBytes get(int key, int times) {
        for (int i = 0; i < times; i++) {
            op(BINGET, key);
        }
        return this;
    }

    /** {@code L0 = []; L(i) = [L(i-1), L(i-1)]} through the memo (keys base to base + depth). */
    PickleBytes doublingLists(int base, int depth) {
        op(EMPTY_LIST, BINPUT, base, POP);
        for (int i = base + 1; i <= base + depth; i++) {
            op(EMPTY_LIST, MARK).get(i - 1, 2).op(APPENDS, BINPUT, i, POP);
        }
        return this;
    }

    /** {@code D0 = {}; D(i) = {'a': D(i-1), 'b': D(i-1)}} through the memo (keys 0 to depth). */
    PickleBytes doublingDicts(int depth) {
        op(EMPTY_DICT, BINPUT, 0, POP);
        for (int i = 1; i <= depth; i++) {
            op(EMPTY_DICT, MARK).str("a").get(i - 1, 1).str("b").get(i - 1, 1).op(SETITEMS, BINPUT, i, POP);
        }
        return this;
    }

    /** The bytes so far, without a STOP. */
    byte[] bytes() {
        return out.toByteArray();
    }

    /** The bytes with a STOP. */
    byte[] stop() {
        op('.');
        return bytes();
    }
}
