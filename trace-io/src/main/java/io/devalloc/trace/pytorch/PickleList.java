package io.devalloc.trace.pytorch;

import java.util.ArrayList;
import java.util.Collection;

/**
 * A list of an unpickled snapshot: an {@link ArrayList} that also remembers what the unpickler learnt of it while
 * loading ({@link RestrictedUnpickler}): whether anything but its container can reach it ({@link #shared()}: it was
 * kept in the memo for a later read, or duplicated on the stack), and, for a list the memo keeps, the
 * {@link SkippedValue} that stands for it wherever it is the value of a skipped key (one identity for all of them,
 * without a table from lists to identities). Equal to any list with equal items, as every list. Not thread-safe:
 * built by the loading thread, read after.
 */
final class PickleList extends ArrayList<Object> {

    private static final long serialVersionUID = 1L;

    /** What stands for this list under a skipped key, once it has one; null before. */
    private transient SkippedValue skipped;
    /** Whether something other than its container may reach it. */
    private transient boolean shared;

    PickleList() {
    }

    PickleList(Collection<?> items) {
        super(items);
    }

    /** Whether something other than its container may reach it: the memo kept it, or it was duplicated. */
    boolean shared() {
        return shared;
    }

    /** Notes that something other than its container may reach it. */
    void share() {
        shared = true;
    }

    /** What stands for it under a skipped key, once given; null before. */
    SkippedValue skipped() {
        return skipped;
    }

    /** Gives it what stands for it under a skipped key (once). */
    void skipAs(SkippedValue value) {
        skipped = value;
    }

    // equals and hashCode are ArrayList's: the fields above are the loader's notes, not the list's value.
    @Override
    public boolean equals(Object o) {
        return super.equals(o);
    }

    @Override
    public int hashCode() {
        return super.hashCode();
    }
}
