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
 *   <li>{@link #map(long, long, long)} of n pieces is n {@code cuMemCreate} (pinned memory on this device, one
 *       piece each), then n {@code cuMemMap} (one piece each), then one {@code cuMemSetAccess} over the whole range
 *       (read-write for this device), exactly PyTorch's {@code ExpandableSegment::map} with its
 *       {@code mapAndSetAccess}; if a step fails, exactly what this call did is undone;</li>
 *   <li>{@link #unmap} of n pieces is {@code cuMemUnmap} + {@code cuMemRelease} of each piece's handle;</li>
 *   <li>{@link #release} is {@code cuMemAddressFree}.</li>
 * </ul>
 *
 * <p><b>One physical handle per piece, as PyTorch has one per page.</b> CUDA cannot unmap part of a range that
 * one {@code cuMemMap} mapped, nor free part of the memory one {@code cuMemCreate} made. So every piece the caller
 * asks for ({@link VirtualMemory#map(long, long, long)}) gets its own handle and its own {@code cuMemMap}, exactly as
 * PyTorch's {@code ExpandableSegment::map} does per page ({@code c10/cuda/CUDACachingAllocator.cpp}: a
 * {@code cuMemCreate} of {@code segment_size_} per page, then {@code mapAndSetAccess}: a {@code cuMemMap} per page
 * and one {@code cuMemSetAccess} over the whole range; the spec's "cuMemSetAccess per page" is not what the source
 * does, and this class follows the source). Then {@link #unmap} accepts any range of whole pieces, whatever
 * {@link #map} calls mapped them: some pieces of one call's range, or pieces of several calls; it refuses a range
 * that starts or ends inside a piece. The caching allocator maps a run of pages in one call, in pieces of its page
 * size (2 MiB in the small pool, 20 MiB in the large one), and later unmaps any whole-page part of it; the BFC
 * allocator maps each region as one piece, as TensorFlow's {@code GpuVirtualMemAllocator} does, and frees whole
 * regions.
 *
 * <p><b>Cost.</b> Mapping n pieces takes 2n + 1 driver calls and unmapping them 2n, and {@link JCudaApi} keeps one
 * table entry per live piece. With PyTorch's 20 MiB pages that is PyTorch's own count: a 600 MiB map is 30 pieces,
 * 61 calls, as upstream (whose comment says "mapping 10 separately allocated 2MiB pages takes 10x time compared to
 * mapping one 20MiB physical allocation", which is why its large pages are 20 MiB). One-granule pieces (the
 * two-argument {@link #map(long, long)}) cost ten times as many; a BFC region of 80 GiB mapped as one piece costs 3
 * calls and one handle instead of 81,921 calls and 40,960 handles.
 *
 * <p><b>Bookkeeping.</b> Per reservation, two arrays indexed by granule, grown on demand up to the highest granule
 * mapped (as PyTorch's {@code handles_} vector grows) and dropped when nothing is mapped: a {@code long[]} with the
 * handle of the piece that starts at each granule (0 elsewhere), and an {@code int[]} that says, at a piece's first
 * granule, how many granules the piece has, at its other granules how far back its first granule is (as a negative
 * number), and 0 where nothing is mapped; and a count of mapped granules. So every misuse the {@link VirtualMemory}
 * contract names (misaligned, bad piece size, outside a reservation, overlapping, not wholly mapped, cutting a
 * piece, releasing while mapped) is refused with {@link IllegalArgumentException} before the driver is called, at a
 * cost of twelve bytes per granule and one scan of the range's slots per call. A reservation of more granules than
 * one array can index (2<sup>31</sup> granules, 4 PiB at 2 MiB: more address space than any GPU has) is answered
 * like a driver out of address space, with 0, without asking the driver.
 *
 * <p><b>Failures.</b> Running out of physical memory in {@code cuMemCreate} (or in {@code cuMemMap} or
 * {@code cuMemSetAccess}), or of address space in {@code cuMemAddressReserve}, is an answer rather than a failure:
 * {@code false} and 0. A map that fails partway unmaps the pieces it mapped and releases the handles it created,
 * and nothing else; any other error, or an OOM whose undo failed, is a {@link DeviceException} naming the failed
 * call, with the undo's failures suppressed. An unmap (and {@link CudaDeviceMemory#close()}) carries on past a
 * failed {@code cuMemUnmap} or {@code cuMemRelease} to the other pieces, forgets every piece of the range all the
 * same (the driver's state is unknown, and keeping it would make {@code close()} retry on memory that may be gone),
 * and throws the first failure with the others suppressed; after {@value #LISTED_PIECE_FAILURES} failures in one
 * unmap, one undo or one reservation being closed, the rest are only counted, in one last suppressed exception, so
 * that a driver that fails every call costs a summary rather than an exception per piece.
 *
 * <p><b>Synchronisation.</b> Unmapping does not wait for the device: callers make sure no queued work still uses
 * the range (PyTorch synchronises the segment's stream first). {@link CudaDeviceMemory#close()} synchronises the
 * device before it unmaps what is left.
 *
 * <p>Thread-safe: every method runs under this object's monitor, driver calls included (they are structural and
 * rare), inside the device's shared lock so that closing waits for them.
 */
final class CudaVirtualMemory implements VirtualMemory {

    /** How many failed per-piece driver calls one unmap, undo or close lists as exceptions; the rest are counted. */
    static final int LISTED_PIECE_FAILURES = 16;

    /** The most granules one reservation may have: what one {@code long[]} can index. */
    private static final long MAX_GRANULES = Integer.MAX_VALUE - 8;

    private static final long[] NO_HANDLES = new long[0];
    private static final int[] NO_PIECES = new int[0];

    /**
     * A reserved range and what is mapped in it, by granule i ({@code base + i * granularity}): {@code handles[i]}
     * is the physical-memory handle of the piece that starts at granule i, 0 elsewhere; {@code pieces[i]} is the
     * piece's number of granules where it starts, minus the distance back to its start at its other granules, and 0
     * where nothing is mapped. Granules past the arrays' end are unmapped.
     */
    private static final class Reservation {
        final long base;
        final long size;
        long[] handles = NO_HANDLES;
        int[] pieces = NO_PIECES;
        int mappedGranules;

        Reservation(long base, long size) {
            this.base = base;
            this.size = size;
        }

        long end() {
            return base + size;
        }

        /** The first granule in {@code [from, to)} that is mapped, or -1. */
        int firstMapped(int from, int to) {
            int end = Math.min(to, pieces.length);
            for (int i = from; i < end; i++) {
                if (pieces[i] != 0) {
                    return i;
                }
            }
            return -1;
        }

        /** The first granule in {@code [from, to)} that is not mapped, or -1. */
        int firstUnmapped(int from, int to) {
            for (int i = from; i < to; i++) {
                if (i >= pieces.length || pieces[i] == 0) {
                    return i;
                }
            }
            return -1;
        }

        /** Whether granule {@code i} is mapped but not the first of its piece. */
        boolean insidePiece(int i) {
            return i < pieces.length && pieces[i] < 0;
        }

        /** Grows the arrays to index at least {@code end} granules (doubling, at most {@code granules}). */
        void cover(int end, int granules) {
            if (end > handles.length) {
                int length = (int) Math.min(granules, Math.max(end, 2L * handles.length));
                handles = Arrays.copyOf(handles, length);
                pieces = Arrays.copyOf(pieces, length);
            }
        }

        /** Drops the arrays once nothing is mapped. */
        void trim() {
            if (mappedGranules == 0) {
                handles = NO_HANDLES;
                pieces = NO_PIECES;
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
        try (CudaDeviceMemory.Entered _ = owner.enter()) {
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
        }
    }

    @Override
    public void release(long base) {
        try (CudaDeviceMemory.Entered _ = owner.enter()) {
            synchronized (this) {
                Reservation r = reservations.get(base);
                if (r == null) {
                    throw new IllegalArgumentException(ByteSize.hex(base) + " is not the base of a reservation of "
                            + owner + " (never reserved, or already released)");
                }
                if (r.mappedGranules != 0) {
                    throw new IllegalArgumentException("the reservation at " + ByteSize.hex(base) + " of " + owner
                            + " still has " + r.mappedGranules + " mapped granules (the first at "
                            + ByteSize.hex(addressOf(r, r.firstMapped(0, r.pieces.length))) + "); unmap them first");
                }
                owner.setDevice();
                reservations.remove(base);
                owner.checkDriver(api.memAddressFree(base, r.size),
                        "cuMemAddressFree(" + ByteSize.hex(base) + ", " + r.size + " bytes)");
            }
        }
    }

    @Override
    public boolean map(long address, long bytes, long pieceBytes) {
        requireGranules("address", address);
        requireGranules("size", bytes);
        if (bytes <= 0) {
            throw new IllegalArgumentException("size to map must be positive, got " + bytes);
        }
        if (pieceBytes <= 0 || pieceBytes % granularity != 0 || bytes % pieceBytes != 0) {
            throw new IllegalArgumentException("piece size " + pieceBytes + " is not a positive multiple of the "
                    + ByteSize.format(granularity) + " granule of " + owner + " that divides the " + bytes
                    + " bytes to map");
        }
        try (CudaDeviceMemory.Entered _ = owner.enter()) {
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
                return mapPieces(r, first, count, (int) (pieceBytes / granularity));
            }
        }
    }

    /**
     * Creates a handle per piece, maps each, then grants access to the whole range, as PyTorch's
     * {@code ExpandableSegment::map}; on a failure undoes exactly what it did. The granules' slots are free and
     * the arrays cover them; {@code pieceGranules} divides {@code count}.
     */
    private boolean mapPieces(Reservation r, int first, int count, int pieceGranules) {
        long[] handles = r.handles;
        long address = addressOf(r, first);
        long bytes = count * granularity;
        long pieceBytes = pieceGranules * granularity;
        int pieceCount = count / pieceGranules;
        long[] out = new long[1];
        int created = 0;
        int mapped = 0;
        int rc = CudaApi.SUCCESS;
        String failedCall = null;
        Throwable thrown = null;
        try {
            while (created < pieceCount) {
                rc = api.memCreate(out, pieceBytes, device, 0);
                if (rc != CudaApi.SUCCESS) {
                    failedCall = "cuMemCreate(" + pieceBytes + " bytes) for the piece at "
                            + ByteSize.hex(addressOf(r, first + created * pieceGranules)) + " of "
                            + range(address, bytes);
                    break;
                }
                handles[first + created * pieceGranules] = out[0];
                created++;
            }
            while (rc == CudaApi.SUCCESS && mapped < pieceCount) {
                int start = first + mapped * pieceGranules;
                long at = addressOf(r, start);
                rc = api.memMap(at, pieceBytes, 0, handles[start], 0);
                if (rc != CudaApi.SUCCESS) {
                    failedCall = "cuMemMap(" + range(at, pieceBytes) + ") of " + range(address, bytes);
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
            int[] pieces = r.pieces;
            for (int start = first; start < first + count; start += pieceGranules) {
                pieces[start] = pieceGranules;
                for (int j = 1; j < pieceGranules; j++) {
                    pieces[start + j] = -j;
                }
            }
            r.mappedGranules += count;
            mappedBytes += bytes;
            return true;
        }
        List<RuntimeException> undoFailures = new ArrayList<>();
        PieceFailures failures = new PieceFailures(undoFailures, "undoing a failed map of " + range(address, bytes));
        for (int i = 0; i < created; i++) {
            int start = first + i * pieceGranules;
            long handle = handles[start];
            handles[start] = 0;
            if (i < mapped) {
                unmapPiece(addressOf(r, start), pieceBytes, failures);
            }
            releaseHandle(addressOf(r, start), pieceBytes, handle, failures);
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
        try (CudaDeviceMemory.Entered _ = owner.enter()) {
            synchronized (this) {
                Reservation r = reservationAround(address, bytes);
                int first = granuleOf(r, address);
                int end = first + (int) (bytes / granularity);
                int hole = r.firstUnmapped(first, end);
                if (hole >= 0) {
                    throw new IllegalArgumentException(range(address, bytes) + " is not wholly mapped in " + owner
                            + ": nothing is mapped at " + ByteSize.hex(addressOf(r, hole)));
                }
                int cut = r.insidePiece(first) ? first : r.insidePiece(end) ? end : -1;
                if (cut >= 0) {
                    int pieceStart = cut + r.pieces[cut];
                    throw new IllegalArgumentException(range(address, bytes) + " cuts the piece "
                            + range(addressOf(r, pieceStart), r.pieces[pieceStart] * granularity)
                            + " that one cuMemCreate handle backs in " + owner
                            + "; unmap whole pieces, as they were mapped");
                }
                List<RuntimeException> failures = new ArrayList<>();
                CudaDeviceMemory.attempt(failures, owner::setDevice);
                PieceFailures pieceFailures = new PieceFailures(failures, "unmapping " + range(address, bytes));
                for (int i = first; i < end; ) {
                    int pieceGranules = r.pieces[i];
                    unmapAndForgetPiece(r, i, pieceFailures);
                    i += pieceGranules;
                }
                r.mappedGranules -= end - first;
                mappedBytes -= bytes;
                r.trim();
                pieceFailures.finish();
                throwFirst(failures);
            }
        }
    }

    @Override
    public long mappedBytes() {
        try (CudaDeviceMemory.Entered _ = owner.enter()) {
            synchronized (this) {
                return mappedBytes;
            }
        }
    }

    /**
     * Unmaps and releases every mapped piece and frees every reservation, for {@link CudaDeviceMemory#close()},
     * which has made the device current and holds its exclusive lock. Carries on past failures, collecting them.
     */
    synchronized void releaseAll(List<RuntimeException> failures) {
        for (Reservation r : reservations.values()) {
            PieceFailures pieceFailures = new PieceFailures(failures,
                    "closing, in the reservation at " + ByteSize.hex(r.base));
            int[] pieces = r.pieces;
            for (int i = 0; i < pieces.length; ) {
                int pieceGranules = pieces[i];
                if (pieceGranules > 0) {
                    unmapAndForgetPiece(r, i, pieceFailures);
                    i += pieceGranules;
                } else {
                    i++;
                }
            }
            pieceFailures.finish();
            r.mappedGranules = 0;
            r.trim();
            CudaDeviceMemory.attempt(failures, () -> owner.checkDriver(api.memAddressFree(r.base, r.size),
                    "cuMemAddressFree(" + ByteSize.hex(r.base) + ", " + r.size + " bytes) while closing"));
        }
        reservations.clear();
        mappedBytes = 0;
    }

    /**
     * Clears the slots of the piece that starts at granule {@code start}, then unmaps it and releases its handle;
     * released even when the unmap failed: the driver frees the memory once nothing maps it.
     */
    private void unmapAndForgetPiece(Reservation r, int start, PieceFailures failures) {
        int pieceGranules = r.pieces[start];
        long handle = r.handles[start];
        r.handles[start] = 0;
        Arrays.fill(r.pieces, start, start + pieceGranules, 0);
        long at = addressOf(r, start);
        long pieceBytes = pieceGranules * granularity;
        unmapPiece(at, pieceBytes, failures);
        releaseHandle(at, pieceBytes, handle, failures);
    }

    /** {@code cuMemUnmap} of one piece; a failure is collected, its message built only then. */
    private void unmapPiece(long address, long pieceBytes, PieceFailures failures) {
        try {
            int rc = api.memUnmap(address, pieceBytes);
            if (rc != CudaApi.SUCCESS) {
                failures.driver(rc, "cuMemUnmap(", address, pieceBytes, ")");
            }
        } catch (RuntimeException | LinkageError e) {
            failures.thrown(e);
        }
    }

    /** {@code cuMemRelease} of the handle of one piece; a failure is collected, its message built only then. */
    private void releaseHandle(long address, long pieceBytes, long handle, PieceFailures failures) {
        try {
            int rc = api.memRelease(handle);
            if (rc != CudaApi.SUCCESS) {
                failures.driver(rc, "cuMemRelease of the memory mapped at ", address, pieceBytes, "");
            }
        } catch (RuntimeException | LinkageError e) {
            failures.thrown(e);
        }
    }

    /**
     * The failed per-piece calls of one operation, collected into a list: the first
     * {@value #LISTED_PIECE_FAILURES} as exceptions, the rest counted and summed up by {@link #finish()}.
     */
    private final class PieceFailures {
        private final List<RuntimeException> failures;
        private final String operation;
        private int listed;
        private int unlisted;

        PieceFailures(List<RuntimeException> failures, String operation) {
            this.failures = failures;
            this.operation = operation;
        }

        void driver(int rc, String callBefore, long address, long bytes, String callAfter) {
            if (listed < LISTED_PIECE_FAILURES) {
                listed++;
                failures.add(owner.driverFailure(rc, callBefore + range(address, bytes) + callAfter));
            } else {
                unlisted++;
            }
        }

        void thrown(Throwable e) {
            if (listed < LISTED_PIECE_FAILURES) {
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
                        + LISTED_PIECE_FAILURES + " failures are listed"));
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
