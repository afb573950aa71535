package io.devalloc.api.device;

/**
 * Free and total bytes of a device, as {@code cudaMemGetInfo} reports them.
 *
 * @param freeBytes  bytes the device could still hand out
 * @param totalBytes the device's capacity
 */
public record MemoryInfo(long freeBytes, long totalBytes) {

    public MemoryInfo {
        if (freeBytes < 0 || totalBytes < 0 || freeBytes > totalBytes) {
            throw new IllegalArgumentException("inconsistent memory info: free=" + freeBytes + " total=" + totalBytes);
        }
    }

    /** Bytes in use on the device, by anyone. */
    public long usedBytes() {
        return totalBytes - freeBytes;
    }
}
