package io.devalloc.cuda;

import io.devalloc.api.device.VirtualMemory;
import io.devalloc.api.error.DeviceException;
import io.devalloc.api.units.ByteSize;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * CUDA's virtual-memory management (the driver API) for one {@link CudaDeviceMemory}:
 * <ul>
 *   <li>{@link #reserve} is {@code cuMemAddressReserve} aligned to the granule;</li>
 *   <li>{@link #map} is {@code cuMemCreate} (pinned memory on this device) + {@code cuMemMap} +
 *       {@code cuMemSetAccess} (read-write for this device), undone step by step if a later step fails;</li>
 *   <li>{@link #unmap} is {@code cuMemUnmap} + {@code cuMemRelease} of the handle that {@link #map} created for
 *       that range;</li>
 *   <li>{@link #release} is {@code cuMemAddressFree}.</li>
 * </ul>
 *
 * <p><b>Bookkeeping.</b> Reservations and mapped ranges are kept here, each mapped range with its physical-memory
 * handle, so that every misuse the {@link VirtualMemory} contract names (misaligned, outside a reservation,
 * overlapping, not mapped, releasing while mapped) is refused with {@link IllegalArgumentException} before the
 * driver is called.
 *
 * <p><b>One handle per {@link #map} call.</b> CUDA cannot unmap part of a range mapped by one {@code cuMemMap}, nor
 * free part of the physical memory one {@code cuMemCreate} made. So {@link #unmap} accepts any granule-aligned range
 * made of whole mapped ranges (one or several, each unmapped and released on its own), and refuses with
 * {@link IllegalArgumentException} a range that would cut one in two: map in the pieces you will unmap, as
 * PyTorch's expandable segments (one page at a time) and TensorFlow's region allocator (one region at a time) do.
 * Mapping every granule separately would lift that restriction at the cost of three driver calls per granule, which
 * for a 40 GiB arena is 60,000 calls.
 *
 * <p><b>Failures.</b> A failed unmap or release still forgets the range (the driver's state is unknown, and
 * keeping it would make {@link CudaDeviceMemory#close()} retry on memory that may be gone) and throws a
 * {@link io.devalloc.api.error.DeviceException}. Running out of physical memory in {@code cuMemCreate}, or of
 * address space in {@code cuMemAddressReserve}, is an answer rather than a failure: {@code false} and 0.
 *
 * <p><b>Synchronisation.</b> Unmapping does not wait for the device: callers make sure no queued work still uses
 * the range (PyTorch synchronises the segment's stream first). {@link CudaDeviceMemory#close()} synchronises the
 * device before it unmaps what is left.
 *
 * <p>Thread-safe: every method runs under this object's monitor, driver calls included (they are structural and
 * rare), inside the device's shared lock so that closing waits for them.
 */
final class CudaVirtualMemory implements VirtualMemory {

    /** A reserved range and what is mapped in it (start → mapping). */
    private record Reservation(long base, long size, TreeMap<Long, Mapping> mappings) {
        long end() {
            return base + size;
        }
    }

    /** A mapped range and the physical-memory handle behind it. */
    private record Mapping(long address, long size, long handle) {
        long end() {
            return address + size;
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
                reservations.put(base, new Reservation(base, bytes, new TreeMap<>()));
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
                if (!r.mappings().isEmpty()) {
                    throw new IllegalArgumentException("the reservation at " + ByteSize.hex(base) + " of " + owner
                            + " still has " + r.mappings().size() + " mapped ranges; unmap them first");
                }
                owner.setDevice();
                reservations.remove(base);
                owner.checkDriver(api.memAddressFree(base, r.size()),
                        "cuMemAddressFree(" + ByteSize.hex(base) + ", " + r.size() + " bytes)");
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
                Map.Entry<Long, Mapping> before = r.mappings().floorEntry(address);
                Map.Entry<Long, Mapping> after = r.mappings().ceilingEntry(address);
                if ((before != null && before.getValue().end() > address)
                        || (after != null && after.getKey() < address + bytes)) {
                    throw new IllegalArgumentException(range(address, bytes) + " overlaps memory already mapped in "
                            + owner);
                }
                owner.setDevice();
                long[] out = new long[1];
                int rc = api.memCreate(out, bytes, device, 0);
                if (rc == CudaApi.CU_ERROR_OUT_OF_MEMORY) {
                    return false;
                }
                owner.checkDriver(rc, "cuMemCreate(" + bytes + " bytes)");
                long handle = out[0];
                rc = api.memMap(address, bytes, 0, handle, 0);
                if (rc != CudaApi.SUCCESS) {
                    int released = api.memRelease(handle);
                    if (rc == CudaApi.CU_ERROR_OUT_OF_MEMORY && released == CudaApi.SUCCESS) {
                        return false;
                    }
                    owner.checkDriver(rc, "cuMemMap(" + range(address, bytes) + ")");
                    owner.checkDriver(released, "cuMemRelease after a failed cuMemMap");
                }
                rc = api.memSetAccess(address, bytes, device, CudaApi.ACCESS_READ_WRITE);
                if (rc != CudaApi.SUCCESS) {
                    int unmapped = api.memUnmap(address, bytes);
                    int released = api.memRelease(handle);
                    if (rc == CudaApi.CU_ERROR_OUT_OF_MEMORY && unmapped == CudaApi.SUCCESS
                            && released == CudaApi.SUCCESS) {
                        return false;
                    }
                    owner.checkDriver(rc, "cuMemSetAccess(" + range(address, bytes) + ", read-write)");
                    owner.checkDriver(unmapped, "cuMemUnmap after a failed cuMemSetAccess");
                    owner.checkDriver(released, "cuMemRelease after a failed cuMemSetAccess");
                }
                r.mappings().put(address, new Mapping(address, bytes, handle));
                mappedBytes += bytes;
                return true;
            }
        } finally {
            owner.exit();
        }
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
                List<Mapping> pieces = new ArrayList<>();
                long at = address;
                long end = address + bytes;
                while (at < end) {
                    Map.Entry<Long, Mapping> e = r.mappings().floorEntry(at);
                    Mapping m = e == null ? null : e.getValue();
                    if (m == null || m.end() <= at) {
                        throw new IllegalArgumentException(range(address, bytes) + " is not wholly mapped in " + owner
                                + ": nothing is mapped at " + ByteSize.hex(at));
                    }
                    if (m.address() < address || m.end() > end) {
                        throw new IllegalArgumentException(range(address, bytes) + " cuts the range "
                                + range(m.address(), m.size()) + " that one map() call mapped in " + owner
                                + "; CUDA can only unmap whole cuMemMap ranges, so map in the pieces you will unmap");
                    }
                    pieces.add(m);
                    at = m.end();
                }
                List<RuntimeException> failures = new ArrayList<>();
                CudaDeviceMemory.attempt(failures, owner::setDevice);
                for (Mapping m : pieces) {
                    r.mappings().remove(m.address());
                    mappedBytes -= m.size();
                    unmapAndRelease(m, failures);
                }
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
     * Unmaps and releases every mapped range and frees every reservation, for {@link CudaDeviceMemory#close()},
     * which has made the device current and holds its exclusive lock. Carries on past failures, collecting them.
     */
    synchronized void releaseAll(List<RuntimeException> failures) {
        for (Reservation r : reservations.values()) {
            for (Mapping m : r.mappings().values()) {
                unmapAndRelease(m, failures);
            }
            r.mappings().clear();
            CudaDeviceMemory.attempt(failures, () -> owner.checkDriver(api.memAddressFree(r.base(), r.size()),
                    "cuMemAddressFree(" + ByteSize.hex(r.base()) + ", " + r.size() + " bytes) while closing"));
        }
        reservations.clear();
        mappedBytes = 0;
    }

    private void unmapAndRelease(Mapping m, List<RuntimeException> failures) {
        CudaDeviceMemory.attempt(failures, () -> owner.checkDriver(api.memUnmap(m.address(), m.size()),
                "cuMemUnmap(" + range(m.address(), m.size()) + ")"));
        // Released even when the unmap failed: the driver frees the memory once nothing maps it.
        CudaDeviceMemory.attempt(failures, () -> owner.checkDriver(api.memRelease(m.handle()),
                "cuMemRelease of the memory mapped at " + range(m.address(), m.size())));
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
                    + (r == null || address >= r.end() ? "" : " (the reservation at " + ByteSize.hex(r.base())
                    + " ends at " + ByteSize.hex(r.end()) + ")"));
        }
        return r;
    }

    private boolean overlapsReservation(long base, long bytes) {
        Map.Entry<Long, Reservation> before = reservations.floorEntry(base);
        Map.Entry<Long, Reservation> after = reservations.ceilingEntry(base);
        return (before != null && before.getValue().end() > base) || (after != null && after.getKey() < base + bytes);
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
