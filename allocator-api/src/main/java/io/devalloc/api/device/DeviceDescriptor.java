package io.devalloc.api.device;

import java.util.Objects;

/**
 * Which device a {@link DeviceMemory} is.
 *
 * @param provider   the name of the provider that opened it, e.g. {@code "sim"}, {@code "host"}, {@code "cuda"}
 * @param index      the device index within that provider (CUDA's device ordinal), 0 for single-device providers
 * @param name       a human-readable name, e.g. {@code "simulated GPU (80.00 GiB)"} or the GPU's product name
 * @param kind       what kind of memory it hands out
 * @param totalBytes the device's total memory in bytes
 */
public record DeviceDescriptor(String provider, int index, String name, DeviceKind kind, long totalBytes) {

    public DeviceDescriptor {
        Objects.requireNonNull(provider, "provider");
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(kind, "kind");
        if (index < 0) {
            throw new IllegalArgumentException("device index must be >= 0, got " + index);
        }
        if (totalBytes < 0) {
            throw new IllegalArgumentException("totalBytes must be >= 0, got " + totalBytes);
        }
    }

    /** The short identity used in logs and messages, e.g. {@code cuda:0}. */
    public String id() {
        return provider + ":" + index;
    }

    @Override
    public String toString() {
        return id() + " (" + name + ")";
    }
}
