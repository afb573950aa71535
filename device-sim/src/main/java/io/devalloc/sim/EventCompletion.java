package io.devalloc.sim;

/** When the simulated device's events complete. */
public enum EventCompletion {
    /** As soon as they are recorded: the device is infinitely fast. The default. */
    IMMEDIATE,
    /**
     * Only when a test says so ({@link SimulatedDevice#completeStream}, {@link SimulatedDevice#completeAll}) or when
     * someone waits for them ({@link SimulatedDevice#synchronizeEvent}, {@link SimulatedDevice#synchronize}), which
     * stands for the device finishing the work.
     */
    MANUAL
}
