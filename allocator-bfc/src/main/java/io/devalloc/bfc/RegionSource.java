package io.devalloc.bfc;

import io.devalloc.api.device.DeviceMemory;
import io.devalloc.api.device.VirtualMemory;
import io.devalloc.api.units.ByteSize;

/**
 * Where regions come from: TensorFlow's {@code SubAllocator}. Either plain device mallocs (no coalescing: each
 * region stands alone, like {@code DeviceMemAllocator} over {@code cuMemAlloc}) or virtual memory (one address
 * range reserved up front, physical memory mapped at its end on every extension, so new regions continue the
 * previous one and coalesce, like {@code GpuVirtualMemAllocator}).
 *
 * <p>Not thread-safe: called under the arena's lock, as TensorFlow calls its sub-allocator under its mutex.
 */
abstract sealed class RegionSource permits RegionSource.Malloc, RegionSource.Virtual {

    private final boolean coalescing;
    private final long granularity;
    /** The size obtained by the last successful {@link #alloc}. */
    long received;

    private RegionSource(boolean coalescing, long granularity) {
        this.coalescing = coalescing;
        this.granularity = granularity;
    }

    /** Obtains at least {@code bytes}; returns the base, or 0 when the device refused. */
    abstract long alloc(long bytes);

    /** The size actually obtained by the last successful {@link #alloc} (may exceed the request). */
    final long received() {
        return received;
    }

    /** Returns a region obtained by {@link #alloc}. */
    abstract void free(long base, long bytes);

    /**
     * Whether a region whose {@link #free} failed with {@code failure} is gone from the device all the same, so
     * that the arena must forget it (true for a failed unmap, as the virtual-memory port says; false for a failed
     * device free, which changes nothing).
     */
    abstract boolean goneAfter(RuntimeException failure);

    /** Whether consecutive regions are contiguous and may be coalesced. */
    final boolean supportsCoalescing() {
        return coalescing;
    }

    /** The unit every region size is rounded up to. */
    final long granularity() {
        return granularity;
    }

    /** Releases what the source itself holds (the virtual reservation). */
    abstract void close();

    /** Plain device mallocs. */
    static final class Malloc extends RegionSource {
        private final DeviceMemory device;

        Malloc(DeviceMemory device) {
            super(false, Bins.MIN_ALLOCATION_SIZE);
            this.device = device;
        }

        @Override
        long alloc(long bytes) {
            long base = device.malloc(bytes);
            received = base == 0 ? 0 : bytes;
            return base;
        }

        @Override
        void free(long base, long bytes) {
            device.free(base);
        }

        @Override
        boolean goneAfter(RuntimeException failure) {
            return false;
        }

        @Override
        void close() {
            // Nothing beyond the regions, which the arena frees itself.
        }
    }

    /**
     * A reservation of the whole memory limit (rounded up to the granule), mapped from its start as the arena
     * grows. Extensions are rounded up to the granule, as {@code GpuVirtualMemAllocator} reports through
     * {@code bytes_received}.
     *
     * <p>Each extension is mapped as one piece ({@link VirtualMemory#map(long, long, long)} with the whole size),
     * as {@code GpuVirtualMemAllocator::Alloc} backs it with one {@code cuMemCreate} handle: on CUDA an extension of
     * any size costs three driver calls and one handle. That is enough because the arena only ever frees whole
     * regions ({@code DeallocateFreeRegions} and close), and a region is one extension or several adjacent ones
     * that coalesced, so every {@link #free} covers whole pieces, as {@code GpuVirtualMemAllocator::Free} requires
     * of its mappings ("Exact sizes of previous allocations must be provided").
     */
    static final class Virtual extends RegionSource {
        private final VirtualMemory vm;
        private final long reservationSize;
        private long base;
        private long mappedEnd;

        Virtual(VirtualMemory vm, long limit) {
            super(true, vm.granularity());
            this.vm = vm;
            long granularity = granularity();
            long rounded = ByteSize.roundUp(Math.max(limit, granularity), granularity);
            this.reservationSize = rounded < 0 ? Long.MAX_VALUE & -granularity : rounded;
        }

        /**
         * Reserves the whole range now, if not yet reserved (the arena does so when it is created).
         *
         * @return false when the device has no address range of {@link #reservationSize()} left
         */
        boolean reserve() {
            if (base == 0) {
                base = vm.reserve(reservationSize);
                if (base == 0) {
                    return false;
                }
                mappedEnd = base;
            }
            return true;
        }

        /** The address space reserved for the regions: the limit rounded up to the granule. */
        long reservationSize() {
            return reservationSize;
        }

        @Override
        long alloc(long bytes) {
            long size = ByteSize.roundUp(bytes, granularity());
            if (!reserve()) {
                return 0;
            }
            if (size < 0 || size > base + reservationSize - mappedEnd) {
                return 0;
            }
            if (!vm.map(mappedEnd, size, size)) {
                return 0;
            }
            long at = mappedEnd;
            mappedEnd += size;
            received = size;
            return at;
        }

        @Override
        void free(long regionBase, long bytes) {
            try {
                vm.unmap(regionBase, bytes);
            } catch (IllegalArgumentException refused) {
                throw refused;
            } catch (RuntimeException failed) {
                // The port's rule: after a failed unmap the range is unmapped (its memory may be lost).
                forget(regionBase, bytes);
                throw failed;
            }
            forget(regionBase, bytes);
        }

        private void forget(long regionBase, long bytes) {
            if (regionBase + bytes == mappedEnd) {
                // The last region went back: later extensions reuse its address range.
                mappedEnd = regionBase;
            }
        }

        @Override
        boolean goneAfter(RuntimeException failure) {
            return !(failure instanceof IllegalArgumentException);
        }

        @Override
        void close() {
            if (base != 0) {
                vm.release(base);
                base = 0;
            }
        }
    }
}
