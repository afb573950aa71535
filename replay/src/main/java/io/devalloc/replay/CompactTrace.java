package io.devalloc.replay;

import io.devalloc.api.collect.LongLongHashMap;
import io.devalloc.trace.TraceEvent;
import io.devalloc.trace.TraceFormat;
import io.devalloc.trace.TraceReader;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Objects;

/**
 * A trace read once into primitive arrays, for replaying it many times ({@link Replayer#replay(CompactTrace)}): the
 * advisor's hundreds of replays of one trace under different settings read and parse it once.
 *
 * <p><b>What it holds.</b> Each event as {@value #BYTES_PER_EVENT} bytes in four columns: its kind (a {@code byte},
 * the ordinal of {@link TraceEvent.Kind}), its key and its size ({@code long}s), and its stream as an {@code int}
 * index into a small table of the trace's distinct streams. There is no object per event; the columns are chunks of
 * {@value #CHUNK_EVENTS} events (the last one trimmed), so a trace of any length needs no single huge array and
 * reading never copies what it has read. Besides the events: what the first pass of a warm replay collects (the
 * {@code presegment} and {@code prealloc} rows, the block-size look-ahead, the ground truth of a PyTorch trace and
 * the event count), in memory that grows with the trace's warm state and segment rows, not with its length. Line
 * numbers are not kept: a malformed trace fails while it is read, naming the file and the line as a replay does.
 *
 * <p><b>Same figures.</b> A replay of a compact trace gives exactly the figures a replay of its source gives with the
 * same options: the same events reach the same dispatch, and the timeline is sampled as the source's replay would
 * sample it (a cold replay as in one pass, a warm one as in two). A presegment or prealloc row after the recorded
 * events fails a warm replay with the message a warm replay of the source gives; cold replays ignore it, as they do.
 *
 * <p><b>Threads.</b> Immutable after construction: every field is final and nothing writes the arrays or the scan
 * afterwards (each replay compares its device mallocs with the trace's segment rows in a copy of its own). Any number
 * of threads may replay one compact trace at once, each with its own replayer state.
 */
public final class CompactTrace {

    /** Bytes each event takes: kind (1), key (8), size (8), stream index (4). */
    public static final int BYTES_PER_EVENT = 1 + Long.BYTES + Long.BYTES + Integer.BYTES;
    /**
     * The {@code oom} entries kept ({@link #recordedOoms()}): a trace that failed and went on failing says what it
     * needs in its first entries; the rest are counted ({@link #oomEntries()}).
     */
    public static final int KEPT_OOMS = 1024;
    /** Events per chunk of the columns. */
    static final int CHUNK_EVENTS = 1 << 16;
    private static final TraceEvent.Kind[] KINDS = TraceEvent.Kind.values();

    private final String name;
    private final TraceFormat format;
    private final long events;
    /** The columns, chunk by chunk: every chunk but the last holds {@link #CHUNK_EVENTS} events. */
    final byte[][] kinds;
    final long[][] keys;
    final long[][] sizes;
    final int[][] streams;
    /** Stream index → the trace's stream; index 0 is stream 0 (the default stream), present or not. */
    final long[] streamTable;
    /** The first pass's findings; read-only once constructed. */
    final TraceScan scan;
    private final long allocations;
    private final long firstRequest;
    private final long largestRequest;

    private CompactTrace(String name, TraceFormat format, long events, byte[][] kinds, long[][] keys, long[][] sizes,
                         int[][] streams, long[] streamTable, TraceScan scan, long allocations, long firstRequest,
                         long largestRequest) {
        this.name = name;
        this.format = format;
        this.events = events;
        this.kinds = kinds;
        this.keys = keys;
        this.sizes = sizes;
        this.streams = streams;
        this.streamTable = streamTable;
        this.scan = scan;
        this.allocations = allocations;
        this.firstRequest = firstRequest;
        this.largestRequest = largestRequest;
    }

    /**
     * Reads {@code file} (any format {@link io.devalloc.trace.detect.TraceFormats} detects), named by its file name.
     *
     * @throws IllegalArgumentException                if {@code file} is not a readable regular file
     * @throws io.devalloc.trace.TraceFormatException naming the file and the line, for a malformed trace
     * @throws IOException                             if it cannot be read
     */
    public static CompactTrace read(Path file) throws IOException {
        Objects.requireNonNull(file, "file");
        return read(String.valueOf(file.getFileName()), TraceSources.of(file));
    }

    /**
     * Reads {@code source} once, from start to end, through the reader it opens.
     *
     * @param name the trace's name in results and messages (its file name)
     * @throws io.devalloc.trace.TraceFormatException naming the file and the line, for a malformed trace
     * @throws IOException                             if it cannot be read
     */
    public static CompactTrace read(String name, TraceSource source) throws IOException {
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(source, "source");
        Columns columns = new Columns();
        TraceScan scan;
        TraceFormat format;
        try (TraceReader reader = source.open()) {
            format = reader.format();
            scan = TraceScan.collecting(name, format);
            for (TraceEvent e = reader.next(); e != null; e = reader.next()) {
                scan.accept(e);
                columns.add(e);
            }
        }
        scan.endOfRows();
        return columns.build(name, format, scan);
    }

    /** The trace's name, as results show it. */
    public String name() {
        return name;
    }

    /** The format it was read from. */
    public TraceFormat format() {
        return format;
    }

    /** Its events, every kind counted. */
    public long events() {
        return events;
    }

    /** Its allocations: {@code alloc} rows, and the blocks live when recording began ({@code prealloc}). */
    public long allocations() {
        return allocations;
    }

    /** The size of its first allocation, 0 when it has none. */
    public long firstRequest() {
        return firstRequest;
    }

    /** The size of its largest allocation, 0 when it has none. */
    public long largestRequest() {
        return largestRequest;
    }

    /**
     * Whether it recorded anything after its start state (an allocation, a free, a segment row or an
     * {@code oom}): a trace of an end state only has nothing a replay could reproduce.
     */
    public boolean hasHistory() {
        return scan.hasHistory();
    }

    /** Whether it starts warm: it has presegment or prealloc rows (a state recorded before its events). */
    public boolean startsWarm() {
        return scan.startsWarm();
    }

    /**
     * Its cache flushes told apart (the program's {@code empty_cache()} or the allocator's own) and the capacity it
     * tells; {@link CacheFlushes#NONE} when it has neither.
     */
    public CacheFlushes cacheFlushes() {
        CacheFlushes f = scan.cacheFlushes();
        return f == null ? CacheFlushes.NONE : f;
    }

    /**
     * Its {@code oom} entries in order, each with what the trace says of that moment; at most the first
     * {@value #KEPT_OOMS} ({@link #oomEntries()} counts them all). Empty for a trace without any.
     */
    public List<RecordedOom> recordedOoms() {
        return List.copyOf(scan.ooms);
    }

    /** How many {@code oom} entries it has. */
    public long oomEntries() {
        return scan.oomRows;
    }

    /** The peak of the bytes it reserved, from its segment rows (a PyTorch trace's ground truth), else 0. */
    public long recordedPeakReservedBytes() {
        return scan.isPyTorch() ? scan.groundTruthPeakReserved() : 0;
    }

    /** Its distinct streams other than the default stream (0). */
    public int streams() {
        return streamTable.length - 1;
    }

    /** The bytes its event columns take: {@value #BYTES_PER_EVENT} per event, plus the stream table. */
    public long columnBytes() {
        return events * BYTES_PER_EVENT + (long) streamTable.length * Long.BYTES;
    }

    /**
     * Calls {@code visitor} once for each event, in trace order, on this thread: its index, kind, key and size read
     * from the columns, nothing parsed and no object made per event (the stream column is not passed). Any number of
     * threads may walk one compact trace at once.
     */
    public void forEachEvent(TraceEventVisitor visitor) {
        Objects.requireNonNull(visitor, "visitor");
        long index = 0;
        for (int c = 0; c < kinds.length; c++) {
            byte[] kind = kinds[c];
            long[] key = keys[c];
            long[] size = sizes[c];
            for (int i = 0; i < kind.length; i++) {
                visitor.event(index++, KINDS[kind[i]], key[i], size[i]);
            }
        }
    }

    /** The number of chunks of the columns. */
    int chunks() {
        return kinds.length;
    }

    @Override
    public String toString() {
        return "CompactTrace[" + name + ", " + format + ", " + events + " events]";
    }

    /** The columns while they are read: full chunks, and the one being filled. */
    private static final class Columns {
        private final List<byte[]> kinds = new ArrayList<>();
        private final List<long[]> keys = new ArrayList<>();
        private final List<long[]> sizes = new ArrayList<>();
        private final List<int[]> streams = new ArrayList<>();
        private byte[] kind;
        private long[] key;
        private long[] size;
        private int[] stream;
        private int filled = CHUNK_EVENTS;
        private long events;
        /** Stream → index + 1 (0, the default stream, is index 0 and not in the map). */
        private final LongLongHashMap streamIndex = new LongLongHashMap();
        private long[] streamTable = new long[8];
        private int streamCount = 1;
        private long allocations;
        private long firstRequest;
        private long largestRequest;

        void add(TraceEvent e) {
            if (filled == CHUNK_EVENTS) {
                kind = new byte[CHUNK_EVENTS];
                key = new long[CHUNK_EVENTS];
                size = new long[CHUNK_EVENTS];
                stream = new int[CHUNK_EVENTS];
                kinds.add(kind);
                keys.add(key);
                sizes.add(size);
                streams.add(stream);
                filled = 0;
            }
            if (e.kind() == TraceEvent.Kind.ALLOC || e.kind() == TraceEvent.Kind.PREALLOC) {
                if (allocations == 0) {
                    firstRequest = e.size();
                }
                allocations++;
                largestRequest = Math.max(largestRequest, e.size());
            }
            kind[filled] = (byte) e.kind().ordinal();
            key[filled] = e.key();
            size[filled] = e.size();
            stream[filled] = streamIndex(e.stream());
            filled++;
            events++;
        }

        private int streamIndex(long traceStream) {
            if (traceStream == 0) {
                return 0;
            }
            long index = streamIndex.get(traceStream, -1);
            if (index >= 0) {
                return (int) index;
            }
            if (streamCount == streamTable.length) {
                streamTable = Arrays.copyOf(streamTable, streamCount * 2);
            }
            streamTable[streamCount] = traceStream;
            streamIndex.put(traceStream, streamCount, -1);
            return streamCount++;
        }

        CompactTrace build(String name, TraceFormat format, TraceScan scan) {
            int chunks = kinds.size();
            if (chunks > 0 && filled < CHUNK_EVENTS) {
                int last = chunks - 1;
                kinds.set(last, Arrays.copyOf(kind, filled));
                keys.set(last, Arrays.copyOf(key, filled));
                sizes.set(last, Arrays.copyOf(size, filled));
                streams.set(last, Arrays.copyOf(stream, filled));
            }
            return new CompactTrace(name, format, events, kinds.toArray(new byte[0][]), keys.toArray(new long[0][]),
                    sizes.toArray(new long[0][]), streams.toArray(new int[0][]),
                    Arrays.copyOf(streamTable, streamCount), scan, allocations, firstRequest, largestRequest);
        }
    }
}
