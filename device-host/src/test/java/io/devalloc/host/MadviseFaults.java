package io.devalloc.host;

import static org.mockito.Mockito.mock;

import java.lang.reflect.InvocationTargetException;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * The real libc calls, except that {@code madvise(MADV_DONTNEED)} can be made to fail once: the one call of an
 * unmap that the kernel may refuse (its {@code mprotect} failing only leaves the range accessible). For the device
 * contract's check that a failed unmap leaves its range unmapped.
 */
final class MadviseFaults {

    private final AtomicBoolean failNext = new AtomicBoolean();
    private final NativeMemoryCalls calls;

    MadviseFaults() {
        NativeMemoryCalls libc = FfmNativeMemoryCalls.link();
        calls = mock(NativeMemoryCalls.class, invocation -> {
            if (invocation.getMethod().getName().equals("madviseDontNeed") && failNext.getAndSet(false)) {
                // What the kernel answers for locked or otherwise unadvisable pages; the pages stay as they were.
                return NativeMemoryCalls.EINVAL;
            }
            try {
                return invocation.getMethod().invoke(libc, invocation.getArguments());
            } catch (InvocationTargetException e) {
                throw e.getCause();
            }
        });
    }

    /** The calls to open a device with. */
    NativeMemoryCalls calls() {
        return calls;
    }

    /** Makes the next {@code madviseDontNeed} fail with {@code EINVAL} without calling the kernel. */
    void failNextMadvise() {
        failNext.set(true);
    }
}
