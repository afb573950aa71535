package io.devalloc.caching;

import io.devalloc.api.spi.AllocatorProvider;
import java.util.List;
import java.util.Optional;
import java.util.Set;

/**
 * The provider of one of PyTorch's allocators ({@code caching}, {@code caching-host}): what the tools ask of it
 * answered once for both. Its replays are judged by the snapshot PyTorch recorded; its setting goes in
 * {@code PYTORCH_CUDA_ALLOC_CONF} unless it uses a key of devalloc's own, which PyTorch refuses; and its caveats are
 * what PyTorch documents against the setting.
 */
public interface PyTorchAllocatorProvider extends AllocatorProvider {

    /** The configuration keys of devalloc's own, which PyTorch does not have. */
    Set<String> devallocKeys();

    @Override
    default boolean portsPyTorch() {
        return true;
    }

    @Override
    default Optional<String> frameworkVariable(String configText) {
        return SettingCaveats.pytorchVariable(configText, devallocKeys());
    }

    @Override
    default List<String> caveats(String configText) {
        return SettingCaveats.of(configText, devallocKeys());
    }
}
