package io.devalloc.api.collect;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.NavigableMap;
import java.util.Random;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** {@link OrderedHandleSet} against {@link TreeMap} as a model: random inserts, removals and queries, fixed seeds. */
class OrderedHandleSetTest {

    /** A key as the model sees it: compared the way the set compares its first {@code arity} longs. */
    private record Key(long a, long b, long c) implements Comparable<Key> {
        @Override
        public int compareTo(Key o) {
            int x = Long.compare(a, o.a);
            if (x == 0) {
                x = Long.compare(b, o.b);
            }
            return x != 0 ? x : Long.compare(c, o.c);
        }
    }

    /** One element of the model: its handle, weight and node in the set. */
    private record Entry(int handle, long weight, int node) {
    }

    private static Key randomKey(Random r, int arity, int spread) {
        // Few distinct leading values (negative ones too), so that ties on them are common and later longs decide.
        long a = r.nextInt(spread) - spread / 2;
        long b = arity > 1 ? r.nextInt(spread) - spread / 2 : 0;
        long c = arity > 2 ? r.nextLong() % (spread * 4L) : 0;
        if (r.nextInt(50) == 0) {
            a = r.nextBoolean() ? Long.MAX_VALUE : Long.MIN_VALUE;
        }
        return new Key(a, b, c);
    }

    private static Key keyOf(OrderedHandleSet s, int node, int arity) {
        return new Key(s.key(node, 0), arity > 1 ? s.key(node, 1) : 0, arity > 2 ? s.key(node, 2) : 0);
    }

    @ParameterizedTest
    @CsvSource({"1,false,11,300", "2,false,12,40", "3,false,13,20", "3,true,14,20", "1,true,15,5000",
            "2,true,16,8"})
    void behavesLikeATreeMapUnderRandomOperations(int arity, boolean weighted, long seed, int spread) {
        Random r = new Random(seed);
        OrderedHandleSet s = new OrderedHandleSet(arity, weighted, 0);
        NavigableMap<Key, Entry> model = new TreeMap<>();
        List<Key> present = new ArrayList<>();
        Map<Key, Integer> indexOf = new HashMap<>();
        int nextHandle = 0;
        for (int step = 0; step < 60_000; step++) {
            // Grow to a few thousand elements, shrink, grow again: removal dominates in the middle phase.
            int phase = (step / 15_000) % 2;
            int op = r.nextInt(10);
            boolean insert = phase == 0 ? op < 6 : op < 3;
            if (insert) {
                Key k = randomKey(r, arity, spread);
                long w = r.nextInt(1000);
                if (model.containsKey(k)) {
                    Entry e = model.get(k);
                    IllegalStateException dup = assertThrows(IllegalStateException.class,
                            () -> s.insert(k.a, k.b, k.c, -7, w));
                    assertTrue(dup.getMessage().contains("already in the set"), dup.getMessage());
                    assertEquals(e.handle, s.handle(s.find(k.a, k.b, k.c)), "a duplicate changes nothing");
                } else {
                    int h = nextHandle++;
                    int node = s.insert(k.a, k.b, k.c, h, w);
                    model.put(k, new Entry(h, w, node));
                    indexOf.put(k, present.size());
                    present.add(k);
                }
            } else if (!present.isEmpty()) {
                // Remove an arbitrary element, by the node it was given (or found again by key).
                int i = r.nextInt(present.size());
                Key k = present.get(i);
                Key moved = present.remove(present.size() - 1);
                if (i < present.size()) {
                    present.set(i, moved);
                    indexOf.put(moved, i);
                }
                indexOf.remove(k);
                Entry e = model.remove(k);
                int node = r.nextBoolean() ? e.node : s.find(k.a, k.b, k.c);
                assertEquals(e.node, node);
                s.remove(node);
                assertEquals(OrderedHandleSet.NO_NODE, s.find(k.a, k.b, k.c));
            }
            assertEquals(model.size(), s.size());
            // Queries: lower bound of a random key (present or not), and of a present key.
            Key q = randomKey(r, arity, spread);
            checkLowerBound(s, model, q, arity);
            if (!present.isEmpty()) {
                Key p = present.get(r.nextInt(present.size()));
                checkLowerBound(s, model, p, arity);
                int node = s.find(p.a, p.b, p.c);
                assertEquals(model.get(p).handle, s.handle(node));
                Key after = model.higherKey(p);
                Key before = model.lowerKey(p);
                assertEquals(after == null ? OrderedHandleSet.NO_NODE : model.get(after).node, s.next(node));
                assertEquals(before == null ? OrderedHandleSet.NO_NODE : model.get(before).node, s.prev(node));
                if (weighted) {
                    long min = r.nextInt(1100);
                    assertEquals(expectedAfter(model.tailMap(p, false), min), s.nextWithWeightAtLeast(node, min));
                    assertEquals(expectedAfter(model.headMap(p, false).descendingMap(), min),
                            s.prevWithWeightAtLeast(node, min));
                }
            }
            if (weighted) {
                long min = r.nextInt(1100);
                assertEquals(expectedAfter(model, min), s.firstWithWeightAtLeast(min));
                assertEquals(expectedAfter(model.descendingMap(), min), s.lastWithWeightAtLeast(min));
            }
            if (step % 997 == 0) {
                s.checkInvariants();
                checkWalk(s, model, arity);
            }
        }
        s.checkInvariants();
        checkWalk(s, model, arity);
    }

    private static void checkLowerBound(OrderedHandleSet s, NavigableMap<Key, Entry> model, Key q, int arity) {
        Key expected = model.ceilingKey(q);
        int node = s.lowerBound(q.a, q.b, q.c);
        if (expected == null) {
            assertEquals(OrderedHandleSet.NO_NODE, node, () -> "lower bound of " + q);
        } else {
            assertEquals(expected, keyOf(s, node, arity), () -> "lower bound of " + q);
            assertEquals(model.get(expected).handle, s.handle(node));
        }
    }

    /** The node of the first entry of {@code ordered} weighing at least {@code min}. */
    private static int expectedAfter(NavigableMap<?, Entry> ordered, long min) {
        for (Entry e : ordered.values()) {
            if (e.weight >= min) {
                return e.node;
            }
        }
        return OrderedHandleSet.NO_NODE;
    }

    /** Both walks visit the model's keys in its order. */
    private static void checkWalk(OrderedHandleSet s, NavigableMap<Key, Entry> model, int arity) {
        List<Key> forward = new ArrayList<>();
        for (int n = s.first(); n != OrderedHandleSet.NO_NODE; n = s.next(n)) {
            forward.add(keyOf(s, n, arity));
        }
        assertEquals(new ArrayList<>(model.keySet()), forward);
        List<Key> backward = new ArrayList<>();
        for (int n = s.last(); n != OrderedHandleSet.NO_NODE; n = s.prev(n)) {
            backward.add(keyOf(s, n, arity));
        }
        assertEquals(new ArrayList<>(model.descendingKeySet()), backward);
    }

    @Test
    void keysOrderAsSignedLongsOverTheirArityOnly() {
        OrderedHandleSet s = new OrderedHandleSet(2, false, 4);
        s.insert(5, 1, 99, 0);
        s.insert(-5, 7, 0, 1);
        s.insert(5, -1, 0, 2);
        assertThrows(IllegalStateException.class, () -> s.insert(5, 1, 0, 3), "the third long is not compared");
        int[] order = new int[3];
        int i = 0;
        for (int n = s.first(); n != OrderedHandleSet.NO_NODE; n = s.next(n)) {
            order[i++] = s.handle(n);
        }
        assertEquals(List.of(1, 2, 0), List.of(order[0], order[1], order[2]));
        assertEquals(0, s.handle(s.lowerBound(5, 0, Long.MIN_VALUE)));
        assertEquals(OrderedHandleSet.NO_NODE, s.lowerBound(5, 2, 0));
    }

    @Test
    void nodesAreReusedAndTheArraysStopGrowing() {
        OrderedHandleSet s = new OrderedHandleSet(3, false, 0);
        for (int i = 0; i < 1000; i++) {
            s.insert(0, i, i, i);
        }
        int highest = 0;
        for (int round = 0; round < 50; round++) {
            int n = s.lowerBound(0, round * 7 % 1000, 0);
            int h = s.handle(n);
            s.remove(n);
            int again = s.insert(0, h, h, h);
            highest = Math.max(highest, again);
        }
        assertTrue(highest <= 1000, "a removed node is reused: " + highest);
        s.checkInvariants();
        assertEquals(1000, s.size());
        s.clear();
        assertEquals(0, s.size());
        assertEquals(OrderedHandleSet.NO_NODE, s.first());
        assertEquals(OrderedHandleSet.NO_NODE, s.find(0, 1, 1));
        s.insert(1, 1, 1, 9);
        s.checkInvariants();
        assertEquals(9, s.handle(s.first()));
    }

    @Test
    void badUseFailsAndChangesNothing() {
        assertThrows(IllegalArgumentException.class, () -> new OrderedHandleSet(0, false, 1));
        assertThrows(IllegalArgumentException.class, () -> new OrderedHandleSet(4, false, 1));
        assertThrows(IllegalArgumentException.class, () -> new OrderedHandleSet(1, false, -1));
        OrderedHandleSet s = new OrderedHandleSet(1, false, 1);
        int a = s.insert(10, 0, 0, 1);
        s.insert(20, 0, 0, 2);
        s.remove(a);
        IllegalStateException twice = assertThrows(IllegalStateException.class, () -> s.remove(a));
        assertTrue(twice.getMessage().contains("holds no element"), twice.getMessage());
        assertThrows(IllegalStateException.class, () -> s.remove(OrderedHandleSet.NO_NODE));
        assertThrows(IllegalStateException.class, () -> s.remove(12345));
        assertThrows(IllegalStateException.class, () -> s.lastWithWeightAtLeast(0), "unweighted");
        assertEquals(1, s.size());
        s.checkInvariants();
    }

    @Test
    void setWeightKeepsTheSubtreeMaximaRight() {
        Random r = new Random(21);
        OrderedHandleSet s = new OrderedHandleSet(1, true, 0);
        TreeMap<Long, Long> model = new TreeMap<>();
        Map<Long, Integer> nodes = new HashMap<>();
        for (int i = 0; i < 2000; i++) {
            long k = r.nextInt(100_000);
            if (!model.containsKey(k)) {
                long w = r.nextInt(10_000);
                nodes.put(k, s.insert(k, 0, 0, i, w));
                model.put(k, w);
            }
        }
        List<Long> keys = new ArrayList<>(model.keySet());
        for (int i = 0; i < 5000; i++) {
            long k = keys.get(r.nextInt(keys.size()));
            long w = r.nextInt(10_000);
            s.setWeight(nodes.get(k), w);
            model.put(k, w);
            long min = r.nextInt(10_000);
            Long last = null;
            for (Map.Entry<Long, Long> e : model.descendingMap().entrySet()) {
                if (e.getValue() >= min) {
                    last = e.getKey();
                    break;
                }
            }
            int found = s.lastWithWeightAtLeast(min);
            assertEquals(last == null ? OrderedHandleSet.NO_NODE : (int) nodes.get(last), found);
            if (found != OrderedHandleSet.NO_NODE) {
                assertEquals(model.get(last), s.weight(found));
            }
        }
        s.checkInvariants();
    }


    // ---------------------------------------------------------------------- the B-tree's structural edge cases

    /** A set and its model, checked in full after every change: invariants, walks, finds, bounds, weights. */
    private static final class Checked {
        final OrderedHandleSet set;
        final boolean weighted;
        final TreeMap<Long, Entry> model = new TreeMap<>();

        Checked(boolean weighted) {
            this.weighted = weighted;
            set = new OrderedHandleSet(3, weighted, 0);
        }

        /** Keys are (7, 1024, c): equal in their leading longs, as a pool's blocks of one stream and size are. */
        int insert(long c, long weight) {
            int node = set.insert(7, 1024, c, (int) c, weight);
            model.put(c, new Entry((int) c, weight, node));
            check();
            return node;
        }

        void remove(long c) {
            Entry e = model.remove(c);
            set.remove(e.node);
            check();
        }

        void check() {
            set.checkInvariants();
            assertEquals(model.size(), set.size());
            List<Long> forward = new ArrayList<>();
            for (int n = set.first(); n != OrderedHandleSet.NO_NODE; n = set.next(n)) {
                forward.add(set.key(n, 2));
                assertEquals(model.get(set.key(n, 2)).node, n, "a node keeps its element");
                assertEquals((int) set.key(n, 2), set.handle(n));
            }
            assertEquals(new ArrayList<>(model.keySet()), forward);
            List<Long> backward = new ArrayList<>();
            for (int n = set.last(); n != OrderedHandleSet.NO_NODE; n = set.prev(n)) {
                backward.add(set.key(n, 2));
            }
            assertEquals(new ArrayList<>(model.descendingKeySet()), backward);
            for (Map.Entry<Long, Entry> e : model.entrySet()) {
                long c = e.getKey();
                assertEquals(e.getValue().node, set.find(7, 1024, c));
                assertEquals(e.getValue().node, set.lowerBound(7, 1024, c));
                // Between this key and the next (keys are even): across leaf boundaries and stale separators too.
                Map.Entry<Long, Entry> above = model.higherEntry(c);
                assertEquals(above == null ? OrderedHandleSet.NO_NODE : above.getValue().node,
                        set.lowerBound(7, 1024, c + 1), () -> "lower bound of " + (c + 1));
                assertEquals(OrderedHandleSet.NO_NODE, set.find(7, 1024, c + 1));
                if (weighted) {
                    assertEquals(e.getValue().weight, set.weight(e.getValue().node));
                }
            }
            assertEquals(model.isEmpty() ? OrderedHandleSet.NO_NODE : model.firstEntry().getValue().node,
                    set.lowerBound(7, 1024, Long.MIN_VALUE));
            assertEquals(model.isEmpty() ? OrderedHandleSet.NO_NODE : model.firstEntry().getValue().node,
                    set.lowerBound(7, 0, 0));
            assertEquals(OrderedHandleSet.NO_NODE, set.lowerBound(7, 1025, Long.MIN_VALUE));
            if (weighted) {
                for (long min : new long[] {0, 50, 99, 100}) {
                    assertEquals(expectedAfter(model, min), set.firstWithWeightAtLeast(min));
                    assertEquals(expectedAfter(model.descendingMap(), min), set.lastWithWeightAtLeast(min));
                }
            }
        }
    }

    /** A leaf holds 32 entries: the 33rd splits the root, and removing back down collapses it again. */
    @ParameterizedTest
    @CsvSource({"false", "true"})
    void rootSplitsWhenALeafIsFullAndCollapsesWhenEmptied(boolean weighted) {
        Checked c = new Checked(weighted);
        for (long k = 0; k < 32; k++) {
            c.insert(2 * k, k % 7 * 10);
        }
        assertEquals(0, c.set.treeHeight(), "32 entries fit one leaf");
        IllegalStateException dup = assertThrows(IllegalStateException.class, () -> c.set.insert(7, 1024, 20, 99));
        assertTrue(dup.getMessage().contains("already in the set, with handle 20"), dup.getMessage());
        assertEquals(0, c.set.treeHeight(), "a duplicate in a full leaf splits nothing");
        c.check();
        c.insert(64, 99);
        assertEquals(1, c.set.treeHeight(), "the 33rd entry splits the root leaf");
        // Below half (16) in either leaf: the removals borrow, then merge, and the root gives way to one leaf.
        for (long k = 0; k < 32; k += 2) {
            c.remove(2 * k);
        }
        assertEquals(0, c.set.treeHeight(), "merged back into one leaf, the inner root collapsed");
        while (!c.model.isEmpty()) {
            c.remove(c.model.firstKey());
        }
        assertEquals(OrderedHandleSet.NO_NODE, c.set.first());
        assertEquals(OrderedHandleSet.NO_NODE, c.set.last());
        c.insert(10, 1);
    }

    /**
     * Three levels (more than 32 · 32 / 2 elements in half-full leaves), built ascending, descending and
     * interleaved, then emptied from the front (borrowing from the right sibling, merging with it), from the back
     * (from the left sibling) and from the middle, checked in full after every change.
     */
    @ParameterizedTest
    @CsvSource({"ascending,front,false", "descending,back,false", "interleaved,middle,false", "ascending,back,true",
            "descending,front,true", "interleaved,middle,true"})
    void splitsBorrowsAndMergesAtEveryLevel(String fill, String drain, boolean weighted) {
        int n = 1100;
        Checked c = new Checked(weighted);
        for (int i = 0; i < n; i++) {
            long k = switch (fill) {
                case "ascending" -> i;
                case "descending" -> n - 1 - i;
                default -> i % 2 == 0 ? i / 2 : n - 1 - i / 2;
            };
            c.insert(2 * k, k * 37 % 101);
        }
        assertEquals(2, c.set.treeHeight(), "1,100 elements in leaves of 16 to 32 need two inner levels");
        int highest = c.set.treeHeight();
        while (!c.model.isEmpty()) {
            long k = switch (drain) {
                case "front" -> c.model.firstKey();
                case "back" -> c.model.lastKey();
                default -> {
                    List<Long> keys = new ArrayList<>(c.model.keySet());
                    yield keys.get(keys.size() / 2);
                }
            };
            c.remove(k);
            assertTrue(c.set.treeHeight() <= highest, "the tree never grows while it shrinks");
            highest = c.set.treeHeight();
        }
        assertEquals(0, c.set.treeHeight());
    }

    /** Nodes held by a caller stay valid while other removals and inserts split, borrow and merge around them. */
    @Test
    void heldNodesSurviveTheTreeReshapingAroundThem() {
        Checked c = new Checked(true);
        Random r = new Random(31);
        for (long k = 0; k < 2000; k++) {
            c.set.insert(7, 1024, 2 * k, (int) (2 * k), r.nextInt(100));
        }
        // Walk from the front and remove the element just stepped past, as the release loops do.
        int kept = 0;
        for (int node = c.set.first(); node != OrderedHandleSet.NO_NODE; ) {
            int here = node;
            node = c.set.next(node);
            if (c.set.key(here, 2) % 6 != 0) {
                c.set.remove(here);
            } else {
                kept++;
            }
        }
        c.set.checkInvariants();
        assertEquals(kept, c.set.size());
        for (int node = c.set.first(); node != OrderedHandleSet.NO_NODE; node = c.set.next(node)) {
            assertEquals(0, c.set.key(node, 2) % 6);
            assertEquals((int) c.set.key(node, 2), c.set.handle(node));
        }
        // And backwards, stepping before removing.
        for (int node = c.set.last(); node != OrderedHandleSet.NO_NODE; ) {
            int here = node;
            node = c.set.prev(node);
            if (c.set.key(here, 2) % 12 != 0) {
                c.set.remove(here);
            }
        }
        c.set.checkInvariants();
        for (int node = c.set.first(); node != OrderedHandleSet.NO_NODE; node = c.set.next(node)) {
            assertEquals(0, c.set.key(node, 2) % 12);
        }
        assertEquals(334, c.set.size());
    }

    /**
     * Runs of operations near one key, as an allocator's pools see them (the same sizes freed and allocated again,
     * now and then a jump elsewhere or past either end): inserts, removes, finds and lower bounds around the keys
     * just touched agree with a TreeMap while the leaves there split, borrow and merge.
     */
    @ParameterizedTest
    @CsvSource({"41,false", "42,true"})
    void localRunsOfOperationsAgreeWithATreeMap(long seed, boolean weighted) {
        Random r = new Random(seed);
        Checked c = new Checked(weighted);
        for (long k = 0; k < 1500; k++) {
            c.set.insert(7, 1024, 4 * k, (int) (4 * k), 1);
            c.model.put(4 * k, new Entry((int) (4 * k), 1, c.set.find(7, 1024, 4 * k)));
        }
        long here = 3000;
        for (int step = 0; step < 40_000; step++) {
            if (r.nextInt(200) == 0) {
                here = r.nextInt(6200) - 100; // a jump, also past either end
            }
            // Even keys, as Checked's full check expects (it looks between neighbours, at odd keys).
            long k = 2 * Math.max(-100, Math.min(3150, here / 2 + r.nextInt(21) - 10));
            Entry e = c.model.get(k);
            if (e != null && (r.nextInt(2) == 0 || c.model.size() > 2500)) {
                c.model.remove(k);
                c.set.remove(e.node);
            } else if (e == null && c.model.size() > 100) {
                int node = c.set.insert(7, 1024, k, (int) k, 1);
                c.model.put(k, new Entry((int) k, 1, node));
            }
            long q = k + r.nextInt(9) - 4;
            Long ceiling = c.model.ceilingKey(q);
            assertEquals(ceiling == null ? OrderedHandleSet.NO_NODE : c.model.get(ceiling).node,
                    c.set.lowerBound(7, 1024, q), () -> "lower bound of " + q);
            Entry at = c.model.get(q);
            assertEquals(at == null ? OrderedHandleSet.NO_NODE : at.node, c.set.find(7, 1024, q));
            assertEquals(c.model.size(), c.set.size());
            if (step % 500 == 0) {
                c.check();
            }
        }
        c.check();
    }
}
