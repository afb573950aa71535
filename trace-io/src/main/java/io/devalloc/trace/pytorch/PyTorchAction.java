package io.devalloc.trace.pytorch;

import io.devalloc.trace.TraceEvent.Kind;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.Map;
import java.util.function.Function;
import java.util.stream.Collectors;

/**
 * The {@code action} values of a PyTorch trace, in the pickle and in its CSV form alike, and what each becomes.
 * {@code free_requested} and {@code snapshot} rows are read, checked and skipped: the block is freed at
 * {@code free_completed}, and a snapshot marker allocates nothing. {@code annotate} entries (user annotations of
 * the newest PyTorch, {@code user_defined} in older versions) carry no memory event and are skipped as well.
 */
enum PyTorchAction {
    PRESEGMENT("presegment", Kind.PRESEGMENT, true),
    PREALLOC("prealloc", Kind.PREALLOC, true),
    ALLOC("alloc", Kind.ALLOC, true),
    FREE_REQUESTED("free_requested", null, true),
    FREE_COMPLETED("free_completed", Kind.FREE, true),
    SEGMENT_ALLOC("segment_alloc", Kind.SEGMENT_ALLOC, true),
    SEGMENT_FREE("segment_free", Kind.SEGMENT_FREE, true),
    SEGMENT_MAP("segment_map", Kind.SEGMENT_MAP, true),
    SEGMENT_UNMAP("segment_unmap", Kind.SEGMENT_UNMAP, true),
    /** Out of memory: no address; {@code pickle_to_csv.py} puts the device's free bytes in the size column. */
    OOM("oom", Kind.OOM, false),
    SNAPSHOT("snapshot", null, false),
    /** A user annotation ({@code torch.cuda.memory._record_memory_history} with annotations): no memory event. */
    ANNOTATE("annotate", null, false),
    /** The older spelling of {@link #ANNOTATE}. */
    USER_DEFINED("user_defined", null, false);

    private static final Map<String, PyTorchAction> BY_TEXT =
            Arrays.stream(values()).collect(Collectors.toUnmodifiableMap(a -> a.text, Function.identity()));

    /** Every action, as the messages list them. */
    static final String EXPECTED = Arrays.stream(values()).map(a -> a.text).collect(Collectors.joining(", "));

    /** The action as written in the trace. */
    final String text;
    /** {@link #text} in ASCII; never written after construction and never handed out. */
    @SuppressWarnings("ImmutableEnumChecker")
    private final byte[] bytes;
    /** The event it becomes, or null when it is skipped. */
    final Kind kind;
    /** Whether the address and the size must be given (they may be empty for {@code oom} and {@code snapshot}). */
    final boolean needsAddressAndSize;

    PyTorchAction(String text, Kind kind, boolean needsAddressAndSize) {
        this.text = text;
        this.bytes = text.getBytes(StandardCharsets.US_ASCII);
        this.kind = kind;
        this.needsAddressAndSize = needsAddressAndSize;
    }

    private static final PyTorchAction[] ALL = values();

    /** The length of the longest action's text. */
    static final int LONGEST = Arrays.stream(ALL).mapToInt(a -> a.text.length()).max().orElseThrow();

    /** The action written as the bytes {@code b[from, to)}, or null when there is none. */
    static PyTorchAction of(byte[] b, int from, int to) {
        int n = to - from;
        for (PyTorchAction a : ALL) {
            byte[] t = a.bytes;
            if (t.length == n && same(t, b, from)) {
                return a;
            }
        }
        return null;
    }

    private static boolean same(byte[] t, byte[] b, int from) {
        for (int i = 0; i < t.length; i++) {
            if (t[i] != b[from + i]) {
                return false;
            }
        }
        return true;
    }

    /** The action written as {@code text}, or null when there is none. */
    static PyTorchAction of(String text) {
        return BY_TEXT.get(text);
    }
}
