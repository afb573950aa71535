package io.devalloc.replay;

import io.devalloc.api.device.DeviceStream;
import io.devalloc.api.spi.PyTorchStateRestore;
import io.devalloc.replay.TraceScan.Pre;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.NavigableMap;
import java.util.function.LongFunction;

/**
 * Seeds a caching allocator with a warm PyTorch trace's state from when recording began: each {@code presegment}
 * row becomes {@link PyTorchStateRestore#restoreSegment}, or, when the allocator runs with expandable segments and
 * an {@link ExpandableLayout} is given, a mapped range of a restored expandable segment
 * ({@link PyTorchStateRestore#restoreExpandableSegment}, {@link PyTorchStateRestore#restoreExpandableRange}); each
 * {@code prealloc} row becomes {@link PyTorchStateRestore#restoreAllocation} with the block size PyTorch must have made
 * for it (see the package documentation for the rules). The same logic as the caching module's test-only
 * {@code TraceReplayer}, on the first pass's rows instead of a trace held in memory.
 *
 * <p>On a simulated device scripted with the presegment addresses (or the expandable segments' bases) every segment
 * sits at its recorded address; on any other device the segments land elsewhere and each prealloc block keeps its
 * offset within its segment (each range its offset from its expandable segment's base).
 */
final class WarmStart {


    /**
     * PyTorch's small-pool segment size ({@code kSmallBuffer}, 2 MiB): in a PyTorch trace a 2 MiB segment is a
     * small-pool segment. A property of the recorded traces, whatever allocator replays them.
     */
    static final long PYTORCH_SMALL_SEGMENT = 2L << 20;

    /** How the size of a restored block was inferred. */
    enum SizeRule {
        /** The rounded request: PyTorch split the rest off (or there was no rest). */
        ROUNDED,
        /** The rounded request plus the room up to the next live block or the segment's end (at most 1 MiB). */
        TAIL_TO_BOUNDARY,
        /** The rounded request plus the room up to where the trace's first alloc in the free space after it lands. */
        TAIL_TO_FIRST_ALLOC
    }

    /** One restored block. */
    record RestoredBlock(long traceAddress, long address, long requested, long rounded, long blockSize, SizeRule rule) {
    }

    private WarmStart() {
    }

    /**
     * Restores the scan's presegments and prealloc blocks into {@code allocator}; records each block in {@code live}
     * (trace address → our address).
     *
     * @param streams the device stream of a trace stream
     * @return the restored blocks, in prealloc row order
     * @throws IllegalArgumentException naming the row, if the rows do not describe a state PyTorch could have had
     */
    static List<RestoredBlock> seed(PyTorchStateRestore allocator, TraceScan scan, LongFunction<DeviceStream> streams,
                                    KeyMap live) {
        return seed(allocator, scan, null, streams, live);
    }

    /**
     * As {@link #seed(PyTorchStateRestore, TraceScan, LongFunction, KeyMap)}, restoring the presegments as the mapped
     * ranges of {@code layout}'s expandable segments when it is given and has no
     * {@link ExpandableLayout#ordinaryReason() reason} against it.
     */
    static List<RestoredBlock> seed(PyTorchStateRestore allocator, TraceScan scan, ExpandableLayout layout,
                                    LongFunction<DeviceStream> streams, KeyMap live) {
        boolean expandable = layout != null && layout.ordinaryReason() == null;
        Map<Long, Long> ourSegment = expandable ? restoreRanges(allocator, scan, layout, streams)
                : restoreSegments(allocator, scan, streams);
        // Rule 1 (should_split), then rule 3 (the look-ahead) for blocks rule 1 left at their rounded size.
        Map<Long, RestoredBlock> byAddress = new HashMap<>();
        NavigableMap<Long, List<Pre>> bySegment = scan.blocksBySegment();
        for (var e : bySegment.entrySet()) {
            Pre seg = scan.presegmentAt(e.getKey());
            boolean small = expandable ? layout.isSmall(seg.address()) : seg.size() == allocator.smallSegmentSize();
            long segmentBase = ourSegment.get(seg.address());
            List<Pre> blocks = e.getValue();
            for (int i = 0; i < blocks.size(); i++) {
                Pre b = blocks.get(i);
                long boundary = i + 1 < blocks.size() ? blocks.get(i + 1).address() : seg.end();
                long rounded = allocator.roundSize(b.size());
                long room = boundary - b.address();
                if (rounded > room) {
                    throw new IllegalArgumentException(scan.trace + ":" + b.line() + ": the prealloc block at 0x"
                            + Long.toHexString(b.address()) + " (" + b.size() + " B, " + rounded + " B rounded) does"
                            + " not fit in the " + room + " B before the next block or its segment's end");
                }
                long blockSize = inferBlockSize(allocator, rounded, room, small, expandable);
                SizeRule rule = blockSize == rounded ? SizeRule.ROUNDED : SizeRule.TAIL_TO_BOUNDARY;
                // Expandable segments split every remainder of 512 B or more: no unsplit tail to look for.
                if (!small && !expandable && blockSize == rounded && b.address() + rounded < boundary) {
                    long first = scan.firstAllocAfter(b.address());
                    long tail = first < 0 ? 0 : first - (b.address() + rounded);
                    if (allocator.mayKeepTail(rounded, tail)) {
                        blockSize = rounded + tail;
                        rule = SizeRule.TAIL_TO_FIRST_ALLOC;
                    }
                }
                long ours = segmentBase + (b.address() - seg.address());
                byAddress.put(b.address(), new RestoredBlock(b.address(), ours, b.size(), rounded, blockSize, rule));
            }
        }
        List<RestoredBlock> restored = new ArrayList<>(scan.preallocRows.size());
        for (Pre b : scan.preallocRows) {
            RestoredBlock r = byAddress.get(b.address());
            if (b.size() > 0) {
                try {
                    allocator.restoreAllocation(r.address(), r.blockSize(), b.size(), streams.apply(b.stream()));
                } catch (IllegalArgumentException e) {
                    throw new IllegalArgumentException(scan.trace + ":" + b.line() + ": cannot restore the prealloc"
                            + " block at 0x" + Long.toHexString(b.address()) + ": " + e.getMessage(), e);
                }
            }
            live.put(b.address(), b.size() > 0 ? r.address() : 0, EventDispatch.MISSING);
            restored.add(r);
        }
        return restored;
    }

    /** Each presegment as an ordinary segment, in row order: with scripted addresses, at its recorded address. */
    private static Map<Long, Long> restoreSegments(PyTorchStateRestore allocator, TraceScan scan,
                                                   LongFunction<DeviceStream> streams) {
        Map<Long, Long> ourSegment = new HashMap<>();
        for (Pre s : scan.presegmentRows) {
            long ours;
            try {
                ours = allocator.restoreSegment(s.size(), streams.apply(s.stream()));
            } catch (IllegalArgumentException | IllegalStateException e) {
                throw new IllegalArgumentException(scan.trace + ":" + s.line() + ": cannot restore the presegment of "
                        + s.size() + " B at 0x" + Long.toHexString(s.address()) + ": " + e.getMessage(), e);
            }
            ourSegment.put(s.address(), ours);
        }
        return ourSegment;
    }

    /**
     * Each expandable segment of {@code layout}, in its order (with scripted addresses the placed ones reserve at
     * their recorded bases), then its ranges at their recorded offsets from its base.
     */
    private static Map<Long, Long> restoreRanges(PyTorchStateRestore allocator, TraceScan scan, ExpandableLayout layout,
                                                 LongFunction<DeviceStream> streams) {
        Map<Long, Long> ourRange = new HashMap<>();
        for (ExpandableLayout.Segment s : layout.segments()) {
            long base;
            try {
                base = allocator.restoreExpandableSegment(streams.apply(s.stream()), s.small(), s.maxReserveBytes());
            } catch (IllegalArgumentException | IllegalStateException e) {
                throw new IllegalArgumentException(scan.trace + ":" + s.ranges().getFirst().line() + ": cannot restore"
                        + " the expandable segment (" + (s.small() ? "small" : "large") + " pool) recorded at 0x"
                        + Long.toHexString(s.recordedBase()) + ": " + e.getMessage(), e);
            }
            for (Pre r : s.ranges()) {
                long ours = base + (r.address() - s.recordedBase());
                try {
                    allocator.restoreExpandableRange(ours, r.size());
                } catch (IllegalArgumentException | IllegalStateException e) {
                    throw new IllegalArgumentException(scan.trace + ":" + r.line() + ": cannot restore the presegment"
                            + " of " + r.size() + " B at 0x" + Long.toHexString(r.address()) + " as a mapped range of"
                            + " the expandable segment recorded at 0x" + Long.toHexString(s.recordedBase()) + ": "
                            + e.getMessage(), e);
                }
                ourRange.put(r.address(), ours);
            }
        }
        return ourRange;
    }

    /**
     * {@link #inferBlockSize(PyTorchStateRestore, long, long, boolean, boolean)} for a segment that is not expandable.
     */
    static long inferBlockSize(PyTorchStateRestore allocator, long rounded, long room, boolean small) {
        return inferBlockSize(allocator, rounded, room, small, false);
    }

    /**
     * The size of a live block PyTorch made for a request that rounds to {@code rounded}, given the room up to the
     * next live block or the segment's (or mapped range's) end: PyTorch splits the remainder off only when
     * {@code should_split} says so (small pool, or any expandable segment: remainder &ge; 512 B; large pool:
     * size &lt; max_split_size and remainder &gt; 1 MiB). In the large pool of ordinary segments every free block is
     * larger than 1 MiB, so room of at most 1 MiB past the rounded size can only be this block's unsplit tail.
     */
    static long inferBlockSize(PyTorchStateRestore allocator, long rounded, long room, boolean small,
                               boolean expandable) {
        long remainder = room - rounded;
        if (remainder < 0) {
            throw new IllegalArgumentException("a block of " + rounded + " B does not fit in " + room + " B");
        }
        boolean split = allocator.shouldSplit(rounded, remainder, small, expandable);
        return split || remainder == 0 ? rounded : room;
    }
}
