package io.devalloc.benchmarks;

import io.netty.buffer.AdaptiveByteBufAllocator;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.util.internal.PlatformDependent;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A peer: Netty's pooled ({@code netty-pooled}, {@link PooledByteBufAllocator} configured as
 * {@code PooledByteBufAllocator.DEFAULT} is, a new instance per trial) or adaptive ({@code netty-adaptive},
 * {@link AdaptiveByteBufAllocator} with its defaults) allocator, always for direct buffers: a pair is
 * {@link ByteBufAllocator#directBuffer(int)} and
 * {@link ByteBuf#release()}. Netty's defaults decide the rest; the ones that matter here are logged when the
 * allocator is created ({@link #describe()}). Netty 4.2's defaults give threads that are not Netty's own (JMH's
 * threads, here) no thread-local cache in the pooled allocator ({@code io.netty.allocator.useCacheForAllThreads},
 * false) and shared rather than per-thread magazines in the adaptive one
 * ({@code io.netty.allocator.useCachedMagazinesForNonEventLoopThreads}, false); set them with
 * {@code -jvmArgsAppend -D...=true} to measure Netty as its event-loop threads see it.
 *
 * <p>Netty's leak detector is meant to be turned off for measuring ({@code -Dio.netty.leakDetection.level=disabled},
 * what the benchmarks' forks pass, as Netty's own microbenchmarks do): at its default level it wraps one buffer in
 * 128 in a tracking wrapper.
 */
final class NettyPairAllocator implements PairAllocator {

    private static final Logger LOG = LoggerFactory.getLogger(NettyPairAllocator.class);

    private final ByteBufAllocator allocator;

    NettyPairAllocator(String name) {
        allocator = switch (name) {
            case "netty-pooled" -> new PooledByteBufAllocator(true);
            case "netty-adaptive" -> new AdaptiveByteBufAllocator(true);
            default -> throw new IllegalArgumentException("not a Netty allocator: '" + name
                    + "' (netty-pooled, netty-adaptive)");
        };
        LOG.info("{}: {}", name, describe());
    }

    /** The settings of Netty's that the figures depend on, for the record of a run. */
    static String describe() {
        return "netty pooled: useCacheForAllThreads=" + PooledByteBufAllocator.defaultUseCacheForAllThreads()
                + ", directArenas=" + PooledByteBufAllocator.defaultNumDirectArena()
                + ", pageSize=" + PooledByteBufAllocator.defaultPageSize()
                + ", maxOrder=" + PooledByteBufAllocator.defaultMaxOrder()
                + "; adaptive: useCachedMagazinesForNonEventLoopThreads="
                + System.getProperty("io.netty.allocator.useCachedMagazinesForNonEventLoopThreads", "false (default)")
                + "; io.netty.leakDetection.level=" + System.getProperty("io.netty.leakDetection.level", "(default)")
                + "; hasUnsafe=" + PlatformDependent.hasUnsafe();
    }

    @Override
    public Pairs forThread(long size, boolean ownStream) {
        if (size > Integer.MAX_VALUE) {
            throw new IllegalArgumentException("Netty's buffers hold at most " + Integer.MAX_VALUE + " bytes, not "
                    + size);
        }
        Pairs pairs = new DirectBuffers(allocator, (int) size);
        pairs.allocateFree();
        return pairs;
    }

    @Override
    public void close() {
        // Netty's allocators have no close; their memory goes with the trial's JVM. A buffer left live would have
        // failed allocateFree's release check.
    }

    /** A thread's pairs: a direct buffer of {@code size} bytes, released at once. */
    private record DirectBuffers(ByteBufAllocator allocator, int size) implements Pairs {

        @Override
        public long allocateFree() {
            ByteBuf buffer = allocator.directBuffer(size);
            long address = buffer.hasMemoryAddress() ? buffer.memoryAddress() : buffer.capacity();
            if (!buffer.release()) {
                throw new IllegalStateException("Netty kept the buffer after its only release: " + buffer);
            }
            return address;
        }
    }
}
