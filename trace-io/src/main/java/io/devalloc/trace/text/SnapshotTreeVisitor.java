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
 * <p>A list, {@code Object[]}, {@code long[]}, {@code int[]} or {@code double[]} is
 * {@link #startList startList}, {@link #listItem listItem} before each element, {@link #endList endList}; a
 * {@link PythonTuple} is the same with the tuple methods; a map is {@link #startMap startMap}, then per entry
 * {@link #mapEntry mapEntry}, {@link #mapKey mapKey} and the value, then {@link #endMap endMap}.
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

    /** A list or array of {@code size} elements; {@code container} is the list or the array itself. */
    void startList(Object container, int size) throws IOException;

    /** Before element {@code index} of the list or array being written. */
    void listItem(int index, int size) throws IOException;

    void endList(Object container, int size) throws IOException;

    void startTuple(int size) throws IOException;

    /** Before item {@code index} of the tuple being written. */
    void tupleItem(int index, int size) throws IOException;

    void endTuple(int size) throws IOException;

    void startMap(Object map, int size) throws IOException;

    /** Before entry {@code index} of the map being written, before its key is checked. */
    void mapEntry(int index, int size) throws IOException;

    /** The key of entry {@code index}, known to be a {@link String}; its value follows. */
    void mapKey(int index, String key) throws IOException;

    void endMap(Object map, int size) throws IOException;
}
