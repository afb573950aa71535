package io.devalloc.sim;

/**
 * The kinds of device call whose failures {@link SimulatedDevice} can inject ({@link SimulatedDevice#failCall},
 * {@link SimulatedDevice#failNextCalls}, {@link SimulatedDevice#failNextCallWith}). Each kind counts its own calls
 * ({@link SimulatedDevice#calls}) and a fault armed for one kind fires only on a call of that kind.
 */
public enum DeviceCall {
    /** {@code malloc}: a refusal returns {@code NULL}. */
    MALLOC(true),
    /** {@code free}. */
    FREE(false),
    /** Virtual memory's {@code reserve}: a refusal returns 0 (no address space left). */
    RESERVE(true),
    /** Virtual memory's {@code map}: a refusal returns false (not enough physical memory). */
    MAP(true),
    /** Virtual memory's {@code unmap}: whatever fails, the range is unmapped afterwards, as the port says. */
    UNMAP(false),
    /** Virtual memory's {@code release}. */
    RELEASE(false),
    /** {@code createEvent}. */
    CREATE_EVENT(false),
    /** {@code recordEvent}. */
    RECORD_EVENT(false),
    /** {@code synchronizeEvent} and {@code synchronize} (waits). */
    SYNCHRONIZE(false);

    private final boolean reportsRunningOut;

    DeviceCall(boolean reportsRunningOut) {
        this.reportsRunningOut = reportsRunningOut;
    }

    /**
     * Whether the call reports running out of memory by its result (0 or false), as {@code cudaMalloc} does. A
     * refusal of the other kinds is a {@link io.devalloc.api.error.DeviceException} saying "out of memory", as
     * CUDA reports {@code cudaErrorMemoryAllocation} from, say, {@code cudaEventCreate}.
     */
    public boolean reportsRunningOut() {
        return reportsRunningOut;
    }
}
