package io.devalloc.api.spi;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;

/**
 * A Python {@code tuple} in a snapshot's value tree (a {@code _snapshot()} dict): written as a tuple in a
 * pickle (so that Python sees {@code (0, 0)}, and code such as {@code seg['segment_pool_id'] == (0, 0)} holds), as
 * an array in JSON (which has no tuples). PyTorch's snapshot has two: {@code segment_pool_id} and a trace entry's
 * {@code pool_id}, each {@code (0, 0)} for the default pools.
 *
 * <p>Immutable, as a Python tuple: the items are copied. They may be any value the writers take, {@code null}
 * ({@code None}) included.
 *
 * @param items the items, in order
 */
public record PythonTuple(List<Object> items) {

    public PythonTuple {
        items = Collections.unmodifiableList(new ArrayList<>(items)); // List.copyOf would refuse None
    }

    /** A tuple of the given items. */
    public static PythonTuple of(Object... items) {
        return new PythonTuple(Arrays.asList(items));
    }

    /** {@code (0, 0)}: PyTorch's {@code segment_pool_id} (and a trace entry's {@code pool_id}) of the default pools. */
    public static final PythonTuple DEFAULT_POOL_ID = PythonTuple.of(0L, 0L);

    /** The number of items. */
    public int size() {
        return items.size();
    }
}
