package io.devalloc.host;

import io.devalloc.api.device.DeviceMemory;
import io.devalloc.api.device.VirtualMemory;
import io.devalloc.api.error.DeviceException;
import io.devalloc.api.internal.MappedPieces;
import io.devalloc.api.units.ByteSize;
import java.util.BitSet;
import java.util.Map;
import java.util.Objects;
import java.util.TreeMap;
import java.util.concurrent.locks.ReentrantLock;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * CUDA's virtual-memory API on host memory, with the kernel's own virtual memory, called through
 * {@link NativeMemoryCalls}:
 * <ul>
 *   <li>{@link #reserve}: {@code mmap(NULL, size, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0)},
 *       which takes address space but no memory and no commit charge, like {@code cuMemAddressReserve};</li>
 *   <li>{@link #map}: {@code mprotect(PROT_READ | PROT_WRITE)} on whole granules, then (pinned devices only)
 *       {@code mlock}, like {@code cuMemCreate} + {@code cuMemMap} + {@code cuMemSetAccess}; one call of each over
 *       the whole range, whatever its pieces;</li>
 *   <li>{@link #unmap}: ({@code munlock} when pinned, then) {@code madvise(MADV_DONTNEED)}, which gives the pages
 *       back to the system, and {@code mprotect(PROT_NONE)}, like {@code cuMemUnmap} + {@code cuMemRelease}; a
 *       granule mapped again reads as zeros. A failing {@code madvise} still unmaps the range (as the port says:
 *       after a failure the range counts as unmapped) and is reported with a {@link DeviceException};</li>
 *   <li>{@link #release}: {@code munmap} of the whole reservation, like {@code cuMemAddressFree}.</li>
 * </ul>
 *
 * <p><b>Granularity.</b> {@value #GRANULARITY_MIB} MiB, the granule of current NVIDIA GPUs, so that allocators see
 * the sizes they would see on a GPU (and so that with transparent huge pages a granule can be one huge page).
 * {@code mmap} only aligns to a page, so {@link #reserve} maps one granule more than asked, keeps the aligned part
 * and unmaps the slack at both ends.
 *
 * <p><b>Accounting.</b> Reserving costs nothing. Mapping charges the device's capacity, exactly as
 * {@link DeviceMemory#malloc} does, and {@link #map} returns false, changing nothing, when the granules do not fit
 * (or when the kernel answers {@code mprotect} with {@code ENOMEM}: strict overcommit, or too many mappings).
 * {@code memoryInfo()} of the device therefore counts mapped bytes as used. On plain host memory a mapped granule
 * is committed lazily, on first touch, as malloc'd memory is; on a pinned device {@code mlock} faults it in at once.
 *
 * <p><b>Pinned devices.</b> Granules are locked when mapped and unlocked before they are unmapped (the kernel
 * refuses {@code MADV_DONTNEED} on locked pages). A refused {@code mlock} undoes the map and throws the same
 * {@link DeviceException} as a refused pinned malloc, explaining {@code RLIMIT_MEMLOCK}: a 2 MiB granule is a
 * quarter of the usual 8 MiB limit.
 *
 * <p><b>Pieces.</b> The kernel can unmap any page, so pieces ({@link VirtualMemory#map(long, long, long)}) cost
 * nothing here, but they are enforced all the same: an {@link #unmap} that would cut a piece is refused as on CUDA,
 * where a piece is one physical handle, so that code tested on host memory behaves the same on a GPU.
 *
 * <p><b>State.</b> Reservations in a sorted map, base → size, a {@link BitSet} of mapped granules and one of the
 * granules where a piece starts (a piece runs to the next start or the first unmapped granule). All of it is
 * guarded by the device's lock, which the native calls run under too, so {@code close()} cannot race a map.
 * Arguments are checked before any native call, and an {@link IllegalArgumentException} changes nothing. The
 * device's {@code close()} munmaps every reservation (which also drops locks and memory); afterwards every method
 * but {@link #granularity()} throws {@link IllegalStateException}, as the device's do.
 */
final class HostVirtualMemory implements VirtualMemory {

    private static final Logger LOG = LoggerFactory.getLogger(HostVirtualMemory.class);

    static final int GRANULARITY_MIB = 2;
    /** The mapping granule: 2 MiB, as on a GPU. */
    static final long GRANULARITY = GRANULARITY_MIB * ByteSize.MiB;

    /**
     * One reserved range: {@code [base, base + bytes)}, bit i of {@code mapped} for granule i, bit i of
     * {@code pieceStarts} where a mapped piece starts at granule i.
     */
    private record Reservation(long base, long bytes, BitSet mapped, BitSet pieceStarts) {

        long end() {
            return base + bytes;
        }
    }

    private final HostMemory device;
    private final NativeMemoryCalls calls;
    private final ReentrantLock lock;
    private final boolean pinned;
    /** Base → reservation; guarded by {@link #lock}. */
    private final TreeMap<Long, Reservation> reservations = new TreeMap<>();
    /** Guarded by {@link #lock}. */
    private long mappedBytes;

    HostVirtualMemory(HostMemory device, NativeMemoryCalls calls, ReentrantLock lock, boolean pinned) {
        this.device = Objects.requireNonNull(device, "device");
        this.calls = Objects.requireNonNull(calls, "calls");
        this.lock = Objects.requireNonNull(lock, "lock");
        this.pinned = pinned;
    }

    /** Whether host virtual memory works with these calls: a known Linux platform whose pages divide a granule. */
    static boolean supported(NativeMemoryCalls calls) {
        long page = calls.pageSize();
        return calls.supportsVirtualMemory() && page > 0 && Long.bitCount(page) == 1 && GRANULARITY % page == 0;
    }

    @Override
    public long granularity() {
        return GRANULARITY;
    }

    @Override
    public long reserve(long bytes) {
        lock.lock();
        try {
            device.ensureOpen();
            requireGranules(bytes);
            // One granule of slack to align the base; the bitset indexes granules with an int.
            if (bytes > Long.MAX_VALUE - GRANULARITY || bytes / GRANULARITY > Integer.MAX_VALUE) {
                LOG.debug("{}: reserve({}) refused: larger than any address space", device, bytes);
                return DeviceMemory.NULL;
            }
            long length = bytes + GRANULARITY;
            long raw = calls.mmapReserve(length);
            if (raw == DeviceMemory.NULL) {
                LOG.debug("{}: reserve({}) refused: mmap of {} bytes failed", device, bytes, length);
                return DeviceMemory.NULL;
            }
            long base = (raw + GRANULARITY - 1) & -GRANULARITY;
            trim(raw, base - raw);
            trim(base + bytes, raw + length - (base + bytes));
            reservations.put(base, new Reservation(base, bytes, new BitSet(), new BitSet()));
            return base;
        } finally {
            lock.unlock();
        }
    }

    /** Unmaps alignment slack of a fresh reservation; a failure only leaks address space, so it is logged. */
    private void trim(long address, long bytes) {
        if (bytes == 0) {
            return;
        }
        int errno = calls.munmap(address, bytes);
        if (errno != 0) {
            LOG.warn("{}: unmapping {} bytes of alignment slack at {} failed with {}; the address space stays"
                    + " reserved until the process exits", device, bytes, ByteSize.hex(address),
                    MemlockAdvice.errnoName(errno));
        }
    }

    @Override
    public void release(long base) {
        lock.lock();
        try {
            device.ensureOpen();
            Reservation r = reservations.get(base);
            if (r == null) {
                Reservation around = containing(base);
                throw new IllegalArgumentException(ByteSize.hex(base) + " is not the base of a reservation on "
                        + device + (around == null ? "" : " (it lies inside the reservation at "
                        + ByteSize.hex(around.base()) + "; release that base)"));
            }
            if (!r.mapped().isEmpty()) {
                throw new IllegalArgumentException("the reservation at " + ByteSize.hex(base) + " on " + device
                        + " still has " + r.mapped().cardinality() + " mapped granules (the first at "
                        + ByteSize.hex(base + r.mapped().nextSetBit(0) * GRANULARITY) + "); unmap them first");
            }
            int errno = calls.munmap(base, r.bytes());
            if (errno != 0) {
                throw new DeviceException("munmap of the reservation at " + ByteSize.hex(base) + " ("
                        + ByteSize.format(r.bytes()) + ") on " + device + " failed with "
                        + MemlockAdvice.errnoName(errno) + "; it stays reserved");
            }
            reservations.remove(base);
        } finally {
            lock.unlock();
        }
    }

    @Override
    public boolean map(long address, long bytes, long pieceBytes) {
        lock.lock();
        try {
            device.ensureOpen();
            Reservation r = reservationOf(address, bytes);
            if (pieceBytes <= 0 || pieceBytes % GRANULARITY != 0 || bytes % pieceBytes != 0) {
                throw new IllegalArgumentException("piece size " + pieceBytes + " is not a positive multiple of the "
                        + ByteSize.format(GRANULARITY) + " granule that divides the " + bytes + " bytes to map on "
                        + device);
            }
            int from = granule(r, address);
            int to = from + (int) (bytes / GRANULARITY);
            int already = r.mapped().nextSetBit(from);
            if (already >= 0 && already < to) {
                throw new IllegalArgumentException("[" + ByteSize.hex(address) + ", +" + bytes + " bytes) overlaps"
                        + " a mapped range on " + device + ": the granule at "
                        + ByteSize.hex(r.base() + already * GRANULARITY) + " is already mapped");
            }
            if (!device.charge(bytes)) {
                LOG.debug("{}: map of {} at {} refused: over capacity", device, ByteSize.format(bytes),
                        ByteSize.hex(address));
                return false;
            }
            int errno = calls.mprotect(address, bytes, NativeMemoryCalls.PROT_READ_WRITE);
            if (errno != 0) {
                device.uncharge(bytes);
                if (errno == NativeMemoryCalls.ENOMEM) {
                    LOG.debug("{}: map of {} at {} refused: mprotect failed with ENOMEM", device,
                            ByteSize.format(bytes), ByteSize.hex(address));
                    return false;
                }
                throw new DeviceException("mprotect(" + ByteSize.hex(address) + ", " + bytes
                        + ", PROT_READ|PROT_WRITE) on " + device + " failed with " + MemlockAdvice.errnoName(errno));
            }
            if (pinned) {
                errno = calls.mlock(address, bytes);
                if (errno != 0) {
                    // Undo completely: mlock may have locked and faulted in part of the range before failing.
                    calls.munlock(address, bytes);
                    calls.madviseDontNeed(address, bytes);
                    calls.mprotect(address, bytes, NativeMemoryCalls.PROT_NONE);
                    device.uncharge(bytes);
                    throw new DeviceException(MemlockAdvice.explain("mlock of " + ByteSize.format(bytes) + " ("
                                    + bytes + " bytes) of mapped granules at " + ByteSize.hex(address) + " on "
                                    + device.descriptor().id(), errno, bytes, device.bytesInUse(), calls));
                }
            }
            MappedPieces.map(r.mapped(), r.pieceStarts(), from, to, (int) (pieceBytes / GRANULARITY));
            mappedBytes += bytes;
            return true;
        } finally {
            lock.unlock();
        }
    }

    @Override
    public void unmap(long address, long bytes) {
        lock.lock();
        try {
            device.ensureOpen();
            Reservation r = reservationOf(address, bytes);
            int from = granule(r, address);
            int to = from + (int) (bytes / GRANULARITY);
            int hole = r.mapped().nextClearBit(from);
            if (hole < to) {
                throw new IllegalArgumentException("[" + ByteSize.hex(address) + ", +" + bytes + " bytes) is not"
                        + " wholly mapped on " + device + ": the granule at "
                        + ByteSize.hex(r.base() + hole * GRANULARITY) + " is not mapped");
            }
            MappedPieces.requireWholePieces(r.mapped(), r.pieceStarts(), from, to, address, bytes, r.base(),
                    GRANULARITY, device);
            if (pinned) {
                int errno = calls.munlock(address, bytes);
                if (errno != 0) {
                    LOG.warn("{}: munlock of {} at {} failed with {}; unmapping anyway", device,
                            ByteSize.format(bytes), ByteSize.hex(address), MemlockAdvice.errnoName(errno));
                }
            }
            int madvised = calls.madviseDontNeed(address, bytes);
            int errno = calls.mprotect(address, bytes, NativeMemoryCalls.PROT_NONE);
            if (errno != 0) {
                // The memory is already back with the system; only the protection could not be dropped, and the
                // next map sets it again anyway.
                LOG.warn("{}: mprotect(PROT_NONE) of {} at {} failed with {}; the range holds no memory but stays"
                                + " accessible", device, ByteSize.format(bytes), ByteSize.hex(address),
                        MemlockAdvice.errnoName(errno));
            }
            MappedPieces.unmap(r.mapped(), r.pieceStarts(), from, to);
            mappedBytes -= bytes;
            device.uncharge(bytes);
            if (madvised != 0) {
                // The port's rule: after a failure the range counts as unmapped, so that no caller uses it again.
                throw new DeviceException("madvise(" + ByteSize.hex(address) + ", " + bytes + ", MADV_DONTNEED) on "
                        + device + " failed with " + MemlockAdvice.errnoName(madvised) + "; the range is unmapped"
                        + " (no longer accessible) but its pages may not have gone back to the system");
            }
        } finally {
            lock.unlock();
        }
    }

    @Override
    public long mappedBytes() {
        lock.lock();
        try {
            device.ensureOpen();
            return mappedBytes;
        } finally {
            lock.unlock();
        }
    }

    /** Whether {@code [address, address + bytes)} lies in one reservation and every granule it touches is mapped. */
    boolean covers(long address, long bytes) {
        // Called by HostMemory.hostView with the lock held.
        Reservation r = containing(address);
        if (r == null || bytes < 1 || bytes > r.end() - address) {
            return false;
        }
        int first = granule(r, address);
        int last = (int) ((address - r.base() + bytes - 1) / GRANULARITY);
        return r.mapped().nextClearBit(first) > last;
    }

    /** Number of live reservations (for logs). */
    int reservationCount() {
        return reservations.size();
    }

    /**
     * Unmaps every reservation (which drops its locks and its memory with it) and forgets them. Called by the
     * device's {@code close()} with the lock held; failures are logged so that one does not leak the rest.
     */
    void closeAll() {
        for (Reservation r : reservations.values()) {
            int errno = calls.munmap(r.base(), r.bytes());
            if (errno != 0) {
                LOG.warn("{}: munmap of the reservation at {} ({}) on close failed with {}", device,
                        ByteSize.hex(r.base()), ByteSize.format(r.bytes()), MemlockAdvice.errnoName(errno));
            }
        }
        reservations.clear();
        mappedBytes = 0;
    }

    private Reservation containing(long address) {
        Map.Entry<Long, Reservation> e = reservations.floorEntry(address);
        return e == null || address >= e.getValue().end() ? null : e.getValue();
    }

    private static int granule(Reservation r, long address) {
        return (int) ((address - r.base()) / GRANULARITY);
    }

    private static void requireGranules(long bytes) {
        if (bytes <= 0 || bytes % GRANULARITY != 0) {
            throw new IllegalArgumentException("size must be a positive multiple of the "
                    + ByteSize.format(GRANULARITY) + " granule, got " + bytes);
        }
    }

    /** The reservation that wholly contains a granule-aligned range; else an IllegalArgumentException. */
    private Reservation reservationOf(long address, long bytes) {
        requireGranules(bytes);
        if (address % GRANULARITY != 0) {
            throw new IllegalArgumentException("address " + ByteSize.hex(address) + " is not aligned to the "
                    + ByteSize.format(GRANULARITY) + " granule");
        }
        Reservation r = containing(address);
        if (r == null || bytes > r.end() - address) {
            throw new IllegalArgumentException("[" + ByteSize.hex(address) + ", +" + bytes + " bytes) lies outside"
                    + " every reservation on " + device + (r == null ? ""
                    : " (it starts in the reservation [" + ByteSize.hex(r.base()) + ", " + ByteSize.hex(r.end())
                    + ") but runs past its end)"));
        }
        return r;
    }
}
