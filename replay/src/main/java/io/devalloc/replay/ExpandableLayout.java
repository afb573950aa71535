package io.devalloc.replay;

import io.devalloc.api.device.DeviceStream;
import io.devalloc.api.spi.PyTorchStateRestore;
import io.devalloc.replay.TraceScan.MapRow;
import io.devalloc.replay.TraceScan.Pre;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.NavigableMap;
import java.util.TreeMap;

/**
 * How a warm start rebuilds the expandable segments of a trace's start, for a caching allocator that runs with
 * {@code expandable_segments:True}: which presegment rows (each a mapped range, as PyTorch's snapshot shows an
 * expandable segment) belong to which segment, where each segment's reservation starts and how large it may be.
 * {@link WarmStart} then restores each segment ({@link PyTorchStateRestore#restoreExpandableSegment}), its ranges
 * at their recorded offsets from its base ({@link PyTorchStateRestore#restoreExpandableRange}) and the live blocks
 * in them.
 *
 * <ol>
 *   <li><b>Pool of a range.</b> A live block ({@code prealloc} row) inside it whose rounded size is at most 1 MiB
 *       means the small pool, a larger one the large pool (blocks of both in one range are an error). With no live
 *       block, the first {@code alloc} inside it in the trace, before an unmap or free touched it, says the same.
 *       With neither, a range that is not a multiple of {@code large_segment_size} is small-pool, else large. A
 *       range that is not whole pages of its pool (2 MiB small, {@code large_segment_size} large) cannot be a mapped
 *       range of an expandable segment, and neither can a trace with {@code segment_alloc}/{@code segment_free}
 *       rows: such a trace was recorded without expandable segments, and its presegments are restored as ordinary
 *       segments ({@link #ordinaryReason()}).</li>
 *   <li><b>Segments.</b> Ranges are grouped by (stream, pool) and taken in address order; a range joins the segment
 *       of the range before it unless it touches it (two mapped ranges of one segment that touch are one range: a
 *       reader shows touching ranges apart only when they belong to different segments), is not whole pages away
 *       from the segment's base, or would make the segment span more than the reserve of a new segment
 *       ({@link PyTorchStateRestore#expandableSegmentSize}). Usually there is one segment per (stream, pool). A range
 *       larger than that reserve is an error (the replay's reserve is smaller than the recording's, or the trace
 *       joined the ranges of two segments that lay side by side).</li>
 *   <li><b>Base.</b> A segment's reservation starts at its lowest range, or lower: at the lowest traced
 *       {@code segment_map} below it that it can hold. PyTorch maps the lowest unmapped address that fits, so a map
 *       into a hole below the first mapped range (pages unmapped before the window) starts at the segment's base. A
 *       map counts for a segment if it has the segment's stream and pool (the pool of the {@code alloc} it was made
 *       for, else a size that is not a multiple of {@code large_segment_size} is small-pool), lies whole pages
 *       below its lowest range with no other presegment in between, fits one reserve with the segment's ranges, and
 *       does not fit the reserve of the segment of the same stream and pool below.</li>
 *   <li><b>Placement</b> (a simulated device, whose scripted addresses apply to reservations): each segment is
 *       reserved at its recorded base, in address order, with at most the distance to the next segment's base (and
 *       to the top of the address space) as its reserve, so that segments recorded closer together than a full
 *       reserve fit side by side. A segment whose base lies outside the address space, is not aligned to the
 *       device's granularity, or whose ranges do not fit below the next base, is reserved after the others wherever
 *       the device puts it (with the full reserve; its ranges keep their offsets) and a note says so.</li>
 * </ol>
 *
 * <p><b>Limits.</b> A segment's base is exact when the window maps into the hole below its lowest range (or there
 * is none); otherwise it is the lowest range, which only matters for maps the window never makes. Its reserve can
 * end earlier than the recorded one's, which only matters when the window maps beyond the next segment. The replay
 * tags no stream with a reserve class, so every stream's segments reserve the same. With a reserve small enough
 * that one stream and pool filled several segments ({@code expandable_segments_reserve} below what the program
 * maps), the segments are told apart only where their ranges touch or cannot share one reserve: ranges of two
 * segments that could share one are restored into one, a traced map that could lie in either of two such segments
 * is counted for the lower one (it lowers no base), and segments the window creates are reserved top-down
 * above the restored ones where the recording put them wherever the driver chose; such replays may differ.
 */
final class ExpandableLayout {

    /** Where a simulated device can reserve: {@code [bottom, top)}, bases aligned to {@code granule}. */
    record AddressSpace(long bottom, long top, long granule) {
    }

    /**
     * One expandable segment to restore.
     *
     * @param recordedBase    where its reservation starts in the recording
     * @param maxReserveBytes the most it may reserve, 0 for the full reserve
     * @param placed          whether the device is scripted to reserve it at {@code recordedBase}
     * @param ranges          its presegment rows (mapped ranges), by address
     */
    record Segment(long stream, boolean small, long recordedBase, long maxReserveBytes, boolean placed,
                   List<Pre> ranges) {
        long end() {
            return ranges.getLast().end();
        }
    }

    /** A (stream, pool) whose ranges are planned together. */
    private record Group(long stream, boolean small) {
    }

    private final String ordinaryReason;
    private final List<Segment> segments;
    private final Map<Long, Boolean> smallRange;
    private final List<String> notes;

    private ExpandableLayout(String ordinaryReason, List<Segment> segments, Map<Long, Boolean> smallRange,
                             List<String> notes) {
        this.ordinaryReason = ordinaryReason;
        this.segments = segments;
        this.smallRange = smallRange;
        this.notes = notes;
    }

    /**
     * Why the presegments must be restored as ordinary (cudaMalloc'd) segments, or null when they are restored as
     * the mapped ranges of {@link #segments()}.
     */
    String ordinaryReason() {
        return ordinaryReason;
    }

    /** The segments in the order to create them: the placed ones by base, then the others. */
    List<Segment> segments() {
        return segments;
    }

    /** Whether the presegment at {@code address} is a range of the small pool. */
    boolean isSmall(long address) {
        Boolean small = smallRange.get(address);
        if (small == null) {
            throw new IllegalArgumentException("no presegment at 0x" + Long.toHexString(address));
        }
        return small;
    }

    /** What the replay's notes should say about approximations (segments that could not be placed). */
    List<String> notes() {
        return notes;
    }

    /** The recorded bases of the placed segments, in creation order: the simulator's scripted addresses. */
    List<Long> scriptedAddresses() {
        List<Long> out = new ArrayList<>();
        for (Segment s : segments) {
            if (s.placed()) {
                out.add(s.recordedBase());
            }
        }
        return out;
    }

    /**
     * Plans the restore of {@code scan}'s presegments into {@code allocator}, which runs with expandable segments.
     *
     * @param space where a simulated device can reserve, or null for a device that cannot place reservations
     * @throws IllegalArgumentException naming the row, if a presegment holds live blocks of both pools
     */
    static ExpandableLayout plan(PyTorchStateRestore allocator, TraceScan scan, AddressSpace space) {
        PyTorchStateRestore options = allocator;
        if (!options.expandableSegments()) {
            throw new IllegalStateException("allocator runs without expandable segments");
        }
        if (scan.segmentAllocs + scan.segmentFrees > 0) {
            return ordinary("the trace has segment_alloc or segment_free rows: it was recorded without expandable"
                    + " segments");
        }
        long largePage = options.largeSegmentSize();
        Map<Long, Boolean> smallRange = new HashMap<>();
        NavigableMap<Long, List<Pre>> bySegment = scan.blocksBySegment();
        for (var e : bySegment.entrySet()) {
            Pre range = scan.presegmentAt(e.getKey());
            boolean small = poolOf(options, scan, range, e.getValue());
            long page = small ? options.smallSegmentSize() : largePage;
            if (range.size() % page != 0) {
                return ordinary("the presegment at 0x" + Long.toHexString(range.address()) + " (" + range.size()
                        + " B, " + (small ? "small" : "large") + " pool) is not whole pages of " + page + " B, as"
                        + " every mapped range of an expandable segment is: the trace was recorded without"
                        + " expandable segments");
            }
            smallRange.put(range.address(), small);
        }

        // Segments: by (stream, pool), in address order.
        long smallReserve = allocator.expandableSegmentSize(DeviceStream.DEFAULT, true);
        long largeReserve = allocator.expandableSegmentSize(DeviceStream.DEFAULT, false);
        Map<Group, List<Pre>> groups = new LinkedHashMap<>();
        List<Pre> byAddress = new ArrayList<>(scan.presegmentRows);
        byAddress.sort(Comparator.comparingLong(Pre::address));
        for (Pre r : byAddress) {
            groups.computeIfAbsent(new Group(r.stream(), smallRange.get(r.address())), k -> new ArrayList<>()).add(r);
        }
        List<Building> building = new ArrayList<>();
        for (var g : groups.entrySet()) {
            long stream = g.getKey().stream();
            boolean small = g.getKey().small();
            long page = small ? options.smallSegmentSize() : largePage;
            long reserve = small ? smallReserve : largeReserve;
            Building current = null;
            for (Pre r : g.getValue()) {
                if (r.size() > reserve) {
                    throw new IllegalArgumentException(scan.trace + ":" + r.line() + ": the presegment of " + r.size()
                            + " B at 0x" + Long.toHexString(r.address()) + " is larger than an expandable segment of"
                            + " the " + (small ? "small" : "large") + " pool reserves here (" + reserve + " B): replay"
                            + " with the recording's expandable_segments_reserve, or the trace joined mapped ranges of"
                            + " two segments that lay side by side");
                }
                if (current == null || r.address() == current.end() || (r.address() - current.base) % page != 0
                        || r.end() - current.base > reserve) {
                    current = new Building(stream, small, page, reserve, r.address());
                    building.add(current);
                }
                current.ranges.add(r);
            }
        }
        lowerBases(building, byAddress, scan.mapRows, options);

        // Placement, in address order.
        building.sort(Comparator.comparingLong(b -> b.base));
        List<Segment> atBase = new ArrayList<>();
        List<Segment> elsewhere = new ArrayList<>();
        List<String> notes = new ArrayList<>();
        for (int i = 0; i < building.size(); i++) {
            Building b = building.get(i);
            if (space == null) {
                // The device puts every reservation where it likes: created in address order, full reserves.
                atBase.add(b.segment(0, false));
                continue;
            }
            long limit = i + 1 < building.size() ? Math.min(building.get(i + 1).base, space.top()) : space.top();
            long cap = Math.min(b.reserve, limit - b.base);
            long span = (b.end() - b.base + space.granule() - 1) / space.granule() * space.granule();
            String problem = null;
            if (b.base < space.bottom() || b.base >= space.top()) {
                problem = "it lies outside the simulated address space [0x" + Long.toHexString(space.bottom()) + ", 0x"
                        + Long.toHexString(space.top()) + ")";
            } else if (b.base % space.granule() != 0) {
                problem = "it is not aligned to the device's " + space.granule() + " B granularity";
            } else if (span > cap) {
                problem = "its ranges reach past the next segment's base or the address space's top";
            }
            if (problem == null) {
                atBase.add(b.segment(cap, true));
            } else {
                elsewhere.add(b.segment(0, false));
                notes.add("warm start: the expandable segment of stream " + b.stream + "'s " + (b.small ? "small"
                        : "large") + " pool recorded at 0x" + Long.toHexString(b.base) + " could not be reserved"
                        + " there (" + problem + "): the device put it elsewhere, its mapped ranges keep their"
                        + " offsets from its base, and ties between equal free blocks or unmapped ranges may go"
                        + " elsewhere than in the recording");
            }
        }
        List<Segment> order = new ArrayList<>(atBase);
        order.addAll(elsewhere);
        return new ExpandableLayout(null, List.copyOf(order), smallRange, List.copyOf(notes));
    }

    private static ExpandableLayout ordinary(String reason) {
        return new ExpandableLayout(reason, List.of(), Map.of(), List.of());
    }

    /** The pool of a range (rule 1 in the class documentation). */
    private static boolean poolOf(PyTorchStateRestore options, TraceScan scan, Pre range, List<Pre> blocks) {
        Pre first = null;
        for (Pre b : blocks) {
            if (b.size() <= 0) {
                continue;
            }
            if (first == null) {
                first = b;
            } else if (isSmallRequest(options, b.size()) != isSmallRequest(options, first.size())) {
                throw new IllegalArgumentException(scan.trace + ":" + b.line() + ": the prealloc block at 0x"
                        + Long.toHexString(b.address()) + " (" + b.size() + " B) and the one at 0x"
                        + Long.toHexString(first.address()) + " (" + first.size() + " B) are of different pools,"
                        + " but lie in one presegment (0x" + Long.toHexString(range.address()) + ", " + range.size()
                        + " B); a segment belongs to one pool");
            }
        }
        if (first != null) {
            return isSmallRequest(options, first.size());
        }
        long firstAlloc = scan.firstAllocIn(range.address());
        if (firstAlloc > 0) {
            return isSmallRequest(options, firstAlloc);
        }
        return range.size() % options.largeSegmentSize() != 0;
    }

    private static boolean isSmallRequest(PyTorchStateRestore options, long requested) {
        return options.isSmallRequest(options.roundSize(requested));
    }

    /** Rule 3 in the class documentation: lowers bases to the traced maps below the lowest ranges. */
    private static void lowerBases(List<Building> segments, List<Pre> allRanges, List<MapRow> maps,
                                   PyTorchStateRestore options) {
        if (maps.isEmpty()) {
            return;
        }
        TreeMap<Long, Long> rangeEnds = new TreeMap<>();
        for (Pre r : allRanges) {
            rangeEnds.put(r.address(), r.end());
        }
        segments.sort(Comparator.comparingLong(b -> b.base));
        for (int i = 0; i < segments.size(); i++) {
            Building s = segments.get(i);
            Building below = null;
            for (int j = i - 1; j >= 0 && below == null; j--) {
                Building o = segments.get(j);
                if (o.stream == s.stream && o.small == s.small) {
                    below = o;
                }
            }
            long lowest = s.firstRange();
            for (MapRow m : maps) {
                boolean small = m.requested() > 0 ? isSmallRequest(options, m.requested())
                        : m.size() % options.largeSegmentSize() != 0;
                if (m.stream() != s.stream || small != s.small || m.end() > lowest || m.address() >= s.base
                        || (lowest - m.address()) % s.page != 0 || s.end() - m.address() > s.reserve) {
                    continue;
                }
                var between = rangeEnds.lowerEntry(lowest);
                if (between != null && between.getValue() > m.address()) {
                    continue;
                }
                if (below != null && m.end() - below.base <= below.reserve) {
                    continue;
                }
                s.base = m.address();
            }
        }
    }

    /** A segment while it is planned. */
    private static final class Building {
        final long stream;
        final boolean small;
        final long page;
        final long reserve;
        long base;
        final List<Pre> ranges = new ArrayList<>();

        Building(long stream, boolean small, long page, long reserve, long base) {
            this.stream = stream;
            this.small = small;
            this.page = page;
            this.reserve = reserve;
            this.base = base;
        }

        long firstRange() {
            return ranges.getFirst().address();
        }

        long end() {
            return ranges.getLast().end();
        }

        Segment segment(long maxReserveBytes, boolean placed) {
            return new Segment(stream, small, base, maxReserveBytes, placed, List.copyOf(ranges));
        }
    }
}
