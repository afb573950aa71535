package io.devalloc.replay.report;

import static io.devalloc.replay.report.Markup.esc;
import static io.devalloc.replay.report.Markup.num;

import io.devalloc.api.snapshot.BlockSnapshot;
import io.devalloc.api.snapshot.BlockState;
import io.devalloc.api.snapshot.MemorySnapshot;
import io.devalloc.api.snapshot.SegmentSnapshot;
import io.devalloc.api.units.ByteSize;
import java.util.Arrays;
import java.util.List;

/**
 * The segment map of one snapshot, as inline SVG: the segments in address order, laid end to end along rows of
 * {@value #WIDTH} pixels like lines of text (a segment that reaches the end of a row carries on at the start of
 * the next), with a small gap between segments and each segment outlined; inside, every block is a rectangle
 * coloured by its state.
 *
 * <p>All maps of a report share one scale, so their lengths compare like the reserved bytes: the largest
 * snapshot fills {@value #MAX_ROWS} rows. Blocks narrower than a pixel are merged with their neighbours until the
 * merged run is a pixel wide; the run takes the colour of the state that holds most of its bytes, and its hover
 * title lists what it holds. Segments narrower than a pixel are merged the same way. So the number of rectangles
 * is bounded by the pixels of the map, not by the number of blocks.
 */
final class SegmentMap {

    static final int WIDTH = 1200;
    static final int MAX_ROWS = 5;
    private static final int ROW_HEIGHT = 22;
    private static final int ROW_GAP = 6;
    private static final double MAX_SEGMENT_GAP = 2.0;

    /** State order in legends and merged titles. */
    static final List<BlockState> STATES = List.of(BlockState.ALLOCATED, BlockState.PENDING_FREE, BlockState.FREE,
            BlockState.UNMAPPED);

    private SegmentMap() {
    }

    /**
     * How a state is shown: what people call it, the CSS class of its rectangles and their fill colour (the page's
     * style sheet uses the same values).
     */
    private record StateLook(String name, String cssClass, String colour) {
    }

    private static StateLook look(BlockState state) {
        return switch (state) {
            case ALLOCATED -> new StateLook("allocated", "st-allocated", "#3b5b92");
            case PENDING_FREE -> new StateLook("pending free", "st-pending", "#f0a030");
            case FREE -> new StateLook("free", "st-free", "#a9dba0");
            case UNMAPPED -> new StateLook("unmapped", "st-unmapped", "#e3e3e3");
        };
    }

    /** What people call a state. */
    static String stateName(BlockState state) {
        return look(state).name();
    }

    /** The CSS class of a state's rectangles. */
    static String stateClass(BlockState state) {
        return look(state).cssClass();
    }

    /** The fill colour of a state; the page's style sheet uses the same values. */
    static String stateColour(BlockState state) {
        return look(state).colour();
    }

    /**
     * The bytes per pixel that makes the largest of these snapshots fill {@value #MAX_ROWS} rows (gaps between
     * segments included); 1 when there is nothing to show.
     */
    static double bytesPerPixel(List<MemorySnapshot> snapshots) {
        double bpp = 0;
        for (MemorySnapshot s : snapshots) {
            int n = s.segments().size();
            double room = (double) MAX_ROWS * WIDTH - gap(n) * Math.max(0, n - 1);
            bpp = Math.max(bpp, s.totalSegmentBytes() / room);
        }
        return bpp > 0 ? bpp : 1;
    }

    /** The gap between segments: 2 px, less when there are so many segments that gaps would take over 10%. */
    static double gap(int segments) {
        return segments > 1 ? Math.min(MAX_SEGMENT_GAP, 0.1 * MAX_ROWS * WIDTH / (segments - 1)) : 0;
    }

    /** The legend of block states, with the bytes and blocks of each in this snapshot, as HTML. */
    static String legend(MemorySnapshot snapshot) {
        StringBuilder out = new StringBuilder(512);
        out.append("<div class=\"legend map-legend\">\n");
        for (BlockState state : STATES) {
            long blocks = 0;
            for (SegmentSnapshot seg : snapshot.segments()) {
                for (BlockSnapshot b : seg.blocks()) {
                    if (b.state() == state) {
                        blocks++;
                    }
                }
            }
            out.append("<span class=\"legend-entry\"><span class=\"swatch\" style=\"background:")
                    .append(stateColour(state)).append("\"></span>").append(stateName(state))
                    .append(" <span class=\"dim\">").append(Markup.bytes(snapshot.bytesIn(state))).append(" in ")
                    .append(Markup.grouped(blocks)).append(blocks == 1 ? " block" : " blocks")
                    .append("</span></span>\n");
        }
        out.append("</div>\n");
        return out.toString();
    }

    /** The map of one snapshot at the given scale, as an SVG element. */
    static String render(MemorySnapshot snapshot, double bytesPerPixel, String caption) {
        List<SegmentSnapshot> segments = snapshot.segments();
        double gap = gap(segments.size());
        double length = snapshot.totalSegmentBytes() / bytesPerPixel + gap * Math.max(0, segments.size() - 1);
        int rows = Math.max(1, (int) Math.ceil(length / WIDTH - 1e-9));
        int height = rows * ROW_HEIGHT + (rows - 1) * ROW_GAP;

        StringBuilder out = new StringBuilder(32_768);
        out.append("<svg class=\"map-svg\" viewBox=\"0 0 ").append(WIDTH).append(' ').append(height)
                .append("\" role=\"img\" aria-label=\"").append(esc(caption)).append("\">\n");
        out.append("<title>").append(esc(caption)).append("</title>\n");
        if (segments.isEmpty()) {
            out.append("<text class=\"empty\" x=\"").append(WIDTH / 2).append("\" y=\"").append(ROW_HEIGHT / 2 + 4)
                    .append("\">no segments</text>\n");
        }

        Painter painter = new Painter(out);
        StringBuilder outlines = new StringBuilder();
        double cursor = 0;
        for (SegmentSnapshot seg : segments) {
            double segWidth = seg.size() / bytesPerPixel;
            if (segWidth < 1) {
                painter.mergeSegment(seg, cursor, cursor + segWidth);
            } else {
                painter.flush();
                for (BlockSnapshot b : seg.blocks()) {
                    double x0 = cursor + clamp(b.address() - seg.address(), seg.size()) / bytesPerPixel;
                    double x1 = cursor + clamp(b.end() - seg.address(), seg.size()) / bytesPerPixel;
                    if (x1 - x0 >= 1) {
                        painter.flush();
                        painter.block(b, x0, x1);
                    } else {
                        painter.mergeBlock(b, x0, x1);
                    }
                }
                painter.flush();
                if (segWidth >= 2) {
                    String title = "segment " + ByteSize.hex(seg.address()) + " · " + Markup.bytesExact(seg.size())
                            + " · " + seg.pool() + " pool · stream " + seg.stream() + " · "
                            + Markup.grouped(seg.blocks().size()) + (seg.blocks().size() == 1 ? " block" : " blocks");
                    pieces(outlines, cursor, cursor + segWidth, "seg", title, false);
                }
            }
            cursor += segWidth + gap;
        }
        painter.flush();
        out.append(outlines);
        out.append("</svg>\n");
        return out.toString();
    }

    private static long clamp(long offset, long size) {
        return Math.max(0, Math.min(size, offset));
    }

    /**
     * Appends the rectangles that cover the linear range {@code [a, b)} of the map, split at row ends. When
     * {@code separate} is set and the range is wide, its last piece stops a hairline short so that neighbouring
     * blocks of the same state stay apart.
     */
    static void pieces(StringBuilder out, double a, double b, String cssClass, String title, boolean separate) {
        if (separate && b - a >= 4) {
            b -= 0.75;
        }
        while (b - a > 0.005) {
            int row = (int) Math.floor((a + 1e-9) / WIDTH);
            double rowStart = (double) row * WIDTH;
            double end = Math.min(b, rowStart + WIDTH);
            double width = end - a;
            if (width > 0.005) {
                out.append("<rect class=\"").append(cssClass).append("\" x=\"").append(num(a - rowStart))
                        .append("\" y=\"").append(row * (ROW_HEIGHT + ROW_GAP)).append("\" width=\"")
                        .append(num(width)).append("\" height=\"").append(ROW_HEIGHT).append("\"><title>")
                        .append(esc(title)).append("</title></rect>\n");
            }
            a = end;
        }
    }

    /** Draws blocks, merging runs narrower than a pixel. */
    private static final class Painter {

        private final StringBuilder out;
        private final long[] bytes = new long[STATES.size()];
        private long requested;
        private long blocks;
        private long segments;
        private long firstAddress;
        private long lastEnd;
        private double start;
        private double end;
        private BlockSnapshot only;

        Painter(StringBuilder out) {
            this.out = out;
        }

        void block(BlockSnapshot b, double x0, double x1) {
            pieces(out, x0, x1, stateClass(b.state()), blockTitle(b), true);
        }

        void mergeBlock(BlockSnapshot b, double x0, double x1) {
            if (blocks == 0) {
                start = x0;
                firstAddress = b.address();
                only = b;
            } else {
                only = null;
            }
            add(b);
            end = x1;
            if (end - start >= 1) {
                flush();
            }
        }

        void mergeSegment(SegmentSnapshot seg, double x0, double x1) {
            if (blocks == 0 && segments == 0) {
                start = x0;
                firstAddress = seg.address();
            }
            segments++;
            for (BlockSnapshot b : seg.blocks()) {
                add(b);
            }
            only = null;
            lastEnd = seg.end();
            end = x1;
            if (end - start >= 1) {
                flush();
            }
        }

        private void add(BlockSnapshot b) {
            bytes[STATES.indexOf(b.state())] += b.size();
            requested += b.requestedSize();
            blocks++;
            lastEnd = b.end();
        }

        void flush() {
            if (blocks == 0 && segments == 0) {
                return;
            }
            if (only != null) {
                pieces(out, start, end, stateClass(only.state()), blockTitle(only), false);
            } else {
                int dominant = 0;
                for (int s = 1; s < bytes.length; s++) {
                    if (bytes[s] > bytes[dominant]) {
                        dominant = s;
                    }
                }
                StringBuilder title = new StringBuilder();
                title.append(Markup.grouped(blocks)).append(blocks == 1 ? " block" : " blocks");
                if (segments > 0) {
                    title.append(" in ").append(Markup.grouped(segments))
                            .append(segments == 1 ? " segment" : " segments");
                }
                title.append(" merged, ").append(ByteSize.hex(firstAddress)).append(" to ")
                        .append(ByteSize.hex(lastEnd)).append(':');
                for (int s = 0; s < bytes.length; s++) {
                    if (bytes[s] > 0) {
                        title.append(' ').append(stateName(STATES.get(s))).append(' ').append(Markup.bytes(bytes[s]));
                        if (STATES.get(s) == BlockState.ALLOCATED) {
                            title.append(" (requested ").append(Markup.bytes(requested)).append(')');
                        }
                        title.append(';');
                    }
                }
                title.setLength(title.length() - 1);
                pieces(out, start, end, stateClass(STATES.get(dominant)) + " merged", title.toString(), false);
            }
            Arrays.fill(bytes, 0);
            requested = 0;
            blocks = 0;
            segments = 0;
            only = null;
        }

        private String blockTitle(BlockSnapshot b) {
            return stateName(b.state()) + " block at " + ByteSize.hex(b.address()) + " · size "
                    + Markup.bytesExact(b.size()) + " · requested " + Markup.bytesExact(b.requestedSize());
        }
    }
}
