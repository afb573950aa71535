package io.devalloc.trace.pytorch;

import io.devalloc.api.config.UntrustedText;
import java.math.BigDecimal;
import java.math.BigInteger;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;

/**
 * The settings a PyTorch snapshot was recorded with: its {@code allocator_settings} dict, and the same as a
 * configuration text for devalloc's {@code caching} allocator ({@code --config}), which uses
 * {@code PYTORCH_CUDA_ALLOC_CONF}'s keys.
 *
 * <p><b>The dict</b> (PyTorch's {@code memory_snapshot.cpp}, 2025-26) holds {@code PYTORCH_CUDA_ALLOC_CONF} (the last
 * configuration string applied), {@code max_split_size} (bytes, -1 when unlimited),
 * {@code garbage_collection_threshold}, {@code expandable_segments}, {@code pinned_num_register_threads},
 * {@code release_lock_on_cudamalloc}, {@code pinned_use_cuda_host_register},
 * {@code graph_capture_record_stream_reuse}, {@code roundup_power2_divisions} (a dict {@code {"1": v0, "2": v1,
 * "4": v2, ..., "32768": v15}} of the 16 division entries, keyed by their lower bound in MiB) and, in the newest
 * versions, {@code max_round_threshold} and {@code max_cached_size} (pinned, bytes, -1 when unlimited). Snapshots of
 * older PyTorch versions have no {@code allocator_settings}.
 *
 * <p><b>The configuration text</b> is built from the values the allocator ran with, each key only when it differs
 * from PyTorch's default: {@code max_split_size_mb}, {@code garbage_collection_threshold},
 * {@code expandable_segments}, {@code roundup_power2_divisions} (one value when all 16 entries are equal, else the
 * list form with the first interval's entry, which also fills the lower ones, and every other non-zero entry),
 * {@code release_lock_on_cudamalloc}, {@code pinned_use_cuda_host_register}, {@code pinned_num_register_threads},
 * {@code graph_capture_record_stream_reuse}, {@code pinned_max_round_threshold_mb} and
 * {@code pinned_max_cached_size_mb}; then every key of the {@code PYTORCH_CUDA_ALLOC_CONF} string that the dict
 * does not carry ({@code per_process_memory_fraction}, {@code large_segment_size_mb},
 * {@code max_non_split_rounding_mb}, {@code expandable_segments_reserve}, {@code throw_on_cudamalloc_oom},
 * {@code backend}, ...), as written there. What cannot be carried over (a value of the wrong type, a size that is
 * not whole MiB, a string that does not split into {@code key:value} entries) is left out and said in
 * {@link #notes()}. A fraction set at run time with {@code torch.cuda.set_per_process_memory_fraction} is in neither
 * the dict nor the string: no snapshot records it.
 *
 * @param values the {@code allocator_settings} dict as read (plain values: {@link String}, {@link Long},
 *               {@link Double}, {@link Boolean}, nested maps), empty when the snapshot has none
 * @param config the configuration text for {@code caching}; empty for PyTorch's defaults
 * @param notes  what was not carried over, and why; empty when everything was
 */
public record RecordedAllocatorSettings(Map<String, Object> values, String config, List<String> notes) {

    /** The dict keys whose values the configuration text carries; the string's other keys are copied. */
    private static final Map<String, String> DICT_KEYS = Map.ofEntries(
            Map.entry("max_split_size", "max_split_size_mb"),
            Map.entry("garbage_collection_threshold", "garbage_collection_threshold"),
            Map.entry("expandable_segments", "expandable_segments"),
            Map.entry("roundup_power2_divisions", "roundup_power2_divisions"),
            Map.entry("release_lock_on_cudamalloc", "release_lock_on_cudamalloc"),
            Map.entry("pinned_use_cuda_host_register", "pinned_use_cuda_host_register"),
            Map.entry("pinned_num_register_threads", "pinned_num_register_threads"),
            Map.entry("graph_capture_record_stream_reuse", "graph_capture_record_stream_reuse"),
            Map.entry("max_round_threshold", "pinned_max_round_threshold_mb"),
            Map.entry("max_cached_size", "pinned_max_cached_size_mb"));
    /** Keys of the string that the dict's values stand for (spellings included). */
    private static final Set<String> COVERED = Set.of("max_split_size_mb", "garbage_collection_threshold",
            "expandable_segments", "roundup_power2_divisions", "release_lock_on_cudamalloc",
            "release_lock_on_hipmalloc", "pinned_use_cuda_host_register", "pinned_use_hip_host_register",
            "pinned_num_register_threads", "graph_capture_record_stream_reuse", "pinned_max_round_threshold_mb",
            "pinned_max_cached_size_mb");
    private static final long MiB = 1L << 20;
    private static final int DIVISION_ENTRIES = 16;
    /** What {@link #plain} gives for a value that nests a container in a container: left out, with a note. */
    private static final Object NESTED = new Object();
    /** How much of a key or value a note quotes. */
    private static final int KEY_SHOWN = 60;

    public RecordedAllocatorSettings {
        values = Collections.unmodifiableMap(new LinkedHashMap<>(Objects.requireNonNull(values, "values")));
        Objects.requireNonNull(config, "config");
        notes = List.copyOf(notes);
    }

    /** A snapshot without {@code allocator_settings} (older PyTorch): the defaults, with a note saying so. */
    public static RecordedAllocatorSettings absent() {
        return new RecordedAllocatorSettings(Map.of(), "", List.of("the snapshot has no allocator_settings (PyTorch"
                + " before 2.1 did not record them): PyTorch's defaults are assumed"));
    }

    /** Whether the snapshot had an {@code allocator_settings} dict. */
    public boolean recorded() {
        return !values.isEmpty();
    }

    /**
     * Reads an {@code allocator_settings} dict as the unpickler gave it.
     *
     * @param dict the dict (keys are strings; other keys are ignored)
     */
    public static RecordedAllocatorSettings of(Map<?, ?> dict) {
        Objects.requireNonNull(dict, "dict");
        Map<String, Object> values = new LinkedHashMap<>();
        List<String> nested = new ArrayList<>();
        for (Map.Entry<?, ?> e : dict.entrySet()) {
            if (e.getKey() instanceof String key) {
                Object value = plain(e.getValue());
                if (value == NESTED) {
                    nested.add("allocator_settings['" + UntrustedText.excerpt(key, KEY_SHOWN) + "'] holds a list or"
                            + " dict inside a list or dict, which PyTorch never writes there (its settings are"
                            + " numbers, strings, booleans and one flat dict); left out");
                } else {
                    values.put(key, value);
                }
            }
        }
        if (values.isEmpty()) {
            if (!nested.isEmpty()) {
                return new RecordedAllocatorSettings(Map.of(), "", nested);
            }
            return new RecordedAllocatorSettings(Map.of(), "", List.of("the snapshot's allocator_settings is empty:"
                    + " PyTorch's defaults are assumed"));
        }
        List<String> notes = new ArrayList<>(nested);
        List<String> entries = new ArrayList<>();
        for (Map.Entry<String, String> k : orderedDictKeys(values)) {
            String entry = entry(k.getKey(), k.getValue(), values.get(k.getKey()), notes);
            if (entry != null) {
                entries.add(entry);
            }
        }
        Object text = values.get("PYTORCH_CUDA_ALLOC_CONF");
        if (text instanceof String s && !s.isBlank()) {
            List<String> tokens = split(s);
            if (tokens == null) {
                notes.add("PYTORCH_CUDA_ALLOC_CONF '" + UntrustedText.excerpt(s) + "' does not split into key:value"
                        + " entries; only the settings the dict carries were used");
            } else {
                Set<String> seen = new LinkedHashSet<>();
                for (String token : tokens) {
                    String key = token.substring(0, token.indexOf(':'));
                    if (!COVERED.contains(key) && seen.add(key)) {
                        entries.add(token);
                    }
                }
            }
        } else if (text != null && !(text instanceof String)) {
            notes.add("PYTORCH_CUDA_ALLOC_CONF is not a string; only the settings the dict carries were used");
        }
        return new RecordedAllocatorSettings(values, String.join(",", entries), notes);
    }

    /** The dict's keys that the configuration text carries, in the dict's order. */
    private static List<Map.Entry<String, String>> orderedDictKeys(Map<String, Object> values) {
        List<Map.Entry<String, String>> keys = new ArrayList<>();
        for (String key : values.keySet()) {
            String option = DICT_KEYS.get(key);
            if (option != null) {
                keys.add(Map.entry(key, option));
            }
        }
        return keys;
    }

    /**
     * One {@code key:value} entry, or null at the default or when the value cannot be carried over (noted).
     * Error Prone's RefactorSwitch would turn the cases into one switch expression; each case validates, notes and
     * returns in several steps, which reads better as statements.
     */
    @SuppressWarnings("RefactorSwitch")
    private static String entry(String dictKey, String option, Object value, List<String> notes) {
        switch (dictKey) {
            case "max_split_size", "max_round_threshold", "max_cached_size" -> {
                if (!(value instanceof Long bytes)) {
                    notes.add(wrongType(dictKey, value, "an int"));
                    return null;
                }
                if (bytes == -1 || bytes == Long.MAX_VALUE) {
                    return null;
                }
                if (bytes < 0 || bytes % MiB != 0) {
                    notes.add("allocator_settings['" + dictKey + "'] = " + bytes + " is not a whole number of MiB;"
                            + " left out");
                    return null;
                }
                return option + ":" + bytes / MiB;
            }
            case "garbage_collection_threshold" -> {
                if (!(value instanceof Double d) || !Double.isFinite(d)) {
                    notes.add(wrongType(dictKey, value, "a float"));
                    return null;
                }
                return d == 0 ? null : option + ":" + BigDecimal.valueOf(d).stripTrailingZeros().toPlainString();
            }
            case "expandable_segments", "release_lock_on_cudamalloc", "pinned_use_cuda_host_register",
                 "graph_capture_record_stream_reuse" -> {
                if (!(value instanceof Boolean b)) {
                    notes.add(wrongType(dictKey, value, "a bool"));
                    return null;
                }
                return b ? option + ":True" : null;
            }
            case "pinned_num_register_threads" -> {
                if (!(value instanceof Long n)) {
                    notes.add(wrongType(dictKey, value, "an int"));
                    return null;
                }
                return n == 1 ? null : option + ":" + n;
            }
            case "roundup_power2_divisions" -> {
                return divisions(value, notes);
            }
            default -> throw new IllegalStateException("no rule for allocator_settings['" + dictKey + "']");
        }
    }

    /** {@code roundup_power2_divisions:4}, or the list form, or null when every entry is 0. */
    private static String divisions(Object value, List<String> notes) {
        if (!(value instanceof Map<?, ?> dict)) {
            notes.add(wrongType("roundup_power2_divisions", value, "a dict"));
            return null;
        }
        long[] entries = new long[DIVISION_ENTRIES];
        for (Map.Entry<?, ?> e : dict.entrySet()) {
            int index = -1;
            if (e.getKey() instanceof String k && k.chars().allMatch(Character::isDigit) && !k.isEmpty()
                    && k.length() <= 5) {
                long mb = Long.parseLong(k);
                if (Long.bitCount(mb) == 1 && Long.numberOfTrailingZeros(mb) < DIVISION_ENTRIES) {
                    index = Long.numberOfTrailingZeros(mb);
                }
            }
            if (index < 0 || !(e.getValue() instanceof Long v) || v < 0 || (v != 0 && Long.bitCount(v) != 1)) {
                notes.add("allocator_settings['roundup_power2_divisions'] has an entry " + quoted(e.getKey()) + ": "
                        + quoted(e.getValue()) + " that is not a power-of-two MiB bound (1 to 32768) with 0 or a power"
                        + " of two; the divisions were left out");
                return null;
            }
            entries[index] = v;
        }
        boolean allEqual = true;
        for (long v : entries) {
            allEqual &= v == entries[0];
        }
        if (allEqual) {
            return entries[0] == 0 ? null : "roundup_power2_divisions:" + entries[0];
        }
        // The first key also fills the lower intervals and later keys set one interval each; the others stay 0.
        StringBuilder list = new StringBuilder("roundup_power2_divisions:[1:").append(entries[0]);
        for (int i = 1; i < DIVISION_ENTRIES; i++) {
            if (entries[i] != 0) {
                list.append(',').append(1L << i).append(':').append(entries[i]);
            }
        }
        return list.append(']').toString();
    }

    /**
     * The string's entries, split at commas outside brackets, each {@code key:value} with whitespace removed; null
     * when an entry has no colon or the brackets do not balance.
     */
    private static List<String> split(String text) {
        List<String> tokens = new ArrayList<>();
        StringBuilder current = new StringBuilder();
        int depth = 0;
        for (int i = 0; i < text.length(); i++) {
            char c = text.charAt(i);
            if (Character.isWhitespace(c)) {
                continue;
            }
            if (c == '[') {
                depth++;
            } else if (c == ']') {
                depth--;
                if (depth < 0) {
                    return null;
                }
            }
            if (c == ',' && depth == 0) {
                if (!add(tokens, current)) {
                    return null;
                }
            } else {
                current.append(c);
            }
        }
        if (depth != 0 || !add(tokens, current)) {
            return null;
        }
        return tokens;
    }

    private static boolean add(List<String> tokens, StringBuilder token) {
        String t = token.toString();
        token.setLength(0);
        if (t.isEmpty()) {
            return true;
        }
        int colon = t.indexOf(':');
        if (colon <= 0 || colon == t.length() - 1) {
            return false;
        }
        tokens.add(t);
        return true;
    }

    /**
     * The note for a setting of another type. A value here is {@link #plain}: a list and a tuple are not told apart
     * (either is "a list or tuple"), and every int is a {@link Long} or {@link BigInteger}.
     */
    private static String wrongType(String key, Object value, String expected) {
        String type = value instanceof List<?> || value instanceof Object[] ? "a list or tuple"
                : SnapshotValues.pythonType(value);
        return "allocator_settings['" + key + "'] is " + type
                + (value == null ? "" : " (" + quoted(value) + ")")
                + ", not " + expected + "; left out";
    }

    /** A value as a note quotes it: a string as it is, anything else as a message shows it; bounded either way. */
    private static String quoted(Object value) {
        return value instanceof String s ? UntrustedText.excerpt(s, KEY_SHOWN) : SnapshotValues.show(value);
    }

    /**
     * The unpickler's values as plain ones: ints as {@link Long} (or {@link BigInteger} beyond), a dict copied, a
     * list or tuple kept; {@link #NESTED} for a list, tuple or dict that holds another. PyTorch writes scalars and
     * one flat dict of ints here; a pickle's memo lets a few hundred bytes nest a dict 40 deep with each level
     * holding the one below twice, which a deep copy (or any later walk) would expand to 2^40 entries, and a list
     * that holds itself would never end. So nothing below the first level is opened: the work is one pass over the
     * value's own items.
     */
    private static Object plain(Object v) {
        if (v instanceof Integer || v instanceof Short || v instanceof Byte) {
            return ((Number) v).longValue();
        }
        if (v instanceof BigInteger b) {
            return b.bitLength() < 64 ? (Object) b.longValue() : b;
        }
        if (v instanceof Map<?, ?> m) {
            Map<String, Object> copy = new LinkedHashMap<>();
            for (Map.Entry<?, ?> e : m.entrySet()) {
                if (holdsOthers(e.getValue())) {
                    return NESTED;
                }
                copy.put(String.valueOf(e.getKey() instanceof Object[] ? "(...)" : e.getKey()),
                        plain(e.getValue()));
            }
            return Collections.unmodifiableMap(copy);
        }
        Iterable<?> items = v instanceof Object[] tuple ? Arrays.asList(tuple) : v instanceof List<?> l ? l : null;
        if (items != null) {
            for (Object item : items) {
                if (holdsOthers(item)) {
                    return NESTED;
                }
            }
        }
        return v;
    }

    private static boolean holdsOthers(Object v) {
        return v instanceof Map<?, ?> || v instanceof List<?> || v instanceof Object[];
    }
}
