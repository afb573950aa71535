package io.devalloc.examples;

import io.devalloc.api.spi.AllocatorRegistry;
import io.devalloc.api.spi.DeviceRegistry;
import io.devalloc.api.units.ByteSize;
import io.devalloc.replay.cli.SettingOption;
import io.devalloc.replay.cli.TextWrap;
import java.io.PrintWriter;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

/**
 * {@code devalloc check DEVICE}: checks one device through devalloc, a real GPU's included (see {@link DeviceCheck}),
 * and prints a line per check and the latency of a device malloc/free against a cached pair. Exits 0 when every
 * check passed or did not apply, {@value #EXIT_CHECK_FAILED} when one failed, 2 when the device cannot be opened.
 */
@Command(name = "check",
        mixinStandardHelpOptions = true,
        header = "Check a device through devalloc: its port's contract, page-locked memory, an allocator on it.",
        description = {"Run the device port's contract in short (describe, malloc and free, refusals of bad sizes "
                + "and frees, streams and events, virtual memory where the device has it), page-locked host memory "
                + "beside it (cuda-host for cuda:N, pinned-host for host), and a short allocator contract (allocate "
                + "and free, a cached pair without a device call, a block freed on a stream) on any device spec, "
                + "cuda:0 included; then time a device malloc and free against the allocator's cached pair.",
                "",
                "Prints one line per check (PASS, FAIL or SKIP, with what it found and how long it took). Exit code: "
                + "0 when no check failed, 3 when one did, 2 when the device cannot be opened."},
        footer = {"", "Examples:",
                "  devalloc check sim",
                "  devalloc check host",
                "  devalloc check cuda:0"})
final class CheckCommand implements Callable<Integer> {

    /** The exit code when a check failed. */
    static final int EXIT_CHECK_FAILED = 3;

    @Spec
    CommandSpec spec;

    @Parameters(index = "0", paramLabel = "DEVICE",
            description = "Device spec: sim, sim:1GiB, host, cuda:0, ... ('devalloc devices' lists them).")
    String device;

    @Mixin
    SettingOption allocator = SettingOption.allocator("caching",
            "The allocator checked on the device (default: ${DEFAULT-VALUE}).");

    @Option(names = "--pairs", paramLabel = "N", defaultValue = "200",
            description = "Device malloc/free pairs timed (default: ${DEFAULT-VALUE}); the cached pairs are 100 times "
                    + "as many, after as many to warm up.")
    int pairs;

    @Override
    public Integer call() {
        if (pairs < 1 || pairs > 100_000) {
            throw new IllegalArgumentException("--pairs " + pairs + ": give 1 to 100000");
        }
        PrintWriter out = spec.commandLine().getOut();
        String allocatorName = allocator.value();
        DeviceCheck check = new DeviceCheck(device, allocatorName, DeviceRegistry.load(), AllocatorRegistry.load());
        List<DeviceCheck.Result> results = check.run();
        TextWrap.print(out, "", "  ", "Checking " + device + " through its device port, page-locked memory beside"
                + " it, and the " + allocatorName + " allocator on it:");
        out.println();
        int width = 0;
        for (DeviceCheck.Result r : results) {
            width = Math.max(width, r.name().length());
        }
        int failed = 0;
        int skipped = 0;
        for (DeviceCheck.Result r : results) {
            failed += r.outcome() == DeviceCheck.Outcome.FAIL ? 1 : 0;
            skipped += r.outcome() == DeviceCheck.Outcome.SKIP ? 1 : 0;
            out.println(String.format(Locale.ROOT, "  %-4s  %-" + width + "s  %9s", r.outcome().name(), r.name(),
                    millis(r.nanos())));
            if (r.detail() != null && !r.detail().isEmpty()) {
                TextWrap.print(out, "        ", "        ", r.detail());
            }
        }
        out.println();
        if (failed == 0) {
            String latency;
            try {
                DeviceCheck.Latency l = check.latency(ByteSize.MiB, pairs, pairs * 100);
                latency = String.format(Locale.ROOT, "a device malloc and free of %s, the median of %,d: %s; the %s"
                        + " allocator's cached pair, the median of %,d: %s, %.0f times faster.",
                        ByteSize.format(l.bytes()), l.devicePairs(), duration(l.deviceMedianNanos()), allocatorName,
                        l.cachedPairs(), duration(l.cachedMedianNanos()), l.speedup());
            } catch (RuntimeException e) {
                latency = "not measured: " + (e.getMessage() == null ? e.getClass().getSimpleName() : e.getMessage());
            }
            TextWrap.print(out, "Latency: ", "  ", latency);
            out.println();
        }
        out.println(results.size() + " checks: " + (results.size() - failed - skipped) + " passed, " + skipped
                + " did not apply, " + failed + " failed.");
        out.flush();
        return failed == 0 ? Launcher.EXIT_OK : EXIT_CHECK_FAILED;
    }

    private static String millis(long nanos) {
        return String.format(Locale.ROOT, "%.1f ms", nanos / 1e6);
    }

    private static String duration(long nanos) {
        if (nanos < 10_000) {
            return nanos + " ns";
        }
        return nanos < 10_000_000 ? String.format(Locale.ROOT, "%.1f µs", nanos / 1e3)
                : String.format(Locale.ROOT, "%.1f ms", nanos / 1e6);
    }
}
