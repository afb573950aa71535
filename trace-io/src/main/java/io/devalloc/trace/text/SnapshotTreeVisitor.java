package io.devalloc.trace.text;

import io.devalloc.api.spi.PythonTuple;
import java.io.IOException;
import java.math.BigInteger;

/**
 * What a writer of snapshot value trees (maps, lists, tuples, arrays, strings, numbers, booleans and {@code null})
 * does at each node that {@link SnapshotTreeWalker} meets, in document order. The walker decides what a Java value
 * is, checks the nesting depth and map keys, and builds the path of a value a visitor rejects; the visitor only
 * writes. A visitor rejects a value by throwing {@link UnwritableValueException}. Internal to trace-io's writers (this
 * package is exported only to the replay and the advisor).
 *
 * <p>A list, {@code Object[]}, {@code long[]}, {@code int[]} or {@code double[]} ({@link Container#LIST}), a
 * {@link PythonTuple} ({@link Container#TUPLE}) or a map ({@link Container#MAP}) is {@link #start start}, then per
 * item {@link #item item} (and for a map entry {@link #mapKey mapKey}) and the item's value, then {@link #end end}.
 */
public interface SnapshotTreeVisitor {

    void nullValue() throws IOException;

    void bool(boolean value) throws IOException;

    /** A {@link Byte}, {@link Short}, {@link Integer} or {@link Long}, or an element of a {@code long[]}/int[]. */
    void integer(long value) throws IOException;

    /** A {@link BigInteger} of any size. */
    void bigInteger(BigInteger value) throws IOException;

    /** A {@link Double}, or an element of a {@code double[]}. */
    void float64(double value) throws IOException;

    /** A {@link Float}, kept apart from {@link #float64} because its shortest decimal form is its own. */
    void float32(float value) throws IOException;

    void string(String value) throws IOException;

    /**
     * Met a list, map or array (not a tuple: a tuple's identity means nothing), before its depth is checked: true if
     * the visitor wrote it as a reference to an earlier occurrence, so its items are not walked again.
     */
    default boolean reference(Object container) throws IOException {
        return false;
    }

    /** What a container is written as. */
    enum Container {
        /** A list or an array. */
        LIST,
        /** A {@link PythonTuple}. */
        TUPLE,
        /** A map with {@link String} keys. */
        MAP
    }

    /**
     * A container of {@code size} items: {@code container} is the list, the array, the tuple's items or the map
     * itself.
     */
    void start(Container kind, Object container, int size) throws IOException;

    /**
     * Before item {@code index} of the container being written, {@code depth} containers deep (the outermost is 1);
     * a map entry's key has been checked.
     */
    void item(Container kind, int index, int size, int depth) throws IOException;

    /** The key of the map entry whose {@link #item item} came last; its value follows. */
    void mapKey(String key) throws IOException;

    /** After the items of the container {@code depth} containers deep. */
    void end(Container kind, Object container, int size, int depth) throws IOException;
}
