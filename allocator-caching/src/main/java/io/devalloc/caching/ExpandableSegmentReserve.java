package io.devalloc.caching;

import io.devalloc.api.units.ByteSize;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * How much address space an expandable segment reserves: PyTorch's {@code expandable_segments_reserve} and
 * {@code expandable_segments_reserve_by_class} (pytorch#192269, {@code CUDAAllocatorConfig}).
 *
 * <p>Without either key every expandable segment reserves 9/8 of the device's memory, PyTorch's historical figure.
 * A reserve is a fraction of the device's memory ({@code 0.5}) or a number of GiB ({@code 40G}); the one that applies
 * to a new segment is, in this order, the entry of the segment's stream's reserve class in
 * {@code expandable_segments_reserve_by_class}, then {@code expandable_segments_reserve}, then the historical
 * figure; it is clamped to that 9/8 figure ({@link #clamp}). Streams are untagged (class {@code ""}) until the
 * application tags them ({@link CachingAllocator#setExpandableSegmentReserveClass}). One allocation cannot span
 * segments: a request larger than its segment's reserve is out of memory, whatever the device has free.
 *
 * <p>Parsing follows upstream's {@code parseReserveSpec}: a value that is not a positive, finite number (optionally
 * ending in {@code G} or {@code g}) is not an error; it is logged as a warning and ignored (the key keeps its
 * default), and a bad entry of the by-class list is skipped while the others apply.
 *
 * <p>Immutable and thread-safe.
 *
 * @param global  the {@code expandable_segments_reserve} value, or null when not set
 * @param byClass the {@code expandable_segments_reserve_by_class} entries (unmodifiable, in the order given)
 */
public record ExpandableSegmentReserve(Spec global, Map<String, Spec> byClass) {

    private static final Logger LOG = LoggerFactory.getLogger(ExpandableSegmentReserve.class);

    /** Neither key set: every segment reserves 9/8 of the device's memory. */
    public static final ExpandableSegmentReserve HISTORICAL = new ExpandableSegmentReserve(null, Map.of());

    /**
     * One reserve value.
     *
     * @param fraction true for a fraction of the device's memory, false for a number of GiB
     * @param value    positive and finite
     */
    public record Spec(boolean fraction, double value) {

        public Spec {
            if (!(value > 0) || Double.isInfinite(value)) {
                throw new IllegalArgumentException("a reserve must be positive and finite, got " + value);
            }
        }

        /** Bytes on a device of {@code totalBytes}, saturating at {@link Long#MAX_VALUE} as upstream at SIZE_MAX. */
        public long resolveBytes(long totalBytes) {
            double bytes = fraction ? value * totalBytes : value * ByteSize.GiB;
            return bytes >= Long.MAX_VALUE ? Long.MAX_VALUE : (long) bytes;
        }

        @Override
        public String toString() {
            return fraction ? Double.toString(value) : value + "G";
        }
    }

    /**
     * The reserve a class resolves to.
     *
     * @param reserveBytes the configured reserve in bytes, or -1 when none is configured (keep the 9/8 figure)
     * @param classKnown   the class had an entry of its own in the by-class list
     */
    public record Decision(long reserveBytes, boolean classKnown) {
    }

    public ExpandableSegmentReserve {
        Objects.requireNonNull(byClass, "byClass");
        byClass = Collections.unmodifiableMap(new LinkedHashMap<>(byClass));
    }

    /** Upstream's {@code expandable_segments_reserve_decision}. */
    public Decision decision(String reserveClass, long totalBytes) {
        Spec own = byClass.get(reserveClass);
        if (own != null) {
            return new Decision(own.resolveBytes(totalBytes), true);
        }
        return new Decision(global == null ? -1 : global.resolveBytes(totalBytes), false);
    }

    /** Upstream's {@code clamp_reserve_bytes}: the configured reserve, at most {@code fullReserve}. */
    public static long clamp(Decision decision, long fullReserve) {
        return decision.reserveBytes() < 0 ? fullReserve : Math.min(decision.reserveBytes(), fullReserve);
    }

    /** Whether either key was given (with a valid value). */
    public boolean isSet() {
        return global != null || !byClass.isEmpty();
    }

    /**
     * Reads the two keys' texts (either may be null: not given). Bad values are logged and ignored as upstream
     * does; only a by-class value that is not a bracketed list is refused.
     *
     * @throws IllegalArgumentException when {@code byClassText} is not of the form {@code [name:value,...]}
     */
    public static ExpandableSegmentReserve parse(String globalText, String byClassText) {
        Spec global = globalText == null ? null : parseSpec(globalText);
        Map<String, Spec> byClass = new LinkedHashMap<>();
        if (byClassText != null) {
            String t = checkListShape(byClassText);
            String body = t.substring(1, t.length() - 1).strip();
            if (!body.isEmpty()) {
                for (String entry : body.split(",", -1)) {
                    int colon = entry.indexOf(':');
                    String name = colon < 0 ? "" : entry.substring(0, colon).strip();
                    if (name.isEmpty()) {
                        LOG.warn("Ignoring malformed expandable_segments_reserve_by_class entry '{}' in"
                                + " PYTORCH_CUDA_ALLOC_CONF (expected name:value)", entry.strip());
                        continue;
                    }
                    Spec spec = parseSpec(entry.substring(colon + 1).strip());
                    if (spec != null) {
                        byClass.put(name, spec);
                    }
                }
            }
        }
        return global == null && byClass.isEmpty() ? HISTORICAL : new ExpandableSegmentReserve(global, byClass);
    }

    /**
     * Checks that a by-class value is a bracketed list, without reading its entries (so without warnings).
     *
     * @return the value, stripped
     * @throws IllegalArgumentException when it is not of the form {@code [...]}
     */
    static String checkListShape(String byClassText) {
        String t = byClassText.strip();
        if (!t.startsWith("[") || !t.endsWith("]")) {
            throw new IllegalArgumentException("expected a list such as [capture:0.25,workspace:40G] but got '"
                    + byClassText + "'");
        }
        return t;
    }

    /**
     * Upstream's {@code parseReserveSpec}: a trailing {@code G}/{@code g} means GiB, otherwise a fraction of the
     * device's memory; the number is read in the C locale and must be positive and finite. Anything else is warned
     * about with upstream's text and gives null (the caller keeps its default).
     */
    static Spec parseSpec(String token) {
        boolean gib = !token.isEmpty() && (token.endsWith("G") || token.endsWith("g"));
        String number = gib ? token.substring(0, token.length() - 1) : token;
        double value = Double.NaN;
        if (number.matches("[+-]?([0-9]+\\.?[0-9]*|\\.[0-9]+)([eE][+-]?[0-9]+)?")) {
            value = Double.parseDouble(number);
        }
        if (!(value > 0) || Double.isInfinite(value)) {
            LOG.warn("Ignoring invalid expandable-segment reserve value '{}' in PYTORCH_CUDA_ALLOC_CONF (expected a"
                    + " positive, finite fraction like 0.5 or an absolute size like 40G); using default.", token);
            return null;
        }
        return new Spec(!gib, value);
    }

    /** The configuration text of the by-class list, e.g. {@code [capture:0.25,workspace:40G]}. */
    String byClassText() {
        StringBuilder sb = new StringBuilder("[");
        for (Map.Entry<String, Spec> e : byClass.entrySet()) {
            if (sb.length() > 1) {
                sb.append(',');
            }
            sb.append(e.getKey()).append(':').append(e.getValue());
        }
        return sb.append(']').toString();
    }
}
