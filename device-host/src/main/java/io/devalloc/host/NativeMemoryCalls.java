package io.devalloc.host;

import io.devalloc.api.units.ByteSize;
import java.util.Optional;

/**
 * The operating-system facilities that host memory needs, behind one seam. {@link FfmNativeMemoryCalls} is the
 * only real implementation; it exists as an interface so that tests can simulate what cannot happen on the build
 * machine (it runs as root with {@code CAP_IPC_LOCK}, so {@code mlock} is never refused there).
 *
 * <p>Implementations are thread-safe: every method is an independent system call.
 */
interface NativeMemoryCalls {

    /** {@code EPERM}: the caller is not allowed to lock memory. */
    int EPERM = 1;
    /** {@code EAGAIN}: some of the range could not be locked. */
    int EAGAIN = 11;
    /** {@code ENOMEM}: locking would exceed {@code RLIMIT_MEMLOCK}, or the range is not mapped. */
    int ENOMEM = 12;
    /** {@code EINVAL}: bad arguments (for example an alignment that is not a power of two). */
    int EINVAL = 22;

    /** {@code PROT_NONE}: no access; touching the page faults. */
    int PROT_NONE = 0;
    /** {@code PROT_READ | PROT_WRITE} (1 | 2 on every Linux architecture). */
    int PROT_READ_WRITE = 3;

    /**
     * Allocates {@code bytes} of uninitialised native memory aligned to {@code alignment} (malloc semantics: the
     * pages are neither zeroed nor touched).
     *
     * @return the address, or 0 when libc has no memory to give
     */
    long alloc(long bytes, long alignment);

    /** Returns memory from {@link #alloc} to libc. */
    void free(long address);

    /**
     * Locks {@code [address, address + bytes)} into RAM, faulting its pages in.
     *
     * @return 0 on success, otherwise the {@code errno} of the failed call
     */
    int mlock(long address, long bytes);

    /**
     * Unlocks a range locked by {@link #mlock}.
     *
     * @return 0 on success, otherwise the {@code errno} of the failed call
     */
    int munlock(long address, long bytes);

    /** The process's {@code RLIMIT_MEMLOCK}, or empty when it cannot be read on this system. */
    Optional<MemlockLimit> memlockLimit();

    /**
     * Whether this process may lock memory beyond {@code RLIMIT_MEMLOCK}: it has {@code CAP_IPC_LOCK} (on Linux
     * read from {@code CapEff} in {@code /proc/self/status}, otherwise assumed for effective uid 0).
     */
    boolean mayExceedMemlockLimit();

    /** The size of a virtual-memory page, the granularity of {@code mlock}. */
    long pageSize();

    /**
     * Whether the four virtual-memory calls below work here: Linux on an architecture whose {@code mmap} flag
     * values this seam knows, since they differ between architectures and only Linux's {@code MADV_DONTNEED}
     * discards private anonymous pages (later reads see zeros). When false, those calls must not be made.
     */
    boolean supportsVirtualMemory();

    /**
     * Reserves address space with no memory behind it:
     * {@code mmap(NULL, bytes, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0)}. The range is
     * page-aligned (not more), inaccessible, and charged to neither RAM nor the commit limit.
     *
     * @return the address, or 0 when {@code mmap} returned {@code MAP_FAILED} (no address space that large)
     */
    long mmapReserve(long bytes);

    /**
     * {@code mprotect(address, bytes, prot)} with {@link #PROT_NONE} or {@link #PROT_READ_WRITE}.
     *
     * @return 0 on success, otherwise the {@code errno} ({@code ENOMEM} when the kernel cannot split the mapping
     *         any further or, with strict overcommit, cannot commit the range)
     */
    int mprotect(long address, long bytes, int prot);

    /**
     * {@code madvise(address, bytes, MADV_DONTNEED)}: drops the range's pages, giving their memory back to the
     * system; private anonymous pages read as zero afterwards. Fails with {@code EINVAL} on locked pages.
     *
     * @return 0 on success, otherwise the {@code errno}
     */
    int madviseDontNeed(long address, long bytes);

    /**
     * {@code munmap(address, bytes)}: removes the mapping (and any locks on it) and frees its pages.
     *
     * @return 0 on success, otherwise the {@code errno}
     */
    int munmap(long address, long bytes);

    /**
     * {@code RLIMIT_MEMLOCK}: how many bytes the process may lock.
     *
     * @param softBytes the limit in force, or {@link #UNLIMITED}
     * @param hardBytes the ceiling up to which an unprivileged process may raise the soft limit, or
     *                  {@link #UNLIMITED}
     */
    record MemlockLimit(long softBytes, long hardBytes) {

        /** {@code RLIM_INFINITY} as a signed long (it is all ones, {@code ~0UL}). */
        static final long UNLIMITED = -1;

        /** Whether the soft limit allows locking {@code bytes} in total. */
        boolean allows(long bytes) {
            return softBytes == UNLIMITED || bytes <= softBytes;
        }

        /** E.g. {@code soft 8388608 bytes (8.00 MiB), hard unlimited}. */
        String describe() {
            return "soft " + describe(softBytes) + ", hard " + describe(hardBytes);
        }

        private static String describe(long bytes) {
            return bytes == UNLIMITED ? "unlimited" : bytes + " bytes (" + ByteSize.format(bytes) + ")";
        }
    }
}
