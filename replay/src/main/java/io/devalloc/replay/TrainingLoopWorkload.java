package io.devalloc.replay;

import io.devalloc.api.DeviceAllocator;
import io.devalloc.api.device.DeviceStream;
import io.devalloc.api.error.OutOfMemoryException;
import java.util.AbstractList;
import java.util.ArrayDeque;
import java.util.Arrays;
import java.util.List;
import java.util.Objects;
import java.util.RandomAccess;
import java.util.SplittableRandom;

/**
 * A synthetic training loop as a deterministic sequence of allocations and frees: the allocation pattern of a
 * multi-layer network trained for some steps, without any arithmetic.
 *
 * <p>The model is a stack of {@code layers} fully connected layers whose widths are drawn from
 * {@value #MIN_WIDTH}..{@value #MAX_WIDTH}. Its shape follows what a framework does on a GPU:
 * <ol>
 *   <li><b>Setup</b>: every layer's weight ({@code 4·in·out} bytes, float32) and bias ({@code 4·out}) are
 *       allocated once and live until teardown.</li>
 *   <li><b>Forward</b>, per step: the input batch ({@code tokens·width·4}, where the token count varies per step
 *       as batches of variable-length sequences do), then per layer the saved pre-activation, layer-norm
 *       statistics and activation, plus workspaces and small reduction buffers that are freed at once; finally a
 *       per-token loss buffer.</li>
 *   <li><b>Backward</b>: the output gradient, then per layer in reverse order the weight and bias gradients
 *       (kept until the optimizer step), short-lived workspaces, the input gradient, and the release of that
 *       layer's saved activations.</li>
 *   <li><b>Optimizer</b>: per layer an update buffer the size of the weight and a small norm buffer, both freed
 *       at once, then the layer's gradients are freed.</li>
 *   <li><b>Teardown</b>: weights and biases are freed in reverse order, so every allocation is freed by the
 *       end.</li>
 * </ol>
 * With the defaults (12 layers, 20 steps) that is about 3,200 allocations from 128 bytes to at most 64 MiB, and
 * the live total peaks at 0.3 to 1 GiB depending on the seed (below 1.6 GiB even if every layer drew the widest
 * width), so it runs on host memory as well as on a simulated GPU.
 *
 * <p>The same {@link Spec} always yields the same operations ({@link SplittableRandom} is specified to produce the
 * same sequence for a seed on every JVM), so demos, tests and benchmarks can compare allocators on identical
 * input. Operations are stored in flat arrays and {@link #replay(DeviceAllocator, DeviceStream)} walks them
 * through the raw {@code malloc}/{@code free} path, so the loop itself creates no objects. Immutable and
 * thread-safe.
 */
public final class TrainingLoopWorkload {

    /** Narrowest layer width in elements. */
    public static final int MIN_WIDTH = 1024;
    /** Widest layer width in elements. */
    public static final int MAX_WIDTH = 4096;

    // Widths are multiples of 512, as real models pick them for the hardware's tile sizes.
    private static final int[] WIDTHS = {1024, 1536, 2048, 2560, 3072, 4096};
    private static final int FLOAT_BYTES = 4;
    // Tokens per step (batch × sequence length) vary from step to step, as variable-length batches do.
    private static final int TOKEN_QUANTUM = 256;
    private static final int MAX_TOKEN_QUANTA = 4;
    // Reduction results (per-row maxima, norms, counters) are tiny; a few hundred bytes is typical.
    private static final int SMALL_BUFFER_MIN = 128;
    private static final int SMALL_BUFFER_MAX = 1024;

    /** Whether an operation allocates or frees. */
    public enum Kind { MALLOC, FREE }

    /** The part of the training loop an operation belongs to. */
    public enum Phase { SETUP, FORWARD, BACKWARD, OPTIMIZER, TEARDOWN }

    /**
     * One allocation or free.
     *
     * @param kind  whether it allocates or frees
     * @param slot  which live allocation it makes or frees: a {@code MALLOC} fills the slot and the matching
     *              {@code FREE} empties it; slots are reused once freed, so there are {@link #slotCount()} of them
     * @param bytes the size allocated, or for a free the size of the allocation it frees
     * @param phase the part of the loop it belongs to
     * @param step  the training step, 0-based; -1 for setup and teardown
     */
    public record Operation(Kind kind, int slot, long bytes, Phase phase, int step) {
    }

    /**
     * What to generate.
     *
     * @param layers number of layers, 1 to {@value #MAX_LAYERS}
     * @param steps  number of training steps, 1 to {@value #MAX_STEPS}
     * @param seed   the random seed; the same spec always yields the same operations
     */
    public record Spec(int layers, int steps, long seed) {

        /** Upper bound on layers: it keeps weights (up to 64 MiB each) within what a host can map. */
        public static final int MAX_LAYERS = 64;
        /** Upper bound on steps: it keeps the operation arrays within a few tens of MiB of heap. */
        public static final int MAX_STEPS = 1000;

        public static final int DEFAULT_LAYERS = 12;
        public static final int DEFAULT_STEPS = 20;
        public static final long DEFAULT_SEED = 42;

        /**
         * @throws IllegalArgumentException if layers or steps are out of range
         */
        public Spec {
            if (layers < 1 || layers > MAX_LAYERS) {
                throw new IllegalArgumentException("layers must be between 1 and " + MAX_LAYERS + ", got " + layers);
            }
            if (steps < 1 || steps > MAX_STEPS) {
                throw new IllegalArgumentException("steps must be between 1 and " + MAX_STEPS + ", got " + steps);
            }
        }

        /** 12 layers, 20 steps, seed 42. */
        public static Spec defaults() {
            return new Spec(DEFAULT_LAYERS, DEFAULT_STEPS, DEFAULT_SEED);
        }
    }

    /**
     * What a replay did.
     *
     * @param mallocs            malloc calls made (one per {@code MALLOC} operation)
     * @param frees              free calls made for allocations that succeeded
     * @param outOfMemoryErrors  mallocs refused with {@link OutOfMemoryException}; their frees were skipped
     * @param elapsedNanos       wall time of the whole loop, by {@link System#nanoTime()}
     */
    public record ReplayResult(long mallocs, long frees, long outOfMemoryErrors, long elapsedNanos) {

        /** Mean wall time per malloc+free pair, in nanoseconds (0 when nothing was allocated). */
        public double meanNanosPerMallocFree() {
            return mallocs == 0 ? 0 : (double) elapsedNanos / mallocs;
        }
    }

    private final Spec spec;
    private final int[] widths;
    private final byte[] kinds;
    private final byte[] phases;
    private final int[] steps;
    private final int[] slots;
    private final long[] bytes;
    private final int slotCount;
    private final long allocationCount;
    private final long peakLiveBytes;
    private final long smallestAllocation;
    private final long largestAllocation;

    private TrainingLoopWorkload(Spec spec, int[] widths, Builder b) {
        this.spec = spec;
        this.widths = widths;
        this.kinds = Arrays.copyOf(b.kinds, b.size);
        this.phases = Arrays.copyOf(b.phases, b.size);
        this.steps = Arrays.copyOf(b.steps, b.size);
        this.slots = Arrays.copyOf(b.slots, b.size);
        this.bytes = Arrays.copyOf(b.bytes, b.size);
        this.slotCount = b.slotCount;
        this.allocationCount = b.allocations;
        this.peakLiveBytes = b.peakLive;
        this.smallestAllocation = b.smallest;
        this.largestAllocation = b.largest;
    }

    /** The workload for {@link Spec#defaults()}. */
    public static TrainingLoopWorkload generate() {
        return generate(Spec.defaults());
    }

    /** Generates the operations for {@code spec}; the same spec always gives the same operations. */
    public static TrainingLoopWorkload generate(Spec spec) {
        Objects.requireNonNull(spec, "spec");
        SplittableRandom random = new SplittableRandom(spec.seed());
        int layers = spec.layers();
        int[] widths = new int[layers + 1];
        for (int i = 0; i <= layers; i++) {
            widths[i] = WIDTHS[random.nextInt(WIDTHS.length)];
        }
        Builder b = new Builder();

        int[] weight = new int[layers];
        int[] bias = new int[layers];
        b.phase(Phase.SETUP, -1);
        for (int l = 0; l < layers; l++) {
            weight[l] = b.malloc(weightBytes(widths, l));
            bias[l] = b.malloc((long) FLOAT_BYTES * widths[l + 1]);
        }

        int[] preActivation = new int[layers];
        int[] normStats = new int[layers];
        int[] activation = new int[layers];
        int[] weightGrad = new int[layers];
        int[] biasGrad = new int[layers];
        for (int step = 0; step < spec.steps(); step++) {
            long tokens = (long) TOKEN_QUANTUM * (1 + random.nextInt(MAX_TOKEN_QUANTA));

            b.phase(Phase.FORWARD, step);
            int input = b.malloc(tokens * widths[0] * FLOAT_BYTES);
            for (int l = 0; l < layers; l++) {
                long out = tokens * widths[l + 1] * FLOAT_BYTES;
                preActivation[l] = b.malloc(out);
                temporaries(b, random, 2 + random.nextInt(3), out);
                normStats[l] = b.malloc(tokens * 2 * FLOAT_BYTES); // mean and reciprocal std per token
                activation[l] = b.malloc(out);
            }
            int loss = b.malloc(tokens * FLOAT_BYTES);

            b.phase(Phase.BACKWARD, step);
            int gradient = b.malloc(tokens * widths[layers] * FLOAT_BYTES);
            b.free(loss);
            for (int l = layers - 1; l >= 0; l--) {
                weightGrad[l] = b.malloc(weightBytes(widths, l));
                biasGrad[l] = b.malloc((long) FLOAT_BYTES * widths[l + 1]);
                temporaries(b, random, 1 + random.nextInt(3), tokens * widths[l + 1] * FLOAT_BYTES);
                int inputGradient = b.malloc(tokens * widths[l] * FLOAT_BYTES);
                // The layer's saved tensors are dead once its input gradient exists.
                b.free(activation[l]);
                b.free(normStats[l]);
                b.free(preActivation[l]);
                b.free(gradient);
                gradient = inputGradient;
            }
            b.free(gradient);
            b.free(input);

            b.phase(Phase.OPTIMIZER, step);
            for (int l = 0; l < layers; l++) {
                int update = b.malloc(weightBytes(widths, l));
                int norm = b.malloc(smallBuffer(random));
                b.free(norm);
                b.free(update);
                b.free(weightGrad[l]);
                b.free(biasGrad[l]);
            }
        }

        b.phase(Phase.TEARDOWN, -1);
        for (int l = layers - 1; l >= 0; l--) {
            b.free(bias[l]);
            b.free(weight[l]);
        }
        return new TrainingLoopWorkload(spec, widths, b);
    }

    private static long weightBytes(int[] widths, int layer) {
        return (long) FLOAT_BYTES * widths[layer] * widths[layer + 1];
    }

    /** Short-lived buffers freed right after use: workspaces up to the layer's output size, or tiny reductions. */
    private static void temporaries(Builder b, SplittableRandom random, int count, long layerOutputBytes) {
        for (int i = 0; i < count; i++) {
            long size = random.nextInt(3) == 0 ? smallBuffer(random) : layerOutputBytes >> random.nextInt(4);
            b.free(b.malloc(size));
        }
    }

    private static long smallBuffer(SplittableRandom random) {
        // Multiples of 4 bytes: these hold float32 results.
        return SMALL_BUFFER_MIN + 4L * random.nextInt((SMALL_BUFFER_MAX - SMALL_BUFFER_MIN) / 4 + 1);
    }

    /** The spec it was generated from. */
    public Spec spec() {
        return spec;
    }

    /** The layer widths in elements: input width first, then each layer's output width. */
    public int[] layerWidths() {
        return widths.clone();
    }

    /** Number of operations (mallocs and frees). */
    public int size() {
        return kinds.length;
    }

    /** The operations in order, as an unmodifiable list view. */
    public List<Operation> operations() {
        return new OperationList();
    }

    /** How many allocations can be live at once; slots in operations are below this. */
    public int slotCount() {
        return slotCount;
    }

    /** Number of {@code MALLOC} operations (equal to the number of {@code FREE} operations). */
    public long allocationCount() {
        return allocationCount;
    }

    /** The most bytes live at once, as requested. */
    public long peakLiveBytes() {
        return peakLiveBytes;
    }

    /** The smallest single allocation. */
    public long smallestAllocation() {
        return smallestAllocation;
    }

    /** The largest single allocation. */
    public long largestAllocation() {
        return largestAllocation;
    }

    /**
     * Runs the operations against {@code allocator} through the raw {@link DeviceAllocator#malloc(long,
     * DeviceStream)} and {@link DeviceAllocator#free(long)} path. An allocation refused with
     * {@link OutOfMemoryException} is counted and its free skipped, so a workload that does not fit still runs to
     * the end and the allocator's stats show how often it ran out. Every other exception propagates; the caller
     * closes the allocator, which frees whatever was still live.
     */
    public ReplayResult replay(DeviceAllocator allocator, DeviceStream stream) {
        Objects.requireNonNull(allocator, "allocator");
        Objects.requireNonNull(stream, "stream");
        long[] addresses = new long[slotCount];
        long mallocs = 0;
        long frees = 0;
        long outOfMemory = 0;
        byte mallocKind = (byte) Kind.MALLOC.ordinal();
        long start = System.nanoTime();
        for (int i = 0; i < kinds.length; i++) {
            int slot = slots[i];
            if (kinds[i] == mallocKind) {
                mallocs++;
                try {
                    addresses[slot] = allocator.malloc(bytes[i], stream);
                } catch (OutOfMemoryException e) {
                    outOfMemory++;
                    addresses[slot] = 0;
                }
            } else if (addresses[slot] != 0) {
                allocator.free(addresses[slot]);
                addresses[slot] = 0;
                frees++;
            }
        }
        long elapsed = System.nanoTime() - start;
        return new ReplayResult(mallocs, frees, outOfMemory, elapsed);
    }

    /** {@link #replay(DeviceAllocator, DeviceStream)} on the default stream. */
    public ReplayResult replay(DeviceAllocator allocator) {
        return replay(allocator, DeviceStream.DEFAULT);
    }

    private final class OperationList extends AbstractList<Operation> implements RandomAccess {
        private static final Kind[] KINDS = Kind.values();
        private static final Phase[] PHASES = Phase.values();

        @Override
        public Operation get(int index) {
            Objects.checkIndex(index, kinds.length);
            return new Operation(KINDS[kinds[index]], slots[index], bytes[index], PHASES[phases[index]], steps[index]);
        }

        @Override
        public int size() {
            return kinds.length;
        }
    }

    /** Appends operations to growing arrays and hands out slots, reusing freed ones. */
    private static final class Builder {
        private byte[] kinds = new byte[4096];
        private byte[] phases = new byte[4096];
        private int[] steps = new int[4096];
        private int[] slots = new int[4096];
        private long[] bytes = new long[4096];
        private int size;

        private long[] slotBytes = new long[64];
        // A stack, so the most recently freed slot is reused first, as allocators' free lists tend to work.
        private final ArrayDeque<Integer> freeSlots = new ArrayDeque<>();
        private int slotCount;
        private long allocations;
        private long live;
        private long peakLive;
        private long smallest = Long.MAX_VALUE;
        private long largest;

        private Phase phase = Phase.SETUP;
        private int step = -1;

        void phase(Phase phase, int step) {
            this.phase = phase;
            this.step = step;
        }

        int malloc(long amount) {
            int slot;
            if (freeSlots.isEmpty()) {
                slot = slotCount++;
                if (slot == slotBytes.length) {
                    slotBytes = Arrays.copyOf(slotBytes, slotBytes.length * 2);
                }
            } else {
                slot = freeSlots.pop();
            }
            slotBytes[slot] = amount;
            allocations++;
            live += amount;
            peakLive = Math.max(peakLive, live);
            smallest = Math.min(smallest, amount);
            largest = Math.max(largest, amount);
            append(Kind.MALLOC, slot, amount);
            return slot;
        }

        void free(int slot) {
            long amount = slotBytes[slot];
            live -= amount;
            freeSlots.push(slot);
            append(Kind.FREE, slot, amount);
        }

        private void append(Kind kind, int slot, long amount) {
            if (size == kinds.length) {
                int capacity = kinds.length * 2;
                kinds = Arrays.copyOf(kinds, capacity);
                phases = Arrays.copyOf(phases, capacity);
                steps = Arrays.copyOf(steps, capacity);
                slots = Arrays.copyOf(slots, capacity);
                bytes = Arrays.copyOf(bytes, capacity);
            }
            kinds[size] = (byte) kind.ordinal();
            phases[size] = (byte) phase.ordinal();
            steps[size] = step;
            slots[size] = slot;
            bytes[size] = amount;
            size++;
        }
    }
}
