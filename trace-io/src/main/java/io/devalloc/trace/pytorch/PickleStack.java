package io.devalloc.trace.pytorch;

import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import net.razorvine.pickle.PickleException;
import net.razorvine.pickle.UnpickleStack;

/**
 * The unpickler's stack, in place of Pyrolite's: the same operations (Pyrolite's opcodes call them), over an array
 * that {@link RestrictedUnpickler} can also look into ({@link #at(int)}), to tell where in the snapshot a list being
 * filled is; the items since a mark come back as a {@link PickleList}; and an operation on a stack without what it
 * needs fails with a message that says where in the pickle, not with an index error. Not thread-safe: one loading
 * thread.
 */
final class PickleStack extends UnpickleStack {

    private static final long serialVersionUID = 1L;
    /**
     * The values that may wait on the stack at once before the budget per byte applies. Python's pickler writes a
     * list's or dict's items in batches of 1,000, so its snapshots keep a few thousand there at the most (deep
     * nesting included); PyTorch's C++ pickler writes a list's items in one batch, but each trace entry or block is
     * tens of bytes of file. A file of 1-byte {@code NONE}s would otherwise grow the stack by 8 bytes of heap per byte.
     */
    static final int MOST_ITEMS = 1 << 18;
    /**
     * The bytes of file each value waiting beyond {@link #MOST_ITEMS} needs: a trace entry, block or frame that the
     * C++ pickler writes is a dict of several keys, 30 bytes or more.
     */
    static final int BYTES_PER_ITEM = 16;

    /** For the position in messages. */
    private final transient PickleInput in;
    private transient Object[] items = new Object[64];
    private int size;
    /** The size at which the budget is looked at again: {@link #MOST_ITEMS} plus one per byte read so far. */
    private long itemLimit = MOST_ITEMS;
    /** Where the opcode being run starts, for the refusal's message. */
    private long opcodeAt;

    PickleStack(PickleInput in) {
        this.in = in;
    }

    /** Whether {@code o} is the mark that {@link #add_mark()} pushes (Pyrolite's {@code POP_MARK} pops to it). */
    @SuppressWarnings("ReferenceEquality") // the mark is one object, told apart from every value by identity
    boolean isMark(Object o) {
        return o == MARKER;
    }

    /** Notes where the opcode about to run starts (the unpickler calls it for every opcode). */
    void opcodeAt(long at) {
        opcodeAt = at;
    }

    @Override
    public void add(Object o) {
        if (size >= itemLimit) {
            checkBudget();
        }
        if (size == items.length) {
            items = Arrays.copyOf(items, size * 2);
        }
        items[size++] = o;
    }

    /** Refuses one more value when the stack holds more than its budget by the bytes read so far. */
    private void checkBudget() {
        itemLimit = MOST_ITEMS + in.position() / BYTES_PER_ITEM;
        if (size >= itemLimit) {
            throw new RestrictedUnpickler.Refused(String.format(Locale.ROOT, "byte %d: %d values wait on the"
                    + " pickle's stack at once; a PyTorch snapshot keeps a few thousand there, or one per tens of bytes"
                    + " (this reader allows %d, and one per %d bytes of file after them), so the file is built to fill"
                    + " memory", opcodeAt, size, MOST_ITEMS, BYTES_PER_ITEM));
        }
    }

    @Override
    public void add_mark() {
        add(MARKER);
    }

    @Override
    public Object pop() {
        if (size == 0) {
            throw empty();
        }
        Object o = items[--size];
        items[size] = null;
        return o;
    }

    @Override
    public List<Object> pop_all_since_marker() {
        int mark = size - 1;
        while (mark >= 0 && !isMark(items[mark])) {
            mark--;
        }
        if (mark < 0) {
            throw new PickleException("byte " + (in.position() - 1) + ": an opcode that takes the items since a MARK"
                    + " finds no MARK");
        }
        PickleList since = new PickleList(Arrays.asList(items).subList(mark + 1, size));
        Arrays.fill(items, mark, size, null);
        size = mark;
        return since;
    }

    @Override
    public Object peek() {
        if (size == 0) {
            throw empty();
        }
        return items[size - 1];
    }

    /** The item {@code index} places from the bottom (0 is the first pushed). */
    Object at(int index) {
        return items[index];
    }

    @Override
    public void trim() {
        // Nothing to release: the array keeps its capacity, as Pyrolite's list does.
    }

    @Override
    public int size() {
        return size;
    }

    @Override
    public void clear() {
        Arrays.fill(items, 0, size, null);
        size = 0;
    }

    private PickleException empty() {
        return new PickleException("byte " + (in.position() - 1) + ": an opcode takes a value from an empty stack");
    }
}
