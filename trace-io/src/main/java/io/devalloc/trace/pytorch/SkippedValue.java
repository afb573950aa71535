package io.devalloc.trace.pytorch;

/**
 * What {@link RestrictedUnpickler#load(byte[], java.util.Set)} stores in place of the value of a dict entry under a
 * skipped key (the snapshot reader's {@code frames}): not the value, which is garbage as soon as the entry is
 * built, but which object of the pickle it was. PyTorch's {@code py_symbolize} gives every trace entry recorded by
 * one allocator call (one {@code CapturedTraceback}) the same Python list of frames, which the pickler writes once
 * and reads again through the memo; so trace entries whose skipped frames have one identity share one traceback.
 *
 * <p>Identity is tracked for lists only, which is what {@code frames} holds: a list memoized in the pickle
 * ({@code PUT}, {@code BINPUT}, {@code LONG_BINPUT}, {@code MEMOIZE}) and read again ({@code GET}, {@code BINGET},
 * {@code LONG_BINGET}) has one identity wherever it is skipped. Any other non-empty list (not memoized, or memoized
 * but never read again) has an identity of its own. An empty list, or a value that is not a list, has none
 * ({@link #NONE}): it tells nothing of which call recorded the entry. Identities are numbers of one load, from 0
 * up; they mean nothing across loads.
 *
 * <p>Two skipped values are {@link #equals(Object) equal} exactly when their identities are; the load gives the
 * entries of one shared list the same instance.
 *
 * @param identity equal for two skipped values of one load exactly when they were the same list of the pickle
 */
record SkippedValue(long identity) {

    /** The {@link #identity()} of a skipped value that has none: an empty list, or a value that is not a list. */
    static final long NO_IDENTITY = -1;
    /** The skipped value of an empty list or of a value that is not a list. */
    static final SkippedValue NONE = new SkippedValue(NO_IDENTITY);

    /** Names nothing of Java, for messages about a value that was skipped where data was expected. */
    @Override
    public String toString() {
        return "a skipped value";
    }
}
