package io.devalloc.api.internal;

import java.util.Arrays;

/**
 * A sorted set of {@code int} handles, each under a unique key of one to three {@code long}s compared in order as
 * signed numbers (the way {@code std::set} with a lexicographic comparator orders PyTorch's and TensorFlow's free
 * blocks): insert, remove, find, lower bound and the step to the next or previous element in O(log n), with no
 * object created per operation.
 *
 * <p>A red-black tree (CLRS's, with parent links and a sentinel) over primitive arrays: node {@code n}'s key is
 * {@code keys[n·arity ..]}, its links are {@code left[n]}, {@code right[n]}, {@code parent[n]}. Nodes are
 * {@code int}s that stay valid until their element is removed, so callers walk the set with {@link #next(int)}
 * and remove the element they stand on without searching again. Removed nodes go on a free list and are reused;
 * the arrays double when full, so the steady state allocates nothing. The key is copied into the node at insert:
 * an owner must remove an element before the fields its key is made of change, and insert it again after.
 *
 * <p>With {@code weighted}, every node also carries a {@code long} weight and the maximum weight of its subtree,
 * so that the next element (in key order) whose weight is at least a bound is found in O(log n) too: a free-range
 * map keyed by address and weighted by length finds the highest range that is long enough without looking at the
 * ranges that are not.
 *
 * <p>Not thread-safe: owners guard it with their own lock.
 */
public final class OrderedHandleSet {

    /** What the node-returning methods return for "no such element". Never a node of an element. */
    public static final int NO_NODE = 0;

    /** The sentinel: every leaf link and the root's parent; black, with no weight. */
    private static final int NIL = 0;
    /** {@code parent} of a node on the free list, to reject removing it twice. */
    private static final int FREED = -1;

    private final int arity;
    private final boolean weighted;
    private long[] keys;
    private int[] handles;
    private int[] left;
    private int[] right;
    private int[] parent;
    private boolean[] red;
    private long[] weights;
    private long[] maxWeights;
    private int root = NIL;
    private int size;
    /** Nodes {@code 1..used-1} have been handed out at least once. */
    private int used = 1;
    /** Removed nodes, linked through {@code right}. */
    private int freeNodes = NIL;

    /**
     * @param arity how many {@code long}s make a key (1 to 3); further key arguments are ignored
     * @param weighted whether nodes carry a weight searchable with {@link #lastWithWeightAtLeast(long)} and kin
     * @param initialCapacity elements to size for before the first growth
     */
    public OrderedHandleSet(int arity, boolean weighted, int initialCapacity) {
        if (arity < 1 || arity > 3) {
            throw new IllegalArgumentException("a key has 1 to 3 longs, got " + arity);
        }
        if (initialCapacity < 0) {
            throw new IllegalArgumentException("initial capacity must be >= 0, got " + initialCapacity);
        }
        this.arity = arity;
        this.weighted = weighted;
        int nodes = Math.max(8, initialCapacity + 1);
        keys = new long[nodes * arity];
        handles = new int[nodes];
        left = new int[nodes];
        right = new int[nodes];
        parent = new int[nodes];
        red = new boolean[nodes];
        if (weighted) {
            weights = new long[nodes];
            maxWeights = new long[nodes];
            maxWeights[NIL] = Long.MIN_VALUE;
        }
    }

    /** Number of elements. */
    public int size() {
        return size;
    }

    public boolean isEmpty() {
        return size == 0;
    }

    /** The handle stored at {@code node}. */
    public int handle(int node) {
        return handles[node];
    }

    /** Long {@code i} (0-based, below the arity) of {@code node}'s key. */
    public long key(int node, int i) {
        return keys[node * arity + i];
    }

    /** The weight of {@code node} (0 in an unweighted set). */
    public long weight(int node) {
        return weighted ? weights[node] : 0;
    }

    // ------------------------------------------------------------------------------------------------ queries

    /** Sign of (key of {@code node}) − (k0, k1, k2), over the first {@code arity} longs. */
    private int compare(int node, long k0, long k1, long k2) {
        int base = node * arity;
        long x = keys[base];
        if (x != k0) {
            return x < k0 ? -1 : 1;
        }
        if (arity == 1) {
            return 0;
        }
        x = keys[base + 1];
        if (x != k1) {
            return x < k1 ? -1 : 1;
        }
        if (arity == 2) {
            return 0;
        }
        x = keys[base + 2];
        return x == k2 ? 0 : x < k2 ? -1 : 1;
    }

    /** The node whose key is (k0, k1, k2), or {@link #NO_NODE}. */
    public int find(long k0, long k1, long k2) {
        int x = root;
        while (x != NIL) {
            int c = compare(x, k0, k1, k2);
            if (c == 0) {
                return x;
            }
            x = c > 0 ? left[x] : right[x];
        }
        return NO_NODE;
    }

    /** The first node whose key is at or after (k0, k1, k2), or {@link #NO_NODE}. */
    public int lowerBound(long k0, long k1, long k2) {
        int x = root;
        int found = NIL;
        while (x != NIL) {
            if (compare(x, k0, k1, k2) >= 0) {
                found = x;
                x = left[x];
            } else {
                x = right[x];
            }
        }
        return found;
    }

    /** The node of the smallest key, or {@link #NO_NODE}. */
    public int first() {
        return root == NIL ? NO_NODE : minimum(root);
    }

    /** The node of the largest key, or {@link #NO_NODE}. */
    public int last() {
        return root == NIL ? NO_NODE : maximum(root);
    }

    /** The node after {@code node} in key order, or {@link #NO_NODE}. */
    public int next(int node) {
        int x = node;
        if (right[x] != NIL) {
            return minimum(right[x]);
        }
        int p = parent[x];
        while (p != NIL && x == right[p]) {
            x = p;
            p = parent[p];
        }
        return p;
    }

    /** The node before {@code node} in key order, or {@link #NO_NODE}. */
    public int prev(int node) {
        int x = node;
        if (left[x] != NIL) {
            return maximum(left[x]);
        }
        int p = parent[x];
        while (p != NIL && x == left[p]) {
            x = p;
            p = parent[p];
        }
        return p;
    }

    private int minimum(int x) {
        while (left[x] != NIL) {
            x = left[x];
        }
        return x;
    }

    private int maximum(int x) {
        while (right[x] != NIL) {
            x = right[x];
        }
        return x;
    }

    // ------------------------------------------------------------------------------------------- weighted search

    /** The last node (in key order) whose weight is at least {@code min}, or {@link #NO_NODE}. */
    public int lastWithWeightAtLeast(long min) {
        requireWeighted();
        return lastInSubtree(root, min);
    }

    /** The last node before {@code node} whose weight is at least {@code min}, or {@link #NO_NODE}. */
    public int prevWithWeightAtLeast(int node, long min) {
        requireWeighted();
        if (maxWeights[left[node]] >= min) {
            return lastInSubtree(left[node], min);
        }
        int x = node;
        for (int p = parent[x]; p != NIL; x = p, p = parent[p]) {
            if (x == right[p]) {
                if (weights[p] >= min) {
                    return p;
                }
                if (maxWeights[left[p]] >= min) {
                    return lastInSubtree(left[p], min);
                }
            }
        }
        return NO_NODE;
    }

    /** The first node (in key order) whose weight is at least {@code min}, or {@link #NO_NODE}. */
    public int firstWithWeightAtLeast(long min) {
        requireWeighted();
        return firstInSubtree(root, min);
    }

    /** The first node after {@code node} whose weight is at least {@code min}, or {@link #NO_NODE}. */
    public int nextWithWeightAtLeast(int node, long min) {
        requireWeighted();
        if (maxWeights[right[node]] >= min) {
            return firstInSubtree(right[node], min);
        }
        int x = node;
        for (int p = parent[x]; p != NIL; x = p, p = parent[p]) {
            if (x == left[p]) {
                if (weights[p] >= min) {
                    return p;
                }
                if (maxWeights[right[p]] >= min) {
                    return firstInSubtree(right[p], min);
                }
            }
        }
        return NO_NODE;
    }

    private int lastInSubtree(int x, long min) {
        if (x == NIL || maxWeights[x] < min) {
            return NO_NODE;
        }
        while (true) {
            if (maxWeights[right[x]] >= min) {
                x = right[x];
            } else if (weights[x] >= min) {
                return x;
            } else {
                x = left[x];
            }
        }
    }

    private int firstInSubtree(int x, long min) {
        if (x == NIL || maxWeights[x] < min) {
            return NO_NODE;
        }
        while (true) {
            if (maxWeights[left[x]] >= min) {
                x = left[x];
            } else if (weights[x] >= min) {
                return x;
            } else {
                x = right[x];
            }
        }
    }

    private void requireWeighted() {
        if (!weighted) {
            throw new IllegalStateException("this set has no weights; create it with weighted = true");
        }
    }

    // --------------------------------------------------------------------------------------------- changes

    /**
     * Adds {@code handle} under key (k0, k1, k2).
     *
     * @return its node
     * @throws IllegalStateException if the key is already present (the set is unchanged)
     */
    public int insert(long k0, long k1, long k2, int handle) {
        return insert(k0, k1, k2, handle, 0);
    }

    /**
     * Adds {@code handle} under key (k0, k1, k2) with {@code weight} (ignored in an unweighted set).
     *
     * @return its node
     * @throws IllegalStateException if the key is already present (the set is unchanged)
     */
    public int insert(long k0, long k1, long k2, int handle, long weight) {
        int y = NIL;
        int x = root;
        int c = 0;
        while (x != NIL) {
            y = x;
            c = compare(x, k0, k1, k2);
            if (c == 0) {
                throw new IllegalStateException("key (" + k0 + (arity > 1 ? ", " + k1 : "")
                        + (arity > 2 ? ", " + k2 : "") + ") is already in the set, with handle " + handles[x]);
            }
            x = c > 0 ? left[x] : right[x];
        }
        int z = newNode();
        int base = z * arity;
        keys[base] = k0;
        if (arity > 1) {
            keys[base + 1] = k1;
        }
        if (arity > 2) {
            keys[base + 2] = k2;
        }
        handles[z] = handle;
        parent[z] = y;
        left[z] = NIL;
        right[z] = NIL;
        red[z] = true;
        if (y == NIL) {
            root = z;
        } else if (c > 0) {
            left[y] = z;
        } else {
            right[y] = z;
        }
        if (weighted) {
            weights[z] = weight;
            maxWeights[z] = weight;
            for (int p = y; p != NIL && maxWeights[p] < weight; p = parent[p]) {
                maxWeights[p] = weight;
            }
        }
        size++;
        insertFixup(z);
        return z;
    }

    /** Changes the weight of {@code node} (its key and place stay). */
    public void setWeight(int node, long weight) {
        requireWeighted();
        requireLive(node);
        weights[node] = weight;
        for (int p = node; p != NIL; p = parent[p]) {
            recompute(p);
        }
    }

    /**
     * Removes the element at {@code node}; the node is reused by a later insert.
     *
     * @throws IllegalStateException if {@code node} holds no element (the set is unchanged)
     */
    public void remove(int node) {
        requireLive(node);
        int z = node;
        int y = z;
        boolean yWasRed = red[y];
        int x;
        if (left[z] == NIL) {
            x = right[z];
            transplant(z, right[z]);
        } else if (right[z] == NIL) {
            x = left[z];
            transplant(z, left[z]);
        } else {
            y = minimum(right[z]);
            yWasRed = red[y];
            x = right[y];
            if (parent[y] == z) {
                parent[x] = y;
            } else {
                transplant(y, right[y]);
                right[y] = right[z];
                parent[right[y]] = y;
            }
            transplant(z, y);
            left[y] = left[z];
            parent[left[y]] = y;
            red[y] = red[z];
        }
        if (weighted) {
            for (int p = parent[x]; p != NIL; p = parent[p]) {
                recompute(p);
            }
        }
        if (!yWasRed) {
            deleteFixup(x);
        }
        parent[NIL] = NIL;
        size--;
        parent[z] = FREED;
        left[z] = NIL;
        right[z] = freeNodes;
        freeNodes = z;
    }

    /** Removes every element (the arrays are kept). */
    public void clear() {
        root = NIL;
        size = 0;
        used = 1;
        freeNodes = NIL;
        parent[NIL] = NIL;
    }

    private void requireLive(int node) {
        if (node <= NIL || node >= used || parent[node] == FREED) {
            throw new IllegalStateException("node " + node + " holds no element of the set");
        }
    }

    private int newNode() {
        if (freeNodes != NIL) {
            int z = freeNodes;
            freeNodes = right[z];
            return z;
        }
        if (used == handles.length) {
            grow();
        }
        return used++;
    }

    private void grow() {
        int n = handles.length * 2;
        keys = Arrays.copyOf(keys, n * arity);
        handles = Arrays.copyOf(handles, n);
        left = Arrays.copyOf(left, n);
        right = Arrays.copyOf(right, n);
        parent = Arrays.copyOf(parent, n);
        red = Arrays.copyOf(red, n);
        if (weighted) {
            weights = Arrays.copyOf(weights, n);
            maxWeights = Arrays.copyOf(maxWeights, n);
        }
    }

    private void recompute(int x) {
        long m = weights[x];
        long l = maxWeights[left[x]];
        long r = maxWeights[right[x]];
        maxWeights[x] = Math.max(m, Math.max(l, r));
    }

    private void transplant(int u, int v) {
        int p = parent[u];
        if (p == NIL) {
            root = v;
        } else if (u == left[p]) {
            left[p] = v;
        } else {
            right[p] = v;
        }
        parent[v] = p;
    }

    private void rotateLeft(int x) {
        int y = right[x];
        right[x] = left[y];
        if (left[y] != NIL) {
            parent[left[y]] = x;
        }
        transplant(x, y);
        left[y] = x;
        parent[x] = y;
        if (weighted) {
            maxWeights[y] = maxWeights[x];
            recompute(x);
        }
    }

    private void rotateRight(int x) {
        int y = left[x];
        left[x] = right[y];
        if (right[y] != NIL) {
            parent[right[y]] = x;
        }
        transplant(x, y);
        right[y] = x;
        parent[x] = y;
        if (weighted) {
            maxWeights[y] = maxWeights[x];
            recompute(x);
        }
    }

    private void insertFixup(int z) {
        while (red[parent[z]]) {
            int p = parent[z];
            int g = parent[p];
            if (p == left[g]) {
                int u = right[g];
                if (red[u]) {
                    red[p] = false;
                    red[u] = false;
                    red[g] = true;
                    z = g;
                } else {
                    if (z == right[p]) {
                        z = p;
                        rotateLeft(z);
                        p = parent[z];
                    }
                    red[p] = false;
                    red[g] = true;
                    rotateRight(g);
                }
            } else {
                int u = left[g];
                if (red[u]) {
                    red[p] = false;
                    red[u] = false;
                    red[g] = true;
                    z = g;
                } else {
                    if (z == left[p]) {
                        z = p;
                        rotateRight(z);
                        p = parent[z];
                    }
                    red[p] = false;
                    red[g] = true;
                    rotateLeft(g);
                }
            }
        }
        red[root] = false;
    }

    private void deleteFixup(int x) {
        while (x != root && !red[x]) {
            int p = parent[x];
            if (x == left[p]) {
                int w = right[p];
                if (red[w]) {
                    red[w] = false;
                    red[p] = true;
                    rotateLeft(p);
                    w = right[p];
                }
                if (!red[left[w]] && !red[right[w]]) {
                    red[w] = true;
                    x = p;
                } else {
                    if (!red[right[w]]) {
                        red[left[w]] = false;
                        red[w] = true;
                        rotateRight(w);
                        w = right[p];
                    }
                    red[w] = red[p];
                    red[p] = false;
                    red[right[w]] = false;
                    rotateLeft(p);
                    x = root;
                }
            } else {
                int w = left[p];
                if (red[w]) {
                    red[w] = false;
                    red[p] = true;
                    rotateRight(p);
                    w = left[p];
                }
                if (!red[right[w]] && !red[left[w]]) {
                    red[w] = true;
                    x = p;
                } else {
                    if (!red[left[w]]) {
                        red[right[w]] = false;
                        red[w] = true;
                        rotateLeft(w);
                        w = left[p];
                    }
                    red[w] = red[p];
                    red[p] = false;
                    red[left[w]] = false;
                    rotateRight(p);
                    x = root;
                }
            }
        }
        red[x] = false;
    }

    // ------------------------------------------------------------------------------------------------ checking

    /**
     * Checks the tree's invariants (keys in order, red-black rules, parent links, subtree weights, size) and
     * throws {@link IllegalStateException} naming the first broken one. O(n): for tests.
     */
    public void checkInvariants() {
        if (red[NIL] || (weighted && maxWeights[NIL] != Long.MIN_VALUE)) {
            throw new IllegalStateException("the sentinel was written");
        }
        if (root != NIL && (parent[root] != NIL || red[root])) {
            throw new IllegalStateException("the root has a parent or is red");
        }
        int[] count = new int[1];
        blackHeight(root, count);
        if (count[0] != size) {
            throw new IllegalStateException(count[0] + " nodes reachable but size is " + size);
        }
        int prev = NIL;
        for (int n = first(); n != NO_NODE; n = next(n)) {
            if (prev != NIL && compare(prev, keys[n * arity], arity > 1 ? keys[n * arity + 1] : 0,
                    arity > 2 ? keys[n * arity + 2] : 0) >= 0) {
                throw new IllegalStateException("keys out of order at node " + n);
            }
            prev = n;
        }
    }

    private int blackHeight(int x, int[] count) {
        if (x == NIL) {
            return 1;
        }
        count[0]++;
        if (parent[x] == FREED) {
            throw new IllegalStateException("freed node " + x + " is in the tree");
        }
        for (int c : new int[] {left[x], right[x]}) {
            if (c != NIL && parent[c] != x) {
                throw new IllegalStateException("node " + c + " does not link back to its parent " + x);
            }
            if (red[x] && red[c]) {
                throw new IllegalStateException("red node " + x + " has a red child " + c);
            }
        }
        if (weighted) {
            long m = Math.max(weights[x], Math.max(maxWeights[left[x]], maxWeights[right[x]]));
            if (maxWeights[x] != m) {
                throw new IllegalStateException("node " + x + " has subtree weight " + maxWeights[x] + ", not " + m);
            }
        }
        int l = blackHeight(left[x], count);
        int r = blackHeight(right[x], count);
        if (l != r) {
            throw new IllegalStateException("black heights " + l + " and " + r + " differ below node " + x);
        }
        return l + (red[x] ? 0 : 1);
    }
}
