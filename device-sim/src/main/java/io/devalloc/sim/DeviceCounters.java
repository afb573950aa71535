package io.devalloc.sim;

/**
 * The simulated device's counters.
 *
 * @param mallocCalls      malloc calls, including failed ones
 * @param mallocs          successful mallocs
 * @param failedMallocs    mallocs that returned 0 (out of memory, limit, or injected failure)
 * @param frees            frees
 * @param maps             successful virtual-memory maps
 * @param unmaps           unmaps
 * @param bytesInUse       physical bytes in use now (malloc'd plus mapped)
 * @param peakBytesInUse   highest {@code bytesInUse}
 * @param bytesMalloced    total bytes ever malloc'd or mapped
 */
public record DeviceCounters(long mallocCalls, long mallocs, long failedMallocs, long frees, long maps, long unmaps,
                             long bytesInUse, long peakBytesInUse, long bytesMalloced) {
}
