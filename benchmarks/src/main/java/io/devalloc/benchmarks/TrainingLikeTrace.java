package io.devalloc.benchmarks;

import io.devalloc.replay.CompactTrace;
import io.devalloc.replay.TrainingLoopWorkload;
import io.devalloc.trace.TraceEvent;
import io.devalloc.trace.TraceFormat;
import io.devalloc.trace.TraceReader;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.List;

/**
 * A synthetic training-like trace of a given number of events, as a {@link CompactTrace}: the first events of
 * {@link TrainingLoopWorkload}'s loop over {@value #LAYERS} layers (weights and biases live throughout, per step the
 * saved activations of every layer, workspaces freed at once, gradients kept until the optimizer step; at most 325
 * blocks live at once in the first million events, about 1,670 events per step), each malloc an {@code ALLOC} of its
 * slot (slots are reused like addresses) and each free a {@code FREE}. Blocks still live at the cut are never freed.
 *
 * <p>Deterministic (seed {@value #SEED}); stateless: thread-safe.
 */
final class TrainingLikeTrace {

    static final int LAYERS = 64;
    static final long SEED = 42;

    private TrainingLikeTrace() {
    }

    /** The first {@code events} events (fewer only past 1,000 steps, about 1.7 million events). */
    static CompactTrace of(int events) {
        int steps = Math.min(TrainingLoopWorkload.Spec.MAX_STEPS, events / 1_500 + 2);
        List<TrainingLoopWorkload.Operation> ops = TrainingLoopWorkload
                .generate(new TrainingLoopWorkload.Spec(LAYERS, steps, SEED)).operations();
        int count = Math.min(events, ops.size());
        try {
            return CompactTrace.read("training-like-" + count, () -> new TraceReader() {
                private int next;

                @Override
                public TraceFormat format() {
                    return TraceFormat.PYTORCH_CSV;
                }

                @Override
                public TraceEvent next() {
                    if (next == count) {
                        return null;
                    }
                    TrainingLoopWorkload.Operation op = ops.get(next);
                    next++;
                    TraceEvent.Kind kind = op.kind() == TrainingLoopWorkload.Kind.MALLOC
                            ? TraceEvent.Kind.ALLOC : TraceEvent.Kind.FREE;
                    long size = kind == TraceEvent.Kind.ALLOC ? op.bytes() : 0;
                    return new TraceEvent(kind, op.slot() + 1L, size, 0, 0, next + 1L);
                }

                @Override
                public void close() {
                    // Nothing to release: the operations are in memory.
                }
            });
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
