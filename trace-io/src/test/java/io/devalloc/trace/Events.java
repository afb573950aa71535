package io.devalloc.trace;

import java.io.IOException;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;

/** Test helpers over event lists. */
public final class Events {

    private Events() {
    }

    /** Every event the reader gives, then closes it. */
    public static List<TraceEvent> readAll(TraceReader reader) throws IOException {
        try (reader) {
            List<TraceEvent> events = new ArrayList<>();
            for (TraceEvent e; (e = reader.next()) != null;) {
                events.add(e);
            }
            return events;
        }
    }

    /** The events without their line numbers: what two readers of the same trace must agree on. */
    public static List<String> withoutLines(List<TraceEvent> events) {
        List<String> out = new ArrayList<>(events.size());
        for (TraceEvent e : events) {
            out.add(e.kind() + " " + Long.toUnsignedString(e.key()) + " " + e.size() + " " + e.stream() + " "
                    + e.thread());
        }
        return out;
    }

    /** How many events of each kind. */
    static Map<TraceEvent.Kind, Long> counts(List<TraceEvent> events) {
        Map<TraceEvent.Kind, Long> counts = new EnumMap<>(TraceEvent.Kind.class);
        for (TraceEvent e : events) {
            counts.merge(e.kind(), 1L, Long::sum);
        }
        return counts;
    }
}
