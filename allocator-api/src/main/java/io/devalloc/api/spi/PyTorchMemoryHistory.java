package io.devalloc.api.spi;

import java.util.Map;

/**
 * A capability of an allocator that keeps PyTorch's memory history ({@code torch.cuda.memory._record_memory_history})
 * and gives its state as PyTorch's {@code _snapshot()} dict, found with
 * {@link io.devalloc.api.DeviceAllocator#unwrap}: the caching allocator has it. The replay uses it to write a
 * replay as a snapshot that PyTorch's memory viewer opens ({@code devalloc replay --export}).
 */
public interface PyTorchMemoryHistory {

    /**
     * Turns the history on, keeping the last {@code maxEntries} entries ({@link Integer#MAX_VALUE}: all of them), or
     * off with 0; either way clears it.
     *
     * @throws IllegalArgumentException for a negative count
     */
    void recordHistory(int maxEntries);

    /**
     * PyTorch's {@code _snapshot()} structure of this allocator now: {@code segments}, {@code device_traces} (the
     * history, as one list per device index), {@code allocator_settings} and {@code external_annotations}, in plain
     * maps and lists that devalloc's pickle writer writes as {@code _dump_snapshot()} does.
     */
    Map<String, Object> snapshotDict();
}
