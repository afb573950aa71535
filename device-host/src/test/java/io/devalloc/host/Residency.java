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
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;
import java.lang.invoke.VarHandle;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * What the kernel says about this process's memory, read independently of the code under test: {@code mincore}
 * (through its own FFM downcall) for whether pages of a range are in RAM, and {@code /proc/self/statm} for the
 * resident set size.
 */
@SuppressWarnings("restricted") // a downcall of its own, so that the tests do not trust the seam they check
final class Residency {

    private static final StructLayout CALL_STATE = Linker.Option.captureStateLayout();
    private static final VarHandle ERRNO = CALL_STATE.varHandle(MemoryLayout.PathElement.groupElement("errno"));
    private static final MethodHandle MINCORE;
    private static final long PAGE = FfmNativeMemoryCalls.link().pageSize();

    static {
        Linker linker = Linker.nativeLinker();
        MINCORE = linker.downcallHandle(linker.defaultLookup().find("mincore").orElseThrow(),
                FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_LONG, ADDRESS), Linker.Option.captureCallState("errno"));
    }

    /** Thrown when {@code mincore} fails; {@code ENOMEM} means part of the range is not mapped at all. */
    static final class MincoreException extends RuntimeException {
        private static final long serialVersionUID = 1L;
        final int errno;

        MincoreException(int errno) {
            super("mincore failed with errno " + errno);
            this.errno = errno;
        }
    }

    private Residency() {
    }

    static long pageSize() {
        return PAGE;
    }

    /**
     * How many pages of {@code [address, address + bytes)} are resident in RAM.
     *
     * @throws MincoreException when the range is not (wholly) mapped ({@code ENOMEM})
     */
    static long residentPages(long address, long bytes) {
        long pages = (bytes + PAGE - 1) / PAGE;
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment vec = arena.allocate(pages);
            MemorySegment state = arena.allocate(CALL_STATE);
            int rc = (int) MINCORE.invokeExact(state, MemorySegment.ofAddress(address), bytes, vec);
            if (rc != 0) {
                throw new MincoreException((int) ERRNO.get(state, 0L));
            }
            long resident = 0;
            for (long i = 0; i < pages; i++) {
                resident += vec.get(ValueLayout.JAVA_BYTE, i) & 1;
            }
            return resident;
        } catch (RuntimeException | Error e) {
            throw e;
        } catch (Throwable t) {
            throw new IllegalStateException(t);
        }
    }

    /**
     * The permissions of the mapping that contains {@code address} as {@code /proc/self/maps} shows them (e.g.
     * {@code rw-p} or {@code ---p}), or null when no mapping contains it.
     */
    static String protection(long address) throws IOException {
        for (String line : Files.readAllLines(Path.of("/proc/self/maps"))) {
            String[] fields = line.split("\\s+", 3);
            int dash = fields[0].indexOf('-');
            long start = Long.parseUnsignedLong(fields[0].substring(0, dash), 16);
            long end = Long.parseUnsignedLong(fields[0].substring(dash + 1), 16);
            if (Long.compareUnsigned(address, start) >= 0 && Long.compareUnsigned(address, end) < 0) {
                return fields[1];
            }
        }
        return null;
    }

    /** The process's resident set size in bytes: the second field of {@code /proc/self/statm}, in pages. */
    static long residentSetBytes() throws IOException {
        String[] fields = Files.readString(Path.of("/proc/self/statm")).strip().split("\\s+");
        return Long.parseLong(fields[1]) * PAGE;
    }
}
