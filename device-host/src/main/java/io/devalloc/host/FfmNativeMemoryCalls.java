package io.devalloc.host;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemoryLayout;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.StructLayout;
import java.lang.foreign.SymbolLookup;
import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;
import java.util.Optional;

/**
 * {@link NativeMemoryCalls} as downcalls into the C library through {@code java.lang.foreign}: no JNI library to
 * build or ship. Assumes an LP64 Unix ({@code size_t} and {@code rlim_t} are 64-bit); {@link #link()} refuses
 * anything else, which the providers report as "unavailable".
 *
 * <p>Thread-safe: the method handles are immutable and each call uses its own confined arena for out-parameters.
 */
// Linking downcalls is a restricted operation by design: this class is the one place that does it.
@SuppressWarnings("restricted")
final class FfmNativeMemoryCalls implements NativeMemoryCalls {

    /** {@code RLIMIT_MEMLOCK} on Linux (x86, arm, riscv, ppc); other systems number their limits differently. */
    private static final int LINUX_RLIMIT_MEMLOCK = 8;
    /** Bit of {@code CAP_IPC_LOCK} in the capability sets of {@code /proc/self/status}. */
    private static final int CAP_IPC_LOCK = 14;

    /** {@code MAP_PRIVATE} and {@code MAP_ANONYMOUS}: the same on every Linux architecture handled here. */
    private static final int MAP_PRIVATE = 0x02;
    private static final int MAP_ANONYMOUS = 0x20;
    /** {@code MAP_NORESERVE} in asm-generic (x86, arm64, riscv, s390, loongarch); powerpc uses 0x40. */
    private static final int MAP_NORESERVE_GENERIC = 0x4000;
    private static final int MAP_NORESERVE_POWERPC = 0x40;
    /** {@code MADV_DONTNEED} on Linux (except alpha, which is not handled). */
    private static final int MADV_DONTNEED = 4;
    /** {@code MAP_FAILED}, {@code (void *) -1}. */
    private static final long MAP_FAILED = -1L;

    private static final StructLayout CALL_STATE = Linker.Option.captureStateLayout();
    private static final VarHandle ERRNO = CALL_STATE.varHandle(MemoryLayout.PathElement.groupElement("errno"));

    private final MethodHandle posixMemalign;
    private final MethodHandle free;
    private final MethodHandle mlock;
    private final MethodHandle munlock;
    private final MethodHandle getrlimit;
    private final MethodHandle geteuid;
    private final MethodHandle mmap;
    private final MethodHandle mprotect;
    private final MethodHandle madvise;
    private final MethodHandle munmap;
    private final long pageSize;
    private final boolean linux;
    /** The {@code MAP_NORESERVE} of this architecture, or 0 when virtual memory is not supported here. */
    private final int mapNoreserve;

    private FfmNativeMemoryCalls(Linker linker, SymbolLookup libc) {
        posixMemalign = linker.downcallHandle(find(libc, "posix_memalign"),
                FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_LONG, JAVA_LONG));
        free = linker.downcallHandle(find(libc, "free"), FunctionDescriptor.ofVoid(ADDRESS));
        mlock = linkRangeCall(linker, libc, "mlock", false);
        munlock = linkRangeCall(linker, libc, "munlock", false);
        getrlimit = linker.downcallHandle(find(libc, "getrlimit"), FunctionDescriptor.of(JAVA_INT, JAVA_INT, ADDRESS));
        geteuid = linker.downcallHandle(find(libc, "geteuid"), FunctionDescriptor.of(JAVA_INT));
        // void *mmap(void *addr, size_t length, int prot, int flags, int fd, off_t offset)
        mmap = linker.downcallHandle(find(libc, "mmap"),
                FunctionDescriptor.of(ADDRESS, ADDRESS, JAVA_LONG, JAVA_INT, JAVA_INT, JAVA_INT, JAVA_LONG));
        mprotect = linkRangeCall(linker, libc, "mprotect", true);
        madvise = linkRangeCall(linker, libc, "madvise", true);
        munmap = linkRangeCall(linker, libc, "munmap", false);
        MethodHandle getpagesize = linker.downcallHandle(find(libc, "getpagesize"), FunctionDescriptor.of(JAVA_INT));
        try {
            pageSize = (int) getpagesize.invokeExact();
        } catch (Throwable t) {
            throw rethrow(t);
        }
        linux = System.getProperty("os.name", "").toLowerCase(Locale.ROOT).startsWith("linux");
        mapNoreserve = linux ? linuxMapNoreserve(System.getProperty("os.arch", "")) : 0;
    }

    /**
     * {@code MAP_NORESERVE} for a Linux architecture as {@code os.arch} names it, or 0 for one whose mmap flags
     * differ in ways not handled here (mips, sparc, alpha, parisc, 32-bit platforms).
     */
    static int linuxMapNoreserve(String arch) {
        return switch (arch.toLowerCase(Locale.ROOT)) {
            case "amd64", "x86_64", "aarch64", "arm64", "riscv64", "s390x", "loongarch64" -> MAP_NORESERVE_GENERIC;
            case "ppc64", "ppc64le" -> MAP_NORESERVE_POWERPC;
            default -> 0;
        };
    }

    /**
     * Links every downcall now, so that a missing symbol or a platform FFM cannot serve shows up here (in a
     * provider's probe) rather than in the middle of an allocation.
     *
     * @throws UnsupportedOperationException on a platform that is not 64-bit
     * @throws LinkageError or another exception when libc or the native linker cannot be used (for example
     *                      {@link IllegalCallerException} when native access is denied to this module)
     */
    static FfmNativeMemoryCalls link() {
        Linker linker = Linker.nativeLinker();
        // size_t and rlim_t are passed as JAVA_LONG below; that is only right on LP64.
        if (ADDRESS.byteSize() != 8 || linker.canonicalLayouts().get("size_t").byteSize() != 8) {
            throw new UnsupportedOperationException("host memory needs a 64-bit platform (size_t is "
                    + linker.canonicalLayouts().get("size_t").byteSize() * 8 + " bits here)");
        }
        return new FfmNativeMemoryCalls(linker, linker.defaultLookup());
    }

    private static MemorySegment find(SymbolLookup libc, String name) {
        return libc.find(name).orElseThrow(() -> new UnsatisfiedLinkError(
                "the C library has no '" + name + "' (looked up through Linker.nativeLinker().defaultLookup())"));
    }

    @Override
    public long alloc(long bytes, long alignment) {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment out = arena.allocate(ADDRESS);
            int rc = (int) posixMemalign.invokeExact(out, alignment, bytes);
            // posix_memalign returns ENOMEM (or EINVAL for a bad alignment) instead of setting errno; either way
            // there is no memory to hand out.
            return rc == 0 ? out.get(ADDRESS, 0).address() : 0L;
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    @Override
    public void free(long address) {
        try {
            free.invokeExact(MemorySegment.ofAddress(address));
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    @Override
    public int mlock(long address, long bytes) {
        return rangeCall(mlock, address, bytes, 0);
    }

    @Override
    public int munlock(long address, long bytes) {
        return rangeCall(munlock, address, bytes, 0);
    }

    /**
     * Links {@code int name(void *addr, size_t len)}, or with {@code takesFlag} {@code int name(void *addr,
     * size_t len, int flag)}, capturing errno, as a handle that takes a flag either way (the first kind ignores
     * it), so that {@link #rangeCall} makes every such call.
     */
    private static MethodHandle linkRangeCall(Linker linker, SymbolLookup libc, String name, boolean takesFlag) {
        Linker.Option errno = Linker.Option.captureCallState("errno");
        if (takesFlag) {
            return linker.downcallHandle(find(libc, name),
                    FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_LONG, JAVA_INT), errno);
        }
        MethodHandle call = linker.downcallHandle(find(libc, name), FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_LONG),
                errno);
        return MethodHandles.dropArguments(call, 3, int.class);
    }

    /** Calls a handle of {@link #linkRangeCall} on a range: 0, or the errno of a failure. */
    private static int rangeCall(MethodHandle call, long address, long bytes, int flag) {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment state = arena.allocate(CALL_STATE);
            int rc = (int) call.invokeExact(state, MemorySegment.ofAddress(address), bytes, flag);
            return rc == 0 ? 0 : (int) ERRNO.get(state, 0L);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    @Override
    public Optional<MemlockLimit> memlockLimit() {
        if (!linux) {
            return Optional.empty();
        }
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment rlimit = arena.allocate(JAVA_LONG.byteSize() * 2, JAVA_LONG.byteAlignment());
            int rc = (int) getrlimit.invokeExact(LINUX_RLIMIT_MEMLOCK, rlimit);
            if (rc != 0) {
                return Optional.empty();
            }
            // struct rlimit { rlim_t rlim_cur; rlim_t rlim_max; }; RLIM_INFINITY is ~0UL, i.e. -1 here.
            return Optional.of(new MemlockLimit(rlimit.get(JAVA_LONG, 0), rlimit.get(JAVA_LONG, 8)));
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    @Override
    public boolean mayExceedMemlockLimit() {
        if (memlockLimit().map(l -> l.softBytes() == MemlockLimit.UNLIMITED).orElse(false)) {
            return true;
        }
        if (linux) {
            Optional<Boolean> capability = hasIpcLockCapability();
            if (capability.isPresent()) {
                return capability.get();
            }
        }
        try {
            return (int) geteuid.invokeExact() == 0;
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    /** Reads {@code CapEff} from {@code /proc/self/status}; empty when it cannot be read. */
    private static Optional<Boolean> hasIpcLockCapability() {
        try {
            List<String> lines = Files.readAllLines(Path.of("/proc/self/status"));
            for (String line : lines) {
                if (line.startsWith("CapEff:")) {
                    long mask = Long.parseUnsignedLong(line.substring("CapEff:".length()).strip(), 16);
                    return Optional.of((mask & (1L << CAP_IPC_LOCK)) != 0);
                }
            }
            return Optional.empty();
        } catch (IOException | RuntimeException e) {
            return Optional.empty();
        }
    }

    @Override
    public long pageSize() {
        return pageSize;
    }

    @Override
    public boolean supportsVirtualMemory() {
        return mapNoreserve != 0;
    }

    @Override
    public long mmapReserve(long bytes) {
        requireVirtualMemory();
        try {
            MemorySegment address = (MemorySegment) mmap.invokeExact(MemorySegment.NULL, bytes, PROT_NONE,
                    MAP_PRIVATE | MAP_ANONYMOUS | mapNoreserve, -1, 0L);
            return address.address() == MAP_FAILED ? 0L : address.address();
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    @Override
    public int mprotect(long address, long bytes, int prot) {
        requireVirtualMemory();
        return rangeCall(mprotect, address, bytes, prot);
    }

    @Override
    public int madviseDontNeed(long address, long bytes) {
        requireVirtualMemory();
        return rangeCall(madvise, address, bytes, MADV_DONTNEED);
    }

    @Override
    public int munmap(long address, long bytes) {
        requireVirtualMemory();
        return rangeCall(munmap, address, bytes, 0);
    }

    private void requireVirtualMemory() {
        if (mapNoreserve == 0) {
            throw new UnsupportedOperationException("virtual memory calls are only wired for Linux on x86-64,"
                    + " arm64, riscv64, s390x, loongarch64 and ppc64; this is " + System.getProperty("os.name")
                    + " on " + System.getProperty("os.arch"));
        }
    }

    private static RuntimeException rethrow(Throwable t) {
        if (t instanceof RuntimeException r) {
            throw r;
        }
        if (t instanceof Error e) {
            throw e;
        }
        // Downcall handles declare Throwable, but the C functions bound here cannot throw checked exceptions.
        throw new IllegalStateException("native call failed", t);
    }
}
