package io.devalloc.cuda;

import io.devalloc.api.device.VirtualMemory;
import io.devalloc.api.error.DeviceException;
import io.devalloc.api.units.ByteSize;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * CUDA's virtual-memory management (the driver API) for one {@link CudaDeviceMemory}:
 * <ul>
 *   <li>{@link #reserve} is {@code cuMemAddressReserve} aligned to the granule;</li>
 *   <li>{@link #map} of n granules is n {@code cuMemCreate} (pinned memory on this device, one granule each), then
 *       n {@code cuMemMap} (one granule each), then one {@code cuMemSetAccess} over the whole range (read-write for
 *       this device); if a step fails, exactly what this call did is undone;</li>
 *   <li>{@link #unmap} of n granules is {@code cuMemUnmap} + {@code cuMemRelease} of each granule's handle;</li>
 *   <li>{@link #release} is {@code cuMemAddressFree}.</li>
 * </ul>
 *
 * <p><b>One physical handle per granule, as PyTorch has one per page.</b> CUDA cannot unmap part of a range that
 * one {@code cuMemMap} mapped, nor free part of the memory one {@code cuMemCreate} made. So every granule gets its
 * own handle and its own {@code cuMemMap}, exactly as PyTorch's {@code ExpandableSegment::map} does per page
 * ({@code c10/cuda/CUDACachingAllocator.cpp}: a {@code cuMemCreate} of {@code segment_size_} per page, then
 * {@code mapAndSetAccess}: a {@code cuMemMap} per page and one {@code cuMemSetAccess} over the whole range; the
 * spec's "cuMemSetAccess per page" is not what the source does, and this class follows the source). Then
 * {@link #unmap} accepts any granule-aligned range that is wholly mapped, whatever {@link #map} calls mapped it: a
 * sub-range of one call's range, or a range spanning several calls. The caching allocator relies on that: it maps
 * a run of pages in one call (one map of 600 MiB, not 30 of 20 MiB) and later unmaps any whole-page part of it.
 * The cost is driver calls per granule: mapping n granules takes 2n + 1 calls and unmapping them 2n, so a 40 GiB
 * mapping (20,480 granules of 2 MiB) is 40,961 calls to map and 40,960 to unmap, as in PyTorch, and
 * {@link JCudaApi} keeps one table entry per live handle.
 *
 * <p><b>Bookkeeping.</b> Per reservation, a {@code long[]} of the handle mapped at each granule (0 where nothing
 * is), grown on demand up to the highest granule mapped (as PyTorch's {@code handles_} vector grows) and dropped
 * when nothing is mapped, and a count of mapped granules. So every misuse the {@link VirtualMemory} contract names
 * (misaligned, outside a reservation, overlapping, not wholly mapped, releasing while mapped) is refused with
 * {@link IllegalArgumentException} before the driver is called, at a cost of one array slot per granule and one
 * scan of the range's slots per call. A reservation of more granules than one array can index (2<sup>31</sup>
 * granules, 4 PiB at 2 MiB: more address space than any GPU has) is answered like a driver out of address space,
 * with 0, without asking the driver.
 *
 * <p><b>Failures.</b> Running out of physical memory in {@code cuMemCreate} (or in {@code cuMemMap} or
 * {@code cuMemSetAccess}), or of address space in {@code cuMemAddressReserve}, is an answer rather than a failure:
 * {@code false} and 0. A map that fails partway unmaps the granules it mapped and releases the handles it created,
 * and nothing else; any other error, or an OOM whose undo failed, is a {@link DeviceException} naming the failed
 * call, with the undo's failures suppressed. An unmap (and {@link CudaDeviceMemory#close()}) carries on past a
 * failed {@code cuMemUnmap} or {@code cuMemRelease} to the other granules, forgets every granule of the range all
 * the same (the driver's state is unknown, and keeping it would make {@code close()} retry on memory that may be
 * gone), and throws the first failure with the others suppressed; after {@value #LISTED_GRANULE_FAILURES}
 * failures in one unmap, one undo or one reservation being closed, the rest are only counted, in one last
 * suppressed exception, so that a driver that fails every call costs a summary rather than an exception per
 * granule.
 *
 * <p><b>Synchronisation.</b> Unmapping does not wait for the device: callers make sure no queued work still uses
 * the range (PyTorch synchronises the segment's stream first). {@link CudaDeviceMemory#close()} synchronises the
 * device before it unmaps what is left.
 *
 * <p>Thread-safe: every method runs under this object's monitor, driver calls included (they are structural and
 * rare), inside the device's shared lock so that closing waits for them.
 */
final class CudaVirtualMemory implements VirtualMemory {

    /** How many failed per-granule driver calls one unmap, undo or close lists as exceptions; the rest are counted. */
    static final int LISTED_GRANULE_FAILURES = 16;

    /** The most granules one reservation may have: what one {@code long[]} can index. */
    private static final long MAX_GRANULES = Integer.MAX_VALUE - 8;

    private static final long[] NO_HANDLES = new long[0];

    /**
     * A reserved range and what is mapped in it: {@code handles[i]} is the physical-memory handle mapped at granule
     * i ({@code base + i * granularity}), 0 where nothing is mapped; granules past the array's end are unmapped.
     */
    private static final class Reservation {
        final long base;
        final long size;
        long[] handles = NO_HANDLES;
        int mappedGranules;

        Reservation(long base, long size) {
            this.base = base;
            this.size = size;
        }

        long end() {
            return base + size;
        }

        /** The first granule in {@code [from, to)} that has a handle, or -1. */
        int firstMapped(int from, int to) {
            int end = Math.min(to, handles.length);
            for (int i = from; i < end; i++) {
                if (handles[i] != 0) {
                    return i;
                }
            }
            return -1;
        }

        /** The first granule in {@code [from, to)} without a handle, or -1. */
        int firstUnmapped(int from, int to) {
            for (int i = from; i < to; i++) {
                if (i >= handles.length || handles[i] == 0) {
                    return i;
                }
            }
            return -1;
        }

        /** Grows {@link #handles} to index at least {@code end} granules (doubling, at most {@code granules}). */
        void cover(int end, int granules) {
            if (end > handles.length) {
                handles = Arrays.copyOf(handles, (int) Math.min(granules, Math.max(end, 2L * handles.length)));
            }
        }

        /** Drops the handle array once nothing is mapped. */
        void trim() {
            if (mappedGranules == 0) {
                handles = NO_HANDLES;
            }
        }
    }

    private final CudaDeviceMemory owner;
    private final CudaApi api;
    private final int device;
    private final long granularity;
    /** Reservations by base. */
    private final TreeMap<Long, Reservation> reservations = new TreeMap<>();
    private long mappedBytes;

    CudaVirtualMemory(CudaDeviceMemory owner, long granularity) {
        this.owner = owner;
        this.api = owner.api();
        this.device = owner.deviceIndex();
        this.granularity = granularity;
    }

    @Override
    public long granularity() {
        return granularity;
    }

    @Override
    public long reserve(long bytes) {
        requireGranules("reservation size", bytes);
        if (bytes <= 0) {
            throw new IllegalArgumentException("reservation size must be positive, got " + bytes);
        }
        owner.enter();
        try {
            synchronized (this) {
                if (bytes / granularity > MAX_GRANULES) {
                    return 0; // more address space than any GPU has; see the class comment
                }
                owner.setDevice();
                long[] out = new long[1];
                int rc = api.memAddressReserve(out, bytes, granularity, 0, 0);
                if (rc == CudaApi.CU_ERROR_OUT_OF_MEMORY) {
                    return 0;
                }
                owner.checkDriver(rc, "cuMemAddressReserve(" + bytes + " bytes)");
                long base = out[0];
                if (base == 0 || base % granularity != 0 || overlapsReservation(base, bytes)) {
                    // Not something the driver does; give it back rather than build on it.
                    if (base != 0) {
                        api.memAddressFree(base, bytes);
                    }
                    throw new DeviceException("cuMemAddressReserve(" + bytes + " bytes) on " + owner.descriptor().id()
                            + " returned " + ByteSize.hex(base) + ", which is not a fresh granule-aligned range");
                }
                reservations.put(base, new Reservation(base, bytes));
                return base;
            }
        } finally {
            owner.exit();
        }
    }

    @Override
    public void release(long base) {
        owner.enter();
        try {
            synchronized (this) {
                Reservation r = reservations.get(base);
                if (r == null) {
                    throw new IllegalArgumentException(ByteSize.hex(base) + " is not the base of a reservation of "
                            + owner + " (never reserved, or already released)");
                }
                if (r.mappedGranules != 0) {
                    throw new IllegalArgumentException("the reservation at " + ByteSize.hex(base) + " of " + owner
                            + " still has " + r.mappedGranules + " mapped granules (the first at "
                            + ByteSize.hex(addressOf(r, r.firstMapped(0, r.handles.length))) + "); unmap them first");
                }
                owner.setDevice();
                reservations.remove(base);
                owner.checkDriver(api.memAddressFree(base, r.size),
                        "cuMemAddressFree(" + ByteSize.hex(base) + ", " + r.size + " bytes)");
            }
        } finally {
            owner.exit();
        }
    }

    @Override
    public boolean map(long address, long bytes) {
        requireGranules("address", address);
        requireGranules("size", bytes);
        if (bytes <= 0) {
            throw new IllegalArgumentException("size to map must be positive, got " + bytes);
        }
        owner.enter();
        try {
            synchronized (this) {
                Reservation r = reservationAround(address, bytes);
                int first = granuleOf(r, address);
                int count = (int) (bytes / granularity);
                int taken = r.firstMapped(first, first + count);
                if (taken >= 0) {
                    throw new IllegalArgumentException(range(address, bytes) + " overlaps memory already mapped in "
                            + owner + ": the granule at " + ByteSize.hex(addressOf(r, taken)) + " is mapped");
                }
                owner.setDevice();
                r.cover(first + count, (int) (r.size / granularity));
                return mapGranules(r, first, count);
            }
        } finally {
            owner.exit();
        }
    }

    /**
     * Creates a handle per granule, maps each, then grants access to the whole range, as PyTorch's
     * {@code ExpandableSegment::map}; on a failure undoes exactly what it did. The granules' slots are free and
     * the handle array covers them.
     */
    private boolean mapGranules(Reservation r, int first, int count) {
        long[] handles = r.handles;
        long address = addressOf(r, first);
        long bytes = count * granularity;
        long[] out = new long[1];
        int created = 0;
        int mapped = 0;
        int rc = CudaApi.SUCCESS;
        String failedCall = null;
        Throwable thrown = null;
        try {
            while (created < count) {
                rc = api.memCreate(out, granularity, device, 0);
                if (rc != CudaApi.SUCCESS) {
                    failedCall = "cuMemCreate(" + granularity + " bytes) for the granule at "
                            + ByteSize.hex(addressOf(r, first + created)) + " of " + range(address, bytes);
                    break;
                }
                handles[first + created] = out[0];
                created++;
            }
            while (rc == CudaApi.SUCCESS && mapped < count) {
                long at = addressOf(r, first + mapped);
                rc = api.memMap(at, granularity, 0, handles[first + mapped], 0);
                if (rc != CudaApi.SUCCESS) {
                    failedCall = "cuMemMap(" + range(at, granularity) + ") of " + range(address, bytes);
                    break;
                }
                mapped++;
            }
            if (rc == CudaApi.SUCCESS) {
                rc = api.memSetAccess(address, bytes, device, CudaApi.ACCESS_READ_WRITE);
                if (rc != CudaApi.SUCCESS) {
                    failedCall = "cuMemSetAccess(" + range(address, bytes) + ", read-write)";
                }
            }
        } catch (RuntimeException | LinkageError e) {
            thrown = e;
        }
        if (rc == CudaApi.SUCCESS && thrown == null) {
            r.mappedGranules += count;
            mappedBytes += bytes;
            return true;
        }
        List<RuntimeException> undoFailures = new ArrayList<>();
        GranuleFailures failures = new GranuleFailures(undoFailures, "undoing a failed map of " + range(address, bytes));
        for (int i = 0; i < created; i++) {
            long handle = handles[first + i];
            handles[first + i] = 0;
            if (i < mapped) {
                unmapGranule(addressOf(r, first + i), failures);
            }
            releaseHandle(addressOf(r, first + i), handle, failures);
        }
        failures.finish();
        r.trim();
        if (thrown == null && rc == CudaApi.CU_ERROR_OUT_OF_MEMORY && undoFailures.isEmpty()) {
            return false;
        }
        Throwable failure = thrown != null ? thrown : owner.driverFailure(rc, failedCall);
        for (RuntimeException u : undoFailures) {
            failure.addSuppressed(u);
        }
        if (failure instanceof RuntimeException e) {
            throw e;
        }
        throw (Error) failure;
    }

    @Override
    public void unmap(long address, long bytes) {
        requireGranules("address", address);
        requireGranules("size", bytes);
        if (bytes <= 0) {
            throw new IllegalArgumentException("size to unmap must be positive, got " + bytes);
        }
        owner.enter();
        try {
            synchronized (this) {
                Reservation r = reservationAround(address, bytes);
                int first = granuleOf(r, address);
                int end = first + (int) (bytes / granularity);
                int hole = r.firstUnmapped(first, end);
                if (hole >= 0) {
                    throw new IllegalArgumentException(range(address, bytes) + " is not wholly mapped in " + owner
                            + ": nothing is mapped at " + ByteSize.hex(addressOf(r, hole)));
                }
                List<RuntimeException> failures = new ArrayList<>();
                CudaDeviceMemory.attempt(failures, owner::setDevice);
                GranuleFailures granuleFailures = new GranuleFailures(failures, "unmapping " + range(address, bytes));
                long[] handles = r.handles;
                for (int i = first; i < end; i++) {
                    long handle = handles[i];
                    handles[i] = 0;
                    unmapAndRelease(addressOf(r, i), handle, granuleFailures);
                }
                r.mappedGranules -= end - first;
                mappedBytes -= bytes;
                r.trim();
                granuleFailures.finish();
                throwFirst(failures);
            }
        } finally {
            owner.exit();
        }
    }

    @Override
    public long mappedBytes() {
        owner.enter();
        try {
            synchronized (this) {
                return mappedBytes;
            }
        } finally {
            owner.exit();
        }
    }

    /**
     * Unmaps and releases every mapped granule and frees every reservation, for {@link CudaDeviceMemory#close()},
     * which has made the device current and holds its exclusive lock. Carries on past failures, collecting them.
     */
    synchronized void releaseAll(List<RuntimeException> failures) {
        for (Reservation r : reservations.values()) {
            GranuleFailures granuleFailures = new GranuleFailures(failures,
                    "closing, in the reservation at " + ByteSize.hex(r.base));
            long[] handles = r.handles;
            for (int i = 0; i < handles.length; i++) {
                long handle = handles[i];
                if (handle != 0) {
                    handles[i] = 0;
                    unmapAndRelease(addressOf(r, i), handle, granuleFailures);
                }
            }
            granuleFailures.finish();
            r.mappedGranules = 0;
            r.trim();
            CudaDeviceMemory.attempt(failures, () -> owner.checkDriver(api.memAddressFree(r.base, r.size),
                    "cuMemAddressFree(" + ByteSize.hex(r.base) + ", " + r.size + " bytes) while closing"));
        }
        reservations.clear();
        mappedBytes = 0;
    }

    private void unmapAndRelease(long address, long handle, GranuleFailures failures) {
        unmapGranule(address, failures);
        // Released even when the unmap failed: the driver frees the memory once nothing maps it.
        releaseHandle(address, handle, failures);
    }

    /** {@code cuMemUnmap} of one granule; a failure is collected, its message built only then. */
    private void unmapGranule(long address, GranuleFailures failures) {
        try {
            int rc = api.memUnmap(address, granularity);
            if (rc != CudaApi.SUCCESS) {
                failures.driver(rc, "cuMemUnmap(", address, ")");
            }
        } catch (RuntimeException | LinkageError e) {
            failures.thrown(e);
        }
    }

    /** {@code cuMemRelease} of the handle of one granule; a failure is collected, its message built only then. */
    private void releaseHandle(long address, long handle, GranuleFailures failures) {
        try {
            int rc = api.memRelease(handle);
            if (rc != CudaApi.SUCCESS) {
                failures.driver(rc, "cuMemRelease of the memory mapped at ", address, "");
            }
        } catch (RuntimeException | LinkageError e) {
            failures.thrown(e);
        }
    }

    /**
     * The failed per-granule calls of one operation, collected into a list: the first
     * {@value #LISTED_GRANULE_FAILURES} as exceptions, the rest counted and summed up by {@link #finish()}.
     */
    private final class GranuleFailures {
        private final List<RuntimeException> failures;
        private final String operation;
        private int listed;
        private int unlisted;

        GranuleFailures(List<RuntimeException> failures, String operation) {
            this.failures = failures;
            this.operation = operation;
        }

        void driver(int rc, String callBefore, long address, String callAfter) {
            if (listed < LISTED_GRANULE_FAILURES) {
                listed++;
                failures.add(owner.driverFailure(rc, callBefore + range(address, granularity) + callAfter));
            } else {
                unlisted++;
            }
        }

        void thrown(Throwable e) {
            if (listed < LISTED_GRANULE_FAILURES) {
                listed++;
                failures.add(CudaDeviceMemory.asFailure(e));
            } else {
                unlisted++;
            }
        }

        /** Adds one exception that counts the failures not listed, if any. */
        void finish() {
            if (unlisted > 0) {
                failures.add(new DeviceException(unlisted + " more cuMemUnmap or cuMemRelease calls failed on "
                        + owner.descriptor().id() + " while " + operation + "; only the first "
                        + LISTED_GRANULE_FAILURES + " failures are listed"));
            }
        }
    }

    private static void throwFirst(List<RuntimeException> failures) {
        if (!failures.isEmpty()) {
            RuntimeException first = failures.getFirst();
            for (RuntimeException other : failures.subList(1, failures.size())) {
                first.addSuppressed(other);
            }
            throw first;
        }
    }

    /** The reservation that wholly contains the range, or an {@link IllegalArgumentException}. */
    private Reservation reservationAround(long address, long bytes) {
        Map.Entry<Long, Reservation> e = reservations.floorEntry(address);
        Reservation r = e == null ? null : e.getValue();
        if (r == null || address >= r.end() || bytes > r.end() - address) {
            throw new IllegalArgumentException(range(address, bytes) + " is not inside one reservation of " + owner
                    + (r == null || address >= r.end() ? "" : " (the reservation at " + ByteSize.hex(r.base)
                    + " ends at " + ByteSize.hex(r.end()) + ")"));
        }
        return r;
    }

    private boolean overlapsReservation(long base, long bytes) {
        Map.Entry<Long, Reservation> before = reservations.floorEntry(base);
        Map.Entry<Long, Reservation> after = reservations.ceilingEntry(base);
        return (before != null && before.getValue().end() > base) || (after != null && after.getKey() < base + bytes);
    }

    /** The index of the granule at {@code address} in {@code r}. */
    private int granuleOf(Reservation r, long address) {
        return (int) ((address - r.base) / granularity);
    }

    /** The address of granule {@code i} of {@code r}. */
    private long addressOf(Reservation r, int i) {
        return r.base + i * granularity;
    }

    private void requireGranules(String what, long value) {
        if (value % granularity != 0) {
            throw new IllegalArgumentException(what + " " + ByteSize.hex(value) + " is not a multiple of the "
                    + ByteSize.format(granularity) + " granule of " + owner);
        }
    }

    private static String range(long address, long bytes) {
        return "[" + ByteSize.hex(address) + ", +" + bytes + " bytes)";
    }
}
