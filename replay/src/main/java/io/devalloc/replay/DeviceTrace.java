package io.devalloc.replay;

import java.util.Objects;

/**
 * One device's history in a trace file, read into memory ({@link TraceFile}): a PyTorch snapshot pickle holds one per
 * CUDA device; every other format holds one, of no named device.
 *
 * @param cudaDevice the CUDA device index ({@code device_traces[i]}), or {@link #NO_DEVICE} for a format that
 *                   names none (a PyTorch CSV holds one device's rows without saying which)
 * @param trace      its events, read once
 */
public record DeviceTrace(int cudaDevice, CompactTrace trace) {

    /** The {@code cudaDevice} of a trace whose format names no device. */
    public static final int NO_DEVICE = -1;

    public DeviceTrace {
        Objects.requireNonNull(trace, "trace");
        if (cudaDevice < NO_DEVICE) {
            throw new IllegalArgumentException("cudaDevice must be >= 0 or NO_DEVICE, got " + cudaDevice);
        }
    }

    /** {@code cuda:1}, or the empty string for {@link #NO_DEVICE}. */
    public String label() {
        return cudaDevice == NO_DEVICE ? "" : "cuda:" + cudaDevice;
    }

    /** The device index for JSON: the index, or null for {@link #NO_DEVICE}. */
    public Integer jsonDevice() {
        return cudaDevice == NO_DEVICE ? null : cudaDevice;
    }

    /** Whether it recorded anything after its start state ({@link CompactTrace#hasHistory()}). */
    public boolean hasHistory() {
        return trace.hasHistory();
    }
}
