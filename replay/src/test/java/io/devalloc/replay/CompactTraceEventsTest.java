package io.devalloc.replay;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.devalloc.trace.TraceEvent;
import io.devalloc.trace.TraceReader;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** {@link CompactTrace#forEachEvent} gives every event the reader gives, in order, with its index, kind, key, size. */
class CompactTraceEventsTest {

    private static List<String> walked(CompactTrace compact) {
        List<String> out = new ArrayList<>();
        compact.forEachEvent((index, kind, key, size) -> out.add(index + " " + kind + " " + key + " " + size));
        return out;
    }

    @ParameterizedTest
    @ValueSource(strings = {"memory.csv", "memory.pickle"})
    void theWalkOfTheOptTraceIsTheReadersEvents(String file) throws IOException {
        Path trace = SharedTraceReplayTest.opt(file);
        List<String> read = new ArrayList<>();
        try (TraceReader reader = TraceSources.open(trace)) {
            long index = 0;
            for (TraceEvent e = reader.next(); e != null; e = reader.next()) {
                read.add(index++ + " " + e.kind() + " " + e.key() + " " + e.size());
            }
        }
        CompactTrace compact = CompactTrace.read(trace);
        assertEquals(compact.events(), read.size());
        assertEquals(read, walked(compact));
    }

    /** More events than one chunk of the columns: the index runs on across chunks. */
    @Test
    void theIndexRunsOnAcrossChunks() throws IOException {
        TestTraces.Builder b = TestTraces.pytorch();
        int n = CompactTrace.CHUNK_EVENTS + 10;
        for (int i = 0; i < n; i++) {
            b.alloc(i + 1, i);
        }
        List<String> walked = walked(CompactTrace.read("t", b.source()));
        assertEquals(n, walked.size());
        assertEquals(CompactTrace.CHUNK_EVENTS + " ALLOC " + (CompactTrace.CHUNK_EVENTS + 1) + " "
                + CompactTrace.CHUNK_EVENTS, walked.get(CompactTrace.CHUNK_EVENTS));
    }
}
