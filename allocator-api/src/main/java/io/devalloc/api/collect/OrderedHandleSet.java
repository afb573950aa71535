package io.devalloc.api.collect;

import java.util.Arrays;

/**
 * A sorted set of {@code int} handles, each under a unique key of one to three {@code long}s compared in order as
 * signed numbers (the way {@code std::set} with a lexicographic comparator orders PyTorch's and TensorFlow's free
 * blocks): insert, remove, find, lower bound and the step to the next or previous element in O(log n), with no
 * object created per operation.
 *
 * <p>A B+-tree over primitive arrays, as XLA's BFC allocator moved to in 2026 ({@code absl::btree_set} where it had a
 * {@code std::set}). Every tree node has room for 32 entries, stored contiguously in one {@code long[]}: entry
 * {@code s} of tree node {@code t} is the row at {@code (t·32 + s)·width}, its key's longs, then its slot (in a leaf
 * the element, in an inner node the child) and, in a weighted set, its weight, so that a search reads one array and
 * moving entries is one copy. The elements sit in the leaves in key order, the leaves are linked both ways, and an
 * inner node's entry {@code i > 0} holds a separator: every key of child {@code i} is at or above it and every key
 * of child {@code i − 1} below it (entry 0's key is not used for routing). Every node but the root is at least half
 * full; a full node splits in two halves, a node below half borrows an entry from a sibling or merges with it, and an
 * inner root left with one child gives way to that child.
 *
 * <p>Why not the red-black tree this was before (CLRS's, one node per element, keys and links in parallel arrays):
 * with a million free blocks, lower bound, remove and insert of the smallest key cost six to nine times what they
 * cost with a thousand, although the tree is only twice as deep (2026-11-26 in docs/benchmarks.md). The probe's
 * path, the tree's left spine, visits about 20 nodes per search, each in a different cache line of every array;
 * and where the elements came in key order, as free blocks freed in address order do, the spine's nodes are
 * exactly nodes 1, 2, 4, 8, ..., so their entries lie at power-of-two strides in every array and fall into the
 * same few cache sets, which evict one another: most steps miss the level-1 and level-2 caches. A B-tree reads
 * four or five nodes of a few contiguous lines each for a million elements, in whatever order they came.
 *
 * <p>Callers name an element by its <em>node</em>: an {@code int} ({@code > 0}) that the element keeps from insert
 * to remove however the tree's nodes split, borrow and merge, so callers walk the set with {@link #next(int)} and
 * remove the element they stand on, or one they stepped past, without searching again. An element's node records
 * the leaf that holds it (updated when entries move to another leaf); its place in that leaf is found by scanning
 * the leaf's at most 32 slots. Removed nodes and tree nodes go on free lists and are reused;
 * the arrays double when full, so the steady state allocates nothing. The key is copied into the leaf at insert: an
 * owner must remove an element before the fields its key is made of change, and insert it again after.
 *
 * <p>With {@code weighted}, every leaf entry also carries a {@code long} weight and every inner entry the maximum
 * weight below its child, so that the next element (in key order) whose weight is at least a bound is found in
 * O(log n) too: a free-range map keyed by address and weighted by length finds the highest range that is long
 * enough without looking at the ranges that are not.
 *
 * <p>Not thread-safe: owners guard it with their own lock.
 */
public final class OrderedHandleSet {

    /** What the node-returning methods return for "no such element". Never a node of an element. */
    public static final int NO_NODE = 0;

    /**
     * Entries per tree node. 32 keeps a million elements four to five levels deep, and the entries a leaf shifts
     * on insert and remove within a few cache lines (at most 31 rows of up to 40 bytes).
     */
    private static final int NODE_CAPACITY = 32;
    /** Fewest entries of a tree node other than the root. A split leaves at least this many in each half. */
    private static final int MIN_ENTRIES = NODE_CAPACITY / 2;
    /** "No tree node": the root's parent, the ends of the leaf chain. */
    private static final int NONE = -1;
    /** {@code leafOf} of a removed element, to reject removing it twice. */
    private static final int FREED = -2;

    private final int arity;
    private final boolean weighted;
    /** Longs per entry: the key's, the slot, and the weight in a weighted set. */
    private final int width;
    /** Where an entry's slot sits in its row (its weight follows). */
    private final int slotAt;
    /** {@code NODE_CAPACITY · width}: longs per tree node. */
    private final int nodeLongs;

    /**
     * The tree nodes (leaves and inner nodes alike), {@code NODE_CAPACITY} entries each, an entry a row of
     * {@code width} longs: its key; its slot (leaf: the element's node; inner: the child tree node); in a weighted
     * set its weight (leaf: the element's; inner: the largest below the child). One row per entry, so that moving
     * entries is one copy and a search reads one array.
     */
    private long[] entries;
    private int[] entryCount;
    private int[] parent;
    /** Leaves only: the next and previous leaf in key order, or {@link #NONE}. Free tree nodes: linked by next. */
    private int[] nextLeaf;
    private int[] prevLeaf;
    private int treeNodesUsed;
    private int freeTreeNodes = NONE;
    private int root;
    /** Inner levels above the leaves: 0 while the root is a leaf. */
    private int height;

    // Elements, by node.
    private int[] handles;
    /** The leaf holding the element, or {@link #FREED}. */
    private int[] leafOf;
    /** Elements {@code 1..elementsUsed-1} have been handed out at least once. */
    private int elementsUsed = 1;
    /** Removed elements, linked through {@code handles}. */
    private int freeElements = NO_NODE;
    private int size;

    /**
     * @param arity how many {@code long}s make a key (1 to 3); further key arguments are ignored
     * @param weighted whether elements carry a weight searchable with {@link #lastWithWeightAtLeast(long)} and kin
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
        this.width = arity + (weighted ? 2 : 1);
        this.slotAt = arity;
        this.nodeLongs = NODE_CAPACITY * width;
        int elements = Math.max(8, initialCapacity + 1);
        handles = new int[elements];
        leafOf = new int[elements];
        // Half-full leaves, plus the inner nodes above them.
        int treeNodes = Math.max(2, initialCapacity / MIN_ENTRIES * 2 + 2);
        entries = new long[treeNodes * nodeLongs];
        entryCount = new int[treeNodes];
        parent = new int[treeNodes];
        nextLeaf = new int[treeNodes];
        prevLeaf = new int[treeNodes];
        root = newTreeNode();
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
        int leaf = leafOf[node];
        return entries[row(leaf, slotIn(leaf, node)) + i];
    }

    /** The weight of {@code node} (0 in an unweighted set). */
    public long weight(int node) {
        if (!weighted) {
            return 0;
        }
        int leaf = leafOf[node];
        return weightOf(leaf, slotIn(leaf, node));
    }

    // ------------------------------------------------------------------------------------------------ queries

    /** Sign of (the key at {@code entries[at ..]}) − (k0, k1, k2), over the first {@code arity} longs. */
    private int compareAt(int at, long k0, long k1, long k2) {
        long x = entries[at];
        if (x != k0) {
            return x < k0 ? -1 : 1;
        }
        if (arity == 1) {
            return 0;
        }
        x = entries[at + 1];
        if (x != k1) {
            return x < k1 ? -1 : 1;
        }
        if (arity == 2) {
            return 0;
        }
        x = entries[at + 2];
        return x == k2 ? 0 : x < k2 ? -1 : 1;
    }

    /**
     * The child of inner node {@code t} whose keys' range holds (k0, k1, k2): the last with separator at or below.
     * A linear scan, not a binary search: its loads do not wait for one another and its branch mispredicts once,
     * where a binary search over 32 entries makes five dependent, unpredictable steps.
     */
    private int childFor(int t, long k0, long k1, long k2) {
        int n = entryCount[t];
        int at = row(t, 1);
        int i = 1;
        while (i < n && compareAt(at, k0, k1, k2) <= 0) {
            i++;
            at += width;
        }
        return slot(t, i - 1);
    }

    /** The leaf whose keys' range holds (k0, k1, k2). */
    private int leafFor(long k0, long k1, long k2) {
        int t = root;
        for (int level = height; level > 0; level--) {
            t = childFor(t, k0, k1, k2);
        }
        return t;
    }

    /** The first entry of {@code leaf} whose key is at or after (k0, k1, k2); its entry count when none is. */
    private int lowerBoundIn(int leaf, long k0, long k1, long k2) {
        int n = entryCount[leaf];
        int at = row(leaf, 0);
        int s = 0;
        while (s < n && compareAt(at, k0, k1, k2) < 0) {
            s++;
            at += width;
        }
        return s;
    }

    /** The entry of {@code leaf} holding element {@code node}. */
    private int slotIn(int leaf, int node) {
        int at = row(leaf, 0) + slotAt;
        int n = entryCount[leaf];
        for (int s = 0; s < n; s++, at += width) {
            if (entries[at] == node) {
                return s;
            }
        }
        throw new IllegalStateException("node " + node + " is not in the leaf it records (" + leaf + ")");
    }

    /** The node whose key is (k0, k1, k2), or {@link #NO_NODE}. */
    public int find(long k0, long k1, long k2) {
        int leaf = leafFor(k0, k1, k2);
        int s = lowerBoundIn(leaf, k0, k1, k2);
        if (s < entryCount[leaf] && compareAt(row(leaf, s), k0, k1, k2) == 0) {
            return slot(leaf, s);
        }
        return NO_NODE;
    }

    /** The first node whose key is at or after (k0, k1, k2), or {@link #NO_NODE}. */
    public int lowerBound(long k0, long k1, long k2) {
        int leaf = leafFor(k0, k1, k2);
        int s = lowerBoundIn(leaf, k0, k1, k2);
        if (s < entryCount[leaf]) {
            return slot(leaf, s);
        }
        // Every key of the next leaf is at or above the separator that kept the search out of it.
        int next = nextLeaf[leaf];
        return next == NONE ? NO_NODE : slot(next, 0);
    }

    /** The node of the smallest key, or {@link #NO_NODE}. */
    public int first() {
        if (size == 0) {
            return NO_NODE;
        }
        int t = root;
        for (int level = height; level > 0; level--) {
            t = slot(t, 0);
        }
        return slot(t, 0);
    }

    /** The node of the largest key, or {@link #NO_NODE}. */
    public int last() {
        if (size == 0) {
            return NO_NODE;
        }
        int t = root;
        for (int level = height; level > 0; level--) {
            t = slot(t, entryCount[t] - 1);
        }
        return slot(t, entryCount[t] - 1);
    }

    /** The node after {@code node} in key order, or {@link #NO_NODE}. */
    public int next(int node) {
        int leaf = leafOf[node];
        int s = slotIn(leaf, node) + 1;
        if (s < entryCount[leaf]) {
            return slot(leaf, s);
        }
        int next = nextLeaf[leaf];
        return next == NONE ? NO_NODE : slot(next, 0);
    }

    /** The node before {@code node} in key order, or {@link #NO_NODE}. */
    public int prev(int node) {
        int leaf = leafOf[node];
        int s = slotIn(leaf, node);
        if (s > 0) {
            return slot(leaf, s - 1);
        }
        int prev = prevLeaf[leaf];
        return prev == NONE ? NO_NODE : slot(prev, entryCount[prev] - 1);
    }

    /** The entry of inner node {@code p} that points to child {@code t}. */
    private int childIndex(int p, int t) {
        int at = row(p, 0) + slotAt;
        int n = entryCount[p];
        for (int i = 0; i < n; i++, at += width) {
            if (entries[at] == t) {
                return i;
            }
        }
        throw new IllegalStateException("tree node " + t + " is not a child of its parent " + p);
    }

    // ------------------------------------------------------------------------------------------- weighted search

    /** The last node (in key order) whose weight is at least {@code min}, or {@link #NO_NODE}. */
    public int lastWithWeightAtLeast(long min) {
        requireWeighted();
        return lastBelow(root, height, min);
    }

    /** The last node before {@code node} whose weight is at least {@code min}, or {@link #NO_NODE}. */
    public int prevWithWeightAtLeast(int node, long min) {
        requireWeighted();
        int t = leafOf[node];
        int from = slotIn(t, node) - 1;
        for (int level = 0; ; level++) {
            for (int i = from; i >= 0; i--) {
                if (weightOf(t, i) >= min) {
                    return level == 0 ? slot(t, i) : lastBelow(slot(t, i), level - 1, min);
                }
            }
            int p = parent[t];
            if (p == NONE) {
                return NO_NODE;
            }
            from = childIndex(p, t) - 1;
            t = p;
        }
    }

    /** The first node (in key order) whose weight is at least {@code min}, or {@link #NO_NODE}. */
    public int firstWithWeightAtLeast(long min) {
        requireWeighted();
        return firstBelow(root, height, min);
    }

    /** The first node after {@code node} whose weight is at least {@code min}, or {@link #NO_NODE}. */
    public int nextWithWeightAtLeast(int node, long min) {
        requireWeighted();
        int t = leafOf[node];
        int from = slotIn(t, node) + 1;
        for (int level = 0; ; level++) {
            int n = entryCount[t];
            for (int i = from; i < n; i++) {
                if (weightOf(t, i) >= min) {
                    return level == 0 ? slot(t, i) : firstBelow(slot(t, i), level - 1, min);
                }
            }
            int p = parent[t];
            if (p == NONE) {
                return NO_NODE;
            }
            from = childIndex(p, t) + 1;
            t = p;
        }
    }

    /** The last element at or below tree node {@code t} ({@code level} levels up) weighing at least {@code min}. */
    private int lastBelow(int t, int level, long min) {
        while (true) {
            int i = entryCount[t] - 1;
            while (i >= 0 && weightOf(t, i) < min) {
                i--;
            }
            if (i < 0) {
                return NO_NODE;
            }
            if (level == 0) {
                return slot(t, i);
            }
            t = slot(t, i);
            level--;
        }
    }

    /** The first element at or below tree node {@code t} weighing at least {@code min}. */
    private int firstBelow(int t, int level, long min) {
        while (true) {
            int n = entryCount[t];
            int i = 0;
            while (i < n && weightOf(t, i) < min) {
                i++;
            }
            if (i == n) {
                return NO_NODE;
            }
            if (level == 0) {
                return slot(t, i);
            }
            t = slot(t, i);
            level--;
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
        int leaf = leafFor(k0, k1, k2);
        int s = lowerBoundIn(leaf, k0, k1, k2);
        if (s < entryCount[leaf] && compareAt(row(leaf, s), k0, k1, k2) == 0) {
            throw new IllegalStateException("key (" + k0 + (arity > 1 ? ", " + k1 : "")
                    + (arity > 2 ? ", " + k2 : "") + ") is already in the set, with handle "
                    + handles[slot(leaf, s)]);
        }
        int node = newElement();
        handles[node] = handle;
        if (entryCount[leaf] < NODE_CAPACITY) {
            putInLeaf(leaf, s, k0, k1, k2, node, weight);
            if (weighted) {
                raiseUp(leaf, weight);
            }
        } else {
            splitLeafAndPut(leaf, s, k0, k1, k2, node, weight);
        }
        size++;
        return node;
    }

    /** Changes the weight of {@code node} (its key and place stay). */
    public void setWeight(int node, long weight) {
        requireWeighted();
        requireLive(node);
        int leaf = leafOf[node];
        setWeightOf(leaf, slotIn(leaf, node), weight);
        refreshUp(leaf);
    }

    /**
     * Removes the element at {@code node}; the node is reused by a later insert.
     *
     * @throws IllegalStateException if {@code node} holds no element (the set is unchanged)
     */
    public void remove(int node) {
        requireLive(node);
        int leaf = leafOf[node];
        int s = slotIn(leaf, node);
        int n = entryCount[leaf];
        moveEntries(leaf, s + 1, leaf, s, n - s - 1);
        entryCount[leaf] = n - 1;
        leafOf[node] = FREED;
        handles[node] = freeElements;
        freeElements = node;
        size--;
        if (leaf == root) {
            return;
        }
        if (n - 1 < MIN_ENTRIES) {
            rebalance(leaf, 0);
        } else if (weighted) {
            refreshUp(leaf);
        }
    }

    /** Removes every element (the arrays are kept). */
    public void clear() {
        size = 0;
        elementsUsed = 1;
        freeElements = NO_NODE;
        treeNodesUsed = 0;
        freeTreeNodes = NONE;
        height = 0;
        root = newTreeNode();
    }

    private void requireLive(int node) {
        if (node <= NO_NODE || node >= elementsUsed || leafOf[node] == FREED) {
            throw new IllegalStateException("node " + node + " holds no element of the set");
        }
    }

    // ------------------------------------------------------------------------------------------ tree changes

    /** Puts an element at entry {@code s} of {@code leaf}, which has room, moving the entries from {@code s} up. */
    private void putInLeaf(int leaf, int s, long k0, long k1, long k2, int node, long weight) {
        int n = entryCount[leaf];
        moveEntries(leaf, s, leaf, s + 1, n - s);
        int at = row(leaf, s);
        entries[at] = k0;
        if (arity > 1) {
            entries[at + 1] = k1;
        }
        if (arity > 2) {
            entries[at + 2] = k2;
        }
        entries[at + slotAt] = node;
        if (weighted) {
            entries[at + slotAt + 1] = weight;
        }
        entryCount[leaf] = n + 1;
        leafOf[node] = leaf;
    }

    /** Splits the full {@code leaf} in two halves and puts the element where its key belongs. */
    private void splitLeafAndPut(int leaf, int s, long k0, long k1, long k2, int node, long weight) {
        int right = newTreeNode();
        int keep = (NODE_CAPACITY + 1) / 2;
        if (s < keep) {
            moveEntries(leaf, keep - 1, right, 0, NODE_CAPACITY - keep + 1);
            entryCount[right] = NODE_CAPACITY - keep + 1;
            entryCount[leaf] = keep - 1;
            putInLeaf(leaf, s, k0, k1, k2, node, weight);
        } else {
            moveEntries(leaf, keep, right, 0, NODE_CAPACITY - keep);
            entryCount[right] = NODE_CAPACITY - keep;
            entryCount[leaf] = keep;
            putInLeaf(right, s - keep, k0, k1, k2, node, weight);
        }
        for (int i = entryCount[right] - 1; i >= 0; i--) {
            leafOf[slot(right, i)] = right;
        }
        int after = nextLeaf[leaf];
        nextLeaf[right] = after;
        prevLeaf[right] = leaf;
        nextLeaf[leaf] = right;
        if (after != NONE) {
            prevLeaf[after] = right;
        }
        addChildAfter(leaf, right);
    }

    /**
     * Enters {@code right}, just split off {@code left}, into {@code left}'s parent after it, under the key of
     * {@code right}'s entry 0 as separator; splits full parents on the way up, and grows a new root when the root
     * splits.
     */
    private void addChildAfter(int left, int right) {
        while (true) {
            int p = parent[left];
            if (p == NONE) {
                int top = newTreeNode();
                setSlot(top, 0, left);
                copyKey(left, 0, top, 0);
                entryCount[top] = 1;
                parent[left] = top;
                root = top;
                height++;
                if (weighted) {
                    setWeightOf(top, 0, maxWeight(left));
                }
                putChild(top, 1, right);
                return;
            }
            if (weighted) {
                setWeightOf(p, childIndex(p, left), maxWeight(left));
            }
            int at = childIndex(p, left) + 1;
            if (entryCount[p] < NODE_CAPACITY) {
                putChild(p, at, right);
                if (weighted) {
                    refreshUp(p);
                }
                return;
            }
            int q = newTreeNode();
            int keep = (NODE_CAPACITY + 1) / 2;
            if (at < keep) {
                moveEntries(p, keep - 1, q, 0, NODE_CAPACITY - keep + 1);
                entryCount[q] = NODE_CAPACITY - keep + 1;
                entryCount[p] = keep - 1;
                putChild(p, at, right);
            } else {
                moveEntries(p, keep, q, 0, NODE_CAPACITY - keep);
                entryCount[q] = NODE_CAPACITY - keep;
                entryCount[p] = keep;
                putChild(q, at - keep, right);
            }
            // q's entry 0 now holds the separator between p and q, which goes up.
            for (int i = entryCount[q] - 1; i >= 0; i--) {
                parent[slot(q, i)] = q;
            }
            left = p;
            right = q;
        }
    }

    /**
     * Puts child {@code c} at entry {@code at} of inner node {@code p}, which has room; the key of {@code c}'s entry
     * 0 is its separator.
     */
    private void putChild(int p, int at, int c) {
        int n = entryCount[p];
        moveEntries(p, at, p, at + 1, n - at);
        copyKey(c, 0, p, at);
        setSlot(p, at, c);
        if (weighted) {
            setWeightOf(p, at, maxWeight(c));
        }
        entryCount[p] = n + 1;
        parent[c] = p;
    }

    /**
     * Restores the fill of {@code t} ({@code level} levels above the leaves; not the root), which fell below
     * {@link #MIN_ENTRIES}: borrows an entry from a sibling that can spare one, or merges with a sibling, then
     * repairs the parent in turn. An inner root left with one child is replaced by it.
     */
    private void rebalance(int t, int level) {
        while (true) {
            int p = parent[t];
            int at = childIndex(p, t);
            int left = at > 0 ? slot(p, at - 1) : NONE;
            int right = at + 1 < entryCount[p] ? slot(p, at + 1) : NONE;
            if (left != NONE && entryCount[left] > MIN_ENTRIES) {
                borrowFromLeft(t, left, p, at, level);
                if (weighted) {
                    setWeightOf(p, at - 1, maxWeight(left));
                    setWeightOf(p, at, maxWeight(t));
                    refreshUp(p);
                }
                return;
            }
            if (right != NONE && entryCount[right] > MIN_ENTRIES) {
                borrowFromRight(t, right, p, at, level);
                if (weighted) {
                    setWeightOf(p, at, maxWeight(t));
                    setWeightOf(p, at + 1, maxWeight(right));
                    refreshUp(p);
                }
                return;
            }
            if (left != NONE) {
                merge(left, t, p, at, level);
            } else {
                merge(t, right, p, at + 1, level);
            }
            if (p == root) {
                if (entryCount[p] == 1) {
                    // The root collapses: its only child becomes the root.
                    root = slot(p, 0);
                    parent[root] = NONE;
                    height--;
                    freeTreeNode(p);
                }
                return;
            }
            if (entryCount[p] >= MIN_ENTRIES) {
                if (weighted) {
                    refreshUp(p);
                }
                return;
            }
            t = p;
            level++;
        }
    }

    /** Moves the last entry of {@code left} to the front of {@code t}, the child at entry {@code at} of {@code p}. */
    private void borrowFromLeft(int t, int left, int p, int at, int level) {
        int last = entryCount[left] - 1;
        moveEntries(t, 0, t, 1, entryCount[t]);
        if (level > 0) {
            // t's old first child gets its separator from the parent; the borrowed child's goes up instead.
            copyKey(p, at, t, 1);
        }
        moveEntries(left, last, t, 0, 1);
        entryCount[left] = last;
        entryCount[t]++;
        copyKey(t, 0, p, at);
        adopt(t, 0, level);
    }

    /** Moves the first entry of {@code right} to the end of {@code t}, the child at entry {@code at} of {@code p}. */
    private void borrowFromRight(int t, int right, int p, int at, int level) {
        int n = entryCount[t];
        moveEntries(right, 0, t, n, 1);
        if (level > 0) {
            // The borrowed child's separator is right's separator in the parent.
            copyKey(p, at + 1, t, n);
        }
        moveEntries(right, 1, right, 0, entryCount[right] - 1);
        entryCount[right]--;
        entryCount[t] = n + 1;
        // right's new entry 0 is its new lower bound (a real key in a leaf, its old first separator above).
        copyKey(right, 0, p, at + 1);
        adopt(t, n, level);
    }

    /** {@code left} absorbs {@code right}, the child at entry {@code at} of {@code p}, which loses that entry. */
    private void merge(int left, int right, int p, int at, int level) {
        int n = entryCount[left];
        int m = entryCount[right];
        moveEntries(right, 0, left, n, m);
        if (level > 0) {
            copyKey(p, at, left, n);
        } else {
            int after = nextLeaf[right];
            nextLeaf[left] = after;
            if (after != NONE) {
                prevLeaf[after] = left;
            }
        }
        entryCount[left] = n + m;
        for (int i = n; i < n + m; i++) {
            adopt(left, i, level);
        }
        moveEntries(p, at + 1, p, at, entryCount[p] - at - 1);
        entryCount[p]--;
        if (weighted) {
            setWeightOf(p, at - 1, maxWeight(left));
        }
        freeTreeNode(right);
    }

    /** Records that entry {@code i} of {@code t} now lives in {@code t}: its element's leaf or its child's parent. */
    private void adopt(int t, int i, int level) {
        int s = slot(t, i);
        if (level == 0) {
            leafOf[s] = t;
        } else {
            parent[s] = t;
        }
    }

    /** Copies {@code n} entries; overlapping ranges of one node are fine. */
    private void moveEntries(int from, int fromEntry, int to, int toEntry, int n) {
        if (n > 0) {
            System.arraycopy(entries, row(from, fromEntry), entries, row(to, toEntry), n * width);
        }
    }

    /** Where entry {@code s} of tree node {@code t} starts in {@link #entries}: its key. */
    private int row(int t, int s) {
        return (t * NODE_CAPACITY + s) * width;
    }

    /** The slot of entry {@code s} of tree node {@code t}: an element's node in a leaf, a child above. */
    private int slot(int t, int s) {
        return (int) entries[row(t, s) + slotAt];
    }

    private void setSlot(int t, int s, int value) {
        entries[row(t, s) + slotAt] = value;
    }

    private long weightOf(int t, int s) {
        return entries[row(t, s) + slotAt + 1];
    }

    private void setWeightOf(int t, int s, long weight) {
        entries[row(t, s) + slotAt + 1] = weight;
    }

    /** Copies the key of entry {@code s} of {@code t} to entry {@code ds} of {@code dt}. */
    private void copyKey(int t, int s, int dt, int ds) {
        System.arraycopy(entries, row(t, s), entries, row(dt, ds), arity);
    }

    /** The largest weight of {@code t}'s entries, {@link Long#MIN_VALUE} when it has none. */
    private long maxWeight(int t) {
        long m = Long.MIN_VALUE;
        for (int i = entryCount[t] - 1; i >= 0; i--) {
            m = Math.max(m, weightOf(t, i));
        }
        return m;
    }

    /** After an entry of {@code t} gained {@code weight}: raises the maxima above it that are lower. */
    private void raiseUp(int t, long weight) {
        for (int p = parent[t]; p != NONE; t = p, p = parent[p]) {
            int at = row(p, childIndex(p, t)) + slotAt + 1;
            if (entries[at] >= weight) {
                return;
            }
            entries[at] = weight;
        }
    }

    /** After {@code t}'s entries changed: recomputes the maxima above it until one stays the same. */
    private void refreshUp(int t) {
        for (int p = parent[t]; p != NONE; t = p, p = parent[p]) {
            int at = row(p, childIndex(p, t)) + slotAt + 1;
            long m = maxWeight(t);
            if (entries[at] == m) {
                return;
            }
            entries[at] = m;
        }
    }

    private int newElement() {
        if (freeElements != NO_NODE) {
            int node = freeElements;
            freeElements = handles[node];
            return node;
        }
        if (elementsUsed == handles.length) {
            handles = Arrays.copyOf(handles, elementsUsed * 2);
            leafOf = Arrays.copyOf(leafOf, elementsUsed * 2);
        }
        return elementsUsed++;
    }

    /** A new empty tree node, as a leaf with no neighbours and no parent. */
    private int newTreeNode() {
        int t;
        if (freeTreeNodes != NONE) {
            t = freeTreeNodes;
            freeTreeNodes = nextLeaf[t];
        } else {
            if (treeNodesUsed == entryCount.length) {
                growTreeNodes();
            }
            t = treeNodesUsed++;
        }
        entryCount[t] = 0;
        parent[t] = NONE;
        nextLeaf[t] = NONE;
        prevLeaf[t] = NONE;
        return t;
    }

    private void freeTreeNode(int t) {
        entryCount[t] = 0;
        parent[t] = NONE;
        prevLeaf[t] = NONE;
        nextLeaf[t] = freeTreeNodes;
        freeTreeNodes = t;
    }

    private void growTreeNodes() {
        int n = entryCount.length * 2;
        entries = Arrays.copyOf(entries, n * nodeLongs);
        entryCount = Arrays.copyOf(entryCount, n);
        parent = Arrays.copyOf(parent, n);
        nextLeaf = Arrays.copyOf(nextLeaf, n);
        prevLeaf = Arrays.copyOf(prevLeaf, n);
    }

    // ------------------------------------------------------------------------------------------------ checking

    /** Inner levels above the leaves (0 while the root is a leaf): for tests of splits, merges and collapses. */
    int treeHeight() {
        return height;
    }

    /**
     * Checks the tree's invariants (keys in order within nodes and against the separators above them, every leaf
     * at one depth, fill of every node, parent links, the leaf chain, each element's leaf, the weight maxima,
     * size) and throws {@link IllegalStateException} naming the first broken one. O(n): for tests.
     */
    public void checkInvariants() {
        if (parent[root] != NONE) {
            throw new IllegalStateException("the root " + root + " has a parent");
        }
        if (height > 0 && entryCount[root] < 2) {
            throw new IllegalStateException("the inner root has " + entryCount[root] + " children");
        }
        int[] elements = new int[1];
        int[] leaves = new int[] {NONE};
        checkSubtree(root, height, null, null, elements, leaves);
        if (elements[0] != size) {
            throw new IllegalStateException(elements[0] + " elements reachable but size is " + size);
        }
        if (leaves[0] != NONE && nextLeaf[leaves[0]] != NONE) {
            throw new IllegalStateException("the last leaf " + leaves[0] + " links to a next leaf");
        }
        int free = 0;
        for (int e = freeElements; e != NO_NODE; e = handles[e]) {
            if (leafOf[e] != FREED || ++free > elementsUsed) {
                throw new IllegalStateException("the free list of elements is broken at node " + e);
            }
        }
        if (free + size != elementsUsed - 1) {
            throw new IllegalStateException((elementsUsed - 1) + " nodes handed out, " + size + " in the set and "
                    + free + " free");
        }
    }

    /**
     * Checks the subtree of {@code t}, whose keys must lie in [{@code low}, {@code high}) (null: unbounded), and
     * returns its largest weight. {@code lastLeaf[0]} is the leaf visited before, to check the chain.
     */
    private long checkSubtree(int t, int level, long[] low, long[] high, int[] elements, int[] lastLeaf) {
        int n = entryCount[t];
        if (n > NODE_CAPACITY || (t != root && n < MIN_ENTRIES)) {
            throw new IllegalStateException("tree node " + t + " has " + n + " entries");
        }
        long max = Long.MIN_VALUE;
        if (level == 0) {
            if (prevLeaf[t] != lastLeaf[0] || (lastLeaf[0] != NONE && nextLeaf[lastLeaf[0]] != t)) {
                throw new IllegalStateException("leaf " + t + " is not linked to the leaf before it");
            }
            lastLeaf[0] = t;
            for (int i = 0; i < n; i++) {
                int e = slot(t, i);
                if (e <= NO_NODE || e >= elementsUsed || leafOf[e] != t) {
                    throw new IllegalStateException("element " + e + " in leaf " + t + " records leaf "
                            + (e > NO_NODE && e < elementsUsed ? leafOf[e] : "none"));
                }
                long[] k = keyAt(t, i);
                if ((low != null && compareAt(row(t, i), low[0], low[1], low[2]) < 0)
                        || (high != null && compareAt(row(t, i), high[0], high[1], high[2])
                        >= 0)
                        || (i > 0 && compareAt(row(t, i - 1), k[0], k[1], k[2]) >= 0)) {
                    throw new IllegalStateException("keys out of order at element " + e + " of leaf " + t);
                }
                if (weighted) {
                    max = Math.max(max, weightOf(t, i));
                }
            }
            elements[0] += n;
            return max;
        }
        for (int i = 0; i < n; i++) {
            int c = slot(t, i);
            if (parent[c] != t) {
                throw new IllegalStateException("tree node " + c + " does not link back to its parent " + t);
            }
            long[] childLow = i == 0 ? low : keyAt(t, i);
            long[] childHigh = i + 1 < n ? keyAt(t, i + 1) : high;
            if (i > 0 && i + 1 < n && compareAt(row(t, i), childHigh[0], childHigh[1],
                    childHigh[2]) >= 0) {
                throw new IllegalStateException("separators out of order in tree node " + t);
            }
            long m = checkSubtree(c, level - 1, childLow, childHigh, elements, lastLeaf);
            if (weighted && weightOf(t, i) != m) {
                throw new IllegalStateException("entry " + i + " of tree node " + t + " has largest weight "
                        + weightOf(t, i) + ", not " + m);
            }
            max = Math.max(max, m);
        }
        return max;
    }

    private long[] keyAt(int t, int i) {
        int at = row(t, i);
        return new long[] {entries[at], arity > 1 ? entries[at + 1] : 0, arity > 2 ? entries[at + 2] : 0};
    }
}
