package io.devalloc.host;

import io.devalloc.api.device.DeviceMemory;
import io.devalloc.api.units.ByteSize;
import io.devalloc.testkit.DeviceMemoryContract;
import io.devalloc.testkit.UnmapFailure;

/**
 * The project's device contract on pinned host memory. Without CAP_IPC_LOCK the kernel lets a process lock only
 * RLIMIT_MEMLOCK bytes (often 8 MiB), so the device's capacity is kept below that limit: then the device runs out
 * (malloc returns 0) before mlock is refused, which is the behaviour the contract checks. The real libc calls, with
 * a hook to make an unmap's {@code madvise} fail.
 */
class PinnedHostMemoryContractTest extends DeviceMemoryContract {

    static long pinnedTestCapacity() {
        FfmNativeMemoryCalls libc = FfmNativeMemoryCalls.link();
        long wanted = 256 * ByteSize.MiB;
        if (libc.mayExceedMemlockLimit()) {
            return wanted;
        }
        long soft = libc.memlockLimit().map(NativeMemoryCalls.MemlockLimit::softBytes).orElse(0L);
        // Leave a page of headroom for the probe and anything else the JVM locks.
        long usable = ((soft - 64 * ByteSize.KiB) / ByteSize.MiB) * ByteSize.MiB;
        return Math.max(ByteSize.MiB, Math.min(wanted, usable));
    }

    private final long capacity = pinnedTestCapacity();
    private final MadviseFaults faults = new MadviseFaults();

    @Override
    protected DeviceMemory openDevice() {
        return new PinnedHostMemoryProvider(faults::calls, SystemMemory::read).open(capacity + "B");
    }

    @Override
    protected UnmapFailure armUnmapFailure() {
        faults.failNextMadvise();
        return UnmapFailure.armed();
    }

    @Override
    protected long testCapacityFloor() {
        return Math.min(super.testCapacityFloor(), capacity);
    }
}
