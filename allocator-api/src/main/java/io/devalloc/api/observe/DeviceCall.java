package io.devalloc.api.observe;

import java.util.Locale;

/** The four device calls an allocator makes to get and return memory, as {@link AllocatorListener} is told of them. */
public enum DeviceCall {
    /** {@code cudaMalloc}: {@link io.devalloc.api.device.DeviceMemory#malloc}. */
    MALLOC,
    /** {@code cudaFree}: {@link io.devalloc.api.device.DeviceMemory#free}. */
    FREE,
    /** {@code cuMemCreate} + {@code cuMemMap}: {@link io.devalloc.api.device.VirtualMemory#map(long, long, long)}. */
    MAP,
    /** {@code cuMemUnmap} + {@code cuMemRelease}: {@link io.devalloc.api.device.VirtualMemory#unmap}. */
    UNMAP;

    private final String tag = name().toLowerCase(Locale.ROOT);

    /** The lower-case name metrics use as a tag value: {@code malloc}, {@code free}, {@code map}, {@code unmap}. */
    public String tag() {
        return tag;
    }

    /** Whether the call gives memory to the allocator ({@link #MALLOC}, {@link #MAP}). */
    public boolean acquires() {
        return this == MALLOC || this == MAP;
    }
}
