package io.devalloc.trace.text;

import io.devalloc.api.spi.PythonTuple;
import io.devalloc.trace.text.SnapshotTreeVisitor.Container;
import java.io.IOException;
import java.math.BigInteger;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.RandomAccess;

/**
 * Walks a snapshot value tree depth-first for a {@link SnapshotTreeVisitor}: the one place that says which Java
 * types a snapshot holds ({@code null}, {@link Boolean}, {@link Byte}, {@link Short}, {@link Integer}, {@link Long},
 * {@link BigInteger}, {@link Double}, {@link Float}, {@link String}, {@link List}, {@code Object[]}, {@code long[]},
 * {@code int[]}, {@code double[]}, {@link PythonTuple}, {@link Map} with {@link String} keys), so that the pickle and
 * the JSON writer accept and reject the same trees with the same paths. Recursive, one level per container: nesting
 * deeper than {@link #MAX_DEPTH} is rejected (a cycle would be infinite). Internal to trace-io's writers (this package
 * is exported only to the replay and the advisor).
 */
public final class SnapshotTreeWalker {

    /** The deepest nesting of containers walked. */
    public static final int MAX_DEPTH = 500;

    private SnapshotTreeWalker() {
    }

    /**
     * Walks {@code root}, calling {@code visitor} at each node.
     *
     * @param refusal how the message of a rejected tree starts, e.g. {@code "cannot pickle"}
     * @throws IllegalArgumentException for an unsupported type, a non-{@code String} map key, nesting deeper than
     *     {@link #MAX_DEPTH} or a value the visitor rejects: {@code refusal}, the problem and the path, e.g.
     *     {@code $.segments[0].blocks[3].state}
     * @throws IOException if the visitor's output fails
     */
    public static void walk(Object root, SnapshotTreeVisitor visitor, String refusal) throws IOException {
        try {
            value(root, 0, visitor);
        } catch (UnwritableValueException e) {
            throw e.toIllegalArgument(refusal);
        }
    }

    private static void value(Object value, int depth, SnapshotTreeVisitor visitor) throws IOException {
        switch (value) {
            case null -> visitor.nullValue();
            case String s -> visitor.string(s);
            case Boolean b -> visitor.bool(b);
            case Integer i -> visitor.integer(i);
            case Long l -> visitor.integer(l);
            case Short s -> visitor.integer(s);
            case Byte b -> visitor.integer(b);
            case BigInteger big -> visitor.bigInteger(big);
            case Double d -> visitor.float64(d);
            case Float f -> visitor.float32(f);
            case Map<?, ?> map -> map(map, depth + 1, visitor);
            case List<?> list -> list(list, list, depth + 1, visitor);
            case PythonTuple tuple -> tuple(tuple.items(), depth + 1, visitor);
            case Object[] array -> list(array, Arrays.asList(array), depth + 1, visitor);
            case long[] array -> sequence(array, array.length, depth + 1, visitor, i -> visitor.integer(array[i]));
            case int[] array -> sequence(array, array.length, depth + 1, visitor, i -> visitor.integer(array[i]));
            case double[] array -> sequence(array, array.length, depth + 1, visitor, i -> visitor.float64(array[i]));
            default -> throw new UnwritableValueException("unsupported type " + value.getClass().getName());
        }
    }

    private static void checkDepth(int depth) {
        if (depth > MAX_DEPTH) {
            throw new UnwritableValueException("containers nested deeper than " + MAX_DEPTH + " levels (a cycle?)");
        }
    }

    /** A list, or an {@code Object[]} as {@code container} seen through {@code list}. */
    private static void list(Object container, List<?> list, int depth, SnapshotTreeVisitor visitor)
            throws IOException {
        if (visitor.reference(container)) {
            return;
        }
        checkDepth(depth);
        List<?> indexed = list instanceof RandomAccess ? list : new ArrayList<>(list);
        Element element = i -> value(indexed.get(i), depth, visitor);
        elements(Container.LIST, container, indexed.size(), depth, visitor, element);
    }

    /** A primitive array. */
    private static void sequence(Object array, int size, int depth, SnapshotTreeVisitor visitor, Element element)
            throws IOException {
        if (visitor.reference(array)) {
            return;
        }
        checkDepth(depth);
        elements(Container.LIST, array, size, depth, visitor, element);
    }

    private static void tuple(List<Object> items, int depth, SnapshotTreeVisitor visitor) throws IOException {
        checkDepth(depth);
        elements(Container.TUPLE, items, items.size(), depth, visitor, i -> value(items.get(i), depth, visitor));
    }

    /** A list, an array or a tuple: its elements, each written by {@code element}. */
    private static void elements(Container kind, Object container, int size, int depth, SnapshotTreeVisitor visitor,
            Element element) throws IOException {
        visitor.start(kind, container, size);
        for (int i = 0; i < size; i++) {
            visitor.item(kind, i, size, depth);
            element(element, i);
        }
        visitor.end(kind, container, size, depth);
    }

    private static void element(Element element, int index) throws IOException {
        try {
            element.write(index);
        } catch (UnwritableValueException e) {
            throw e.at("[" + index + "]");
        }
    }

    private static void map(Map<?, ?> map, int depth, SnapshotTreeVisitor visitor) throws IOException {
        if (visitor.reference(map)) {
            return;
        }
        checkDepth(depth);
        int size = map.size();
        visitor.start(Container.MAP, map, size);
        int index = 0;
        for (Map.Entry<?, ?> entry : map.entrySet()) {
            if (!(entry.getKey() instanceof String key)) {
                Object k = entry.getKey();
                throw new UnwritableValueException("map key " + (k == null ? "null" : "of type "
                        + k.getClass().getName() + " (" + k + ")") + "; only String keys are supported");
            }
            visitor.item(Container.MAP, index++, size, depth);
            visitor.mapKey(key);
            try {
                value(entry.getValue(), depth, visitor);
            } catch (UnwritableValueException e) {
                throw e.at(UnwritableValueException.keySegment(key));
            }
        }
        visitor.end(Container.MAP, map, size, depth);
    }

    /** Writes the element at an index of the list, tuple or array being walked. */
    @FunctionalInterface
    private interface Element {
        void write(int index) throws IOException;
    }
}
