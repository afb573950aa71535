package io.devalloc.bfc;

/**
 * TensorFlow's {@code AllocatorStats} as BFC fills them, plus the fragmentation metric.
 *
 * @param numAllocs             successful allocations since creation or {@link BfcAllocator#clearStats()}
 * @param bytesInUse            bytes in chunks handed out (chunk sizes, so rounding and unsplit slack count)
 * @param peakBytesInUse        highest {@code bytesInUse} since creation or {@code clearStats()}
 * @param largestAllocSize      the largest chunk handed out since creation or {@code clearStats()}
 * @param bytesLimit            the memory limit
 * @param poolBytes             bytes held in regions
 * @param peakPoolBytes         highest {@code poolBytes} ({@code clearStats()} leaves it, as upstream)
 * @param largestFreeBlockBytes the largest free chunk (TensorFlow's current behaviour; classic left it 0)
 * @param fragmentationMetric   (free − largest free chunk) / free, with free = pool − in use; NaN when nothing is free
 */
public record BfcStats(long numAllocs, long bytesInUse, long peakBytesInUse, long largestAllocSize, long bytesLimit,
                       long poolBytes, long peakPoolBytes, long largestFreeBlockBytes, double fragmentationMetric) {
}
