package io.devalloc.api.spi;

import io.devalloc.api.device.DeviceMemory;

/**
 * A plug-in that opens {@link DeviceMemory} of one kind (simulated, host, pinned host, CUDA). Found with
 * {@link java.util.ServiceLoader}: list the implementation in
 * {@code META-INF/services/io.devalloc.api.spi.DeviceMemoryProvider}. It must have a public no-argument
 * constructor that does no work: probing happens in {@link #probe()}.
 *
 * <p>Providers are chosen by name ({@code cuda:0}, {@code sim:80GiB}) or, for {@code auto}, as the available
 * provider with the highest {@link #priority()}. Implementations are thread-safe.
 */
public interface DeviceMemoryProvider {

    /** The name in device specs: lower case letters, digits and dashes, e.g. {@code pinned-host}. */
    String name();

    /** One line saying what it opens, for {@code devalloc devices}. */
    String description();

    /**
     * Preference when choosing the best available device, 0 to 10 (higher wins): a GPU 10, pinned host 4, plain
     * host 5, the simulator 1.
     */
    int priority();

    /**
     * Whether devices can be opened here, and why not. Must never throw (not even {@link LinkageError}), must be
     * cheap after the first call (cache the answer), and must leave the JVM usable whatever it finds.
     */
    Availability probe();

    /** How many devices can be opened; 0 when unavailable. */
    int deviceCount();

    /** What the argument after the colon in a device spec means, e.g. {@code "device index, 0 to 3"}. */
    String argumentHelp();

    /**
     * Opens a device.
     *
     * @param argument the text after the colon in the device spec ({@code "0"} in {@code cuda:0},
     *                 {@code "80GiB"} in {@code sim:80GiB}), or {@code ""} for the provider's default
     * @throws io.devalloc.api.error.DeviceUnavailableException if the provider is unavailable or there is no such
     *                                                          device
     * @throws io.devalloc.api.error.InvalidConfigurationException if the argument is malformed
     */
    DeviceMemory open(String argument);
}
