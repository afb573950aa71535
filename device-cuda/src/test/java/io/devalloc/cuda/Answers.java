package io.devalloc.cuda;

import static org.mockito.ArgumentMatchers.any;
import static org.mockito.ArgumentMatchers.anyInt;
import static org.mockito.Mockito.lenient;

import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.mockito.stubbing.Answer;

/** Mockito helpers for {@link CudaApi}'s out-parameters. */
final class Answers {

    private Answers() {
    }

    /** Writes {@code value} into the {@code long[]} argument at {@code index} and returns {@code rc}. */
    static Answer<Integer> out(int index, long value, int rc) {
        return invocation -> {
            long[] out = invocation.getArgument(index);
            out[0] = value;
            return rc;
        };
    }

    /** Writes {@code value} into the first argument ({@code long[]}) and returns {@code rc}. */
    static Answer<Integer> out(long value, int rc) {
        return out(0, value, rc);
    }

    /** Writes {@code values} into the first argument ({@code long[]}), one per call, and returns success. */
    static Answer<Integer> outs(long... values) {
        AtomicInteger next = new AtomicInteger();
        return invocation -> {
            long[] out = invocation.getArgument(0);
            out[0] = values[Math.min(next.getAndIncrement(), values.length - 1)];
            return 0;
        };
    }

    /** Writes {@code first}, {@code first + 1}, ... into the first argument ({@code long[]}), one per call. */
    static Answer<Integer> counting(long first) {
        AtomicLong next = new AtomicLong(first);
        return invocation -> {
            long[] out = invocation.getArgument(0);
            out[0] = next.getAndIncrement();
            return 0;
        };
    }

    /** Error names and strings as CUDA spells them, for messages. */
    static void errorNames(CudaApi api) {
        lenient().when(api.getErrorName(anyInt())).thenAnswer(inv -> switch ((int) inv.getArgument(0)) {
            case 1 -> "cudaErrorInvalidValue";
            case 2 -> "cudaErrorMemoryAllocation";
            case 101 -> "cudaErrorInvalidDevice";
            case 600 -> "cudaErrorNotReady";
            case 700 -> "cudaErrorIllegalAddress";
            default -> "cudaError" + inv.getArgument(0);
        });
        lenient().when(api.getErrorString(anyInt())).thenAnswer(inv -> switch ((int) inv.getArgument(0)) {
            case 1 -> "invalid argument";
            case 2 -> "out of memory";
            case 101 -> "invalid device ordinal";
            case 700 -> "an illegal memory access was encountered";
            default -> "error " + inv.getArgument(0);
        });
        lenient().when(api.driverErrorName(anyInt())).thenAnswer(inv -> switch ((int) inv.getArgument(0)) {
            case 1 -> "CUDA_ERROR_INVALID_VALUE";
            case 2 -> "CUDA_ERROR_OUT_OF_MEMORY";
            case 801 -> "CUDA_ERROR_NOT_SUPPORTED";
            default -> "CUDA_ERROR_" + inv.getArgument(0);
        });
        lenient().when(api.driverErrorString(anyInt())).thenReturn("driver says no");
    }

    /** A GPU of {@code total} bytes named {@code Test GPU}, as {@code memGetInfo} and the properties report it. */
    static void gpu(CudaApi api, long total) {
        lenient().when(api.memGetInfo(any(), any())).thenAnswer(inv -> {
            long[] free = inv.getArgument(0);
            long[] all = inv.getArgument(1);
            free[0] = total;
            all[0] = total;
            return 0;
        });
        lenient().when(api.getDeviceProperties(anyInt(), any(), any())).thenAnswer(inv -> {
            String[] name = inv.getArgument(1);
            long[] mem = inv.getArgument(2);
            name[0] = "Test GPU";
            mem[0] = total;
            return 0;
        });
    }
}
