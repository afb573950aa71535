package io.devalloc.cuda;

import io.devalloc.api.error.DeviceUnavailableException;
import io.devalloc.api.internal.CachedProbe;
import io.devalloc.api.internal.Failures;
import io.devalloc.api.internal.NativeAccess;
import io.devalloc.api.spi.Availability;
import io.devalloc.api.units.ByteSize;
import java.lang.foreign.Arena;
import java.lang.foreign.SymbolLookup;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.function.Function;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Whether CUDA can be used in this JVM, asked once and remembered. Shared by the {@code cuda} and
 * {@code cuda-host} providers.
 *
 * <p><b>Order, and why.</b>
 * <ol>
 *   <li>Can {@code libcuda.so.1}, the NVIDIA driver's user-space library, be loaded? This is asked through
 *       {@code java.lang.foreign} ({@link SymbolLookup#libraryLookup(String, Arena)}, the same dlopen search JCuda's
 *       loader uses), without loading a JCuda class. If not, the answer is "no NVIDIA driver" and JCuda is never
 *       touched: JCuda's driver class cannot initialise without that library and would then stay broken for the
 *       JVM's life.</li>
 *   <li>JCuda's runtime API ({@code cudaGetDeviceCount}). JCuda links the CUDA runtime statically, so its native
 *       library loads on any Linux x86-64 machine; loading can still fail (an unwritable {@code java.io.tmpdir},
 *       another platform), which is caught as the {@link LinkageError} it is. Error 35
 *       ({@code cudaErrorInsufficientDriver}) means no usable driver, 100 ({@code cudaErrorNoDevice}) a driver but
 *       no GPU.</li>
 *   <li>The device count, and each device's name and memory for the reason.</li>
 * </ol>
 * It never throws and never enables JCuda's exceptions. A {@link VirtualMachineError} during the probe is not
 * cached, since it says nothing about the platform.
 *
 * <p>Thread-safe: the probe runs at most once, as {@link CachedProbe} runs it.
 */
final class CudaAvailability extends CachedProbe<CudaAvailability.Probe> {

    private static final Logger LOG = LoggerFactory.getLogger(CudaAvailability.class);

    /** The NVIDIA driver's CUDA library, by the soname that JCuda and the CUDA runtime load. */
    static final String DRIVER_LIBRARY = "libcuda.so.1";

    /**
     * Whether a library can be loaded.
     */
    @FunctionalInterface
    interface LibraryCheck {
        /**
         * Whether {@code library} can be loaded.
         *
         * @return null when {@code library} can be loaded, otherwise why not (the loader's message)
         * @throws RuntimeException when the question cannot be asked (native access disabled, say)
         */
        String problem(String library);
    }

    /**
     * A cached answer.
     *
     * @param availability  the answer
     * @param api           the CUDA calls to open devices with, or null when unavailable
     * @param deviceCount   how many devices there are; 0 when unavailable
     * @param driverPresent whether {@code libcuda.so.1} was found, so that the driver API may be used
     */
    record Probe(Availability availability, CudaApi api, int deviceCount, boolean driverPresent) {
    }

    private static final class Shared {
        static final CudaAvailability INSTANCE = new CudaAvailability(CudaAvailability::libraryProblem,
                driverPresent -> new JCudaApi(driverPresent));
    }

    private final LibraryCheck libraryCheck;
    private final Function<Boolean, ? extends CudaApi> apiFactory;

    /**
     * @param libraryCheck whether {@code libcuda.so.1} loads
     * @param apiFactory   the CUDA calls, given whether the driver library was found; called only after it was
     */
    CudaAvailability(LibraryCheck libraryCheck, Function<Boolean, ? extends CudaApi> apiFactory) {
        this.libraryCheck = Objects.requireNonNull(libraryCheck, "libraryCheck");
        this.apiFactory = Objects.requireNonNull(apiFactory, "apiFactory");
    }

    /** The JVM-wide probe over JCuda. Creating it does no work. */
    static CudaAvailability shared() {
        return Shared.INSTANCE;
    }

    @Override
    protected Probe outOfResources() {
        return unavailable("the CUDA probe ran out of resources; try again");
    }

    /**
     * The probe's CUDA calls and device count.
     *
     * @throws DeviceUnavailableException naming the provider and the probe's reason when CUDA is unavailable
     */
    Probe requireAvailable(String provider) {
        Probe p = probe();
        requireAvailable(provider, p.availability());
        return p;
    }

    @Override
    protected Probe run() {
        Probe computed = probeCuda();
        if (computed != null) {
            LOG.debug("CUDA probe: {}", computed.availability().reason());
        }
        return computed;
    }

    /** Runs the probe; null after a {@link VirtualMachineError}, which must not be cached. */
    private Probe probeCuda() {
        try {
            String problem;
            try {
                problem = libraryCheck.problem(DRIVER_LIBRARY);
            } catch (VirtualMachineError e) {
                return null;
            } catch (Throwable t) {
                String hint = t instanceof IllegalCallerException
                        ? "; allow native access with " + NativeAccess.option(CudaAvailability.class, "jcuda") : "";
                return unavailable("cannot check for the NVIDIA driver (" + DRIVER_LIBRARY + "): "
                        + Failures.describe(t) + hint);
            }
            if (problem != null) {
                return unavailable("no NVIDIA driver: " + DRIVER_LIBRARY + " not found (" + problem + "); install"
                        + " an NVIDIA driver for CUDA 12 or later to use the GPU");
            }
            CudaApi api;
            int rc;
            int[] count = new int[1];
            try {
                api = apiFactory.apply(true);
                rc = api.getDeviceCount(count);
            } catch (VirtualMachineError e) {
                return null;
            } catch (LinkageError e) {
                LOG.debug("loading JCuda's runtime library failed", e);
                return unavailable("JCuda's native CUDA runtime library could not be loaded (it is extracted to"
                        + " java.io.tmpdir, which must be writable): " + firstLine(e));
            } catch (Throwable t) {
                LOG.debug("cudaGetDeviceCount failed", t);
                return unavailable("cudaGetDeviceCount failed: " + Failures.describe(t));
            }
            if (rc == CudaApi.ERROR_INSUFFICIENT_DRIVER) {
                return unavailable("no NVIDIA driver (cudaErrorInsufficientDriver): " + DRIVER_LIBRARY + " loads, but"
                        + " the CUDA runtime cannot use it; the driver must be installed, running and support CUDA"
                        + " 12, which JCuda 12.6 is built for");
            }
            if (rc == CudaApi.ERROR_NO_DEVICE) {
                return unavailable("no CUDA device (cudaErrorNoDevice): the NVIDIA driver is installed but sees no"
                        + " GPU");
            }
            if (rc != CudaApi.SUCCESS) {
                return unavailable("cudaGetDeviceCount failed: " + CudaDeviceMemory.describe(api, rc));
            }
            if (count[0] <= 0) {
                return unavailable("no CUDA device: cudaGetDeviceCount found " + count[0]);
            }
            return new Probe(Availability.available(describeDevices(api, count[0])), api, count[0], true);
        } catch (VirtualMachineError e) {
            return null;
        } catch (Throwable t) {
            return unavailable("the CUDA probe failed: " + Failures.describe(t));
        }
    }

    private static Probe unavailable(String reason) {
        return new Probe(Availability.unavailable(reason), null, 0, false);
    }

    /** E.g. {@code 2 CUDA devices: 0 NVIDIA A100 (80.00 GiB), 1 ...; driver for CUDA 12.4, runtime 12.6}. */
    private static String describeDevices(CudaApi api, int count) {
        List<String> devices = new ArrayList<>();
        for (int i = 0; i < count; i++) {
            String[] name = new String[1];
            long[] total = new long[1];
            try {
                if (api.getDeviceProperties(i, name, total) == CudaApi.SUCCESS && name[0] != null) {
                    devices.add(i + " " + name[0].strip() + " (" + ByteSize.format(total[0]) + ")");
                    continue;
                }
            } catch (RuntimeException | LinkageError e) {
                // Fall through: the device still counts, only its description is missing.
            }
            devices.add(i + " (properties unavailable)");
        }
        StringBuilder sb = new StringBuilder();
        sb.append(count).append(count == 1 ? " CUDA device: " : " CUDA devices: ").append(String.join(", ", devices));
        int[] version = new int[1];
        try {
            if (api.driverGetVersion(version) == CudaApi.SUCCESS && version[0] > 0) {
                sb.append("; driver for CUDA ").append(version(version[0]));
            }
            if (api.runtimeGetVersion(version) == CudaApi.SUCCESS && version[0] > 0) {
                sb.append(", JCuda runtime ").append(version(version[0]));
            }
        } catch (RuntimeException | LinkageError e) {
            // Versions are decoration.
        }
        return sb.toString();
    }

    /** CUDA's version encoding: 12040 is 12.4. */
    static String version(int encoded) {
        return encoded / 1000 + "." + (encoded % 1000) / 10;
    }

    private static String firstLine(Throwable t) {
        String m = String.valueOf(t.getMessage());
        int nl = m.indexOf('\n');
        return t.getClass().getName() + ": " + (nl < 0 ? m : m.substring(0, nl));
    }

    /**
     * Whether a library loads, by the dynamic linker's own search: null when it does, the loader's message when it
     * does not. Restricted (a native-access warning unless {@code --enable-native-access=ALL-UNNAMED}), like
     * loading JCuda itself.
     */
    @SuppressWarnings("restricted")
    static String libraryProblem(String library) {
        try (Arena arena = Arena.ofConfined()) {
            SymbolLookup.libraryLookup(library, arena);
            return null;
        } catch (IllegalArgumentException e) {
            return e.getMessage();
        }
    }
}
