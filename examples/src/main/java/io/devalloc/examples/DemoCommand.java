package io.devalloc.examples;

import io.devalloc.api.DevallocSettings;
import io.devalloc.api.DeviceAllocator;
import io.devalloc.api.DeviceAllocators;
import io.devalloc.api.spi.AllocatorRegistry;
import io.devalloc.api.spi.DeviceSpec;
import io.devalloc.api.spi.EnvironmentConfig;
import io.devalloc.api.stats.AllocatorStats;
import io.devalloc.api.units.ByteSize;
import io.devalloc.replay.TrainingLoopWorkload;
import io.devalloc.replay.cli.SettingOption;
import io.devalloc.replay.cli.TextTable;
import java.io.PrintWriter;
import java.util.Arrays;
import java.util.Locale;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * {@code devalloc demo}: replays a {@link TrainingLoopWorkload} on one device and allocator and prints what the
 * allocator reports. It shows a newcomer the whole path (device spec, allocator name, configuration, stats) in
 * one command; the timing it prints is a sanity figure, not a benchmark (no warm-up, one run).
 */
@Command(name = "demo",
        mixinStandardHelpOptions = true,
        header = "Run a synthetic training loop through an allocator and print its figures.",
        description = {"Run a synthetic training loop (weights once; per step forward activations, backward "
                + "gradients, optimizer temporaries) through an allocator and print its figures. Memory is "
                + "allocated but never written.",
                "",
                "Unless told otherwise it runs the direct allocator on the device 'auto' picks, as an application "
                + "with no settings does, to show this machine's devices; 'devalloc replay' uses the caching "
                + "allocator on a simulated 80 GiB GPU instead, to measure traces the same way everywhere. --device, "
                + "--allocator and --config, or DEVALLOC_DEVICE, DEVALLOC_ALLOCATOR and DEVALLOC_CONFIG, choose "
                + "others; the options win."},
        footer = {"", "Examples:",
                "  devalloc demo",
                "  devalloc demo --device sim:80GiB --steps 50",
                "  devalloc demo --device host --config memory_limit_mb:256",
                "  devalloc demo --device sim:80GiB --allocator caching --metrics --jfr demo.jfr"})
final class DemoCommand implements Callable<Integer> {

    @Spec
    CommandSpec spec;

    @Mixin
    SettingOption device = SettingOption.device(DeviceSpec.AUTO,
            "Device spec: auto, sim:80GiB, host, pinned-host, ... ('devalloc devices' lists them).");

    @Mixin
    SettingOption allocator = SettingOption.allocator(DevallocSettings.DEFAULT_ALLOCATOR);

    @Mixin
    SettingOption config = SettingOption.config("", "memory_limit_mb:1024", "none");

    @Option(names = "--steps", paramLabel = "N", defaultValue = "" + TrainingLoopWorkload.Spec.DEFAULT_STEPS,
            description = "Training steps, 1 to " + TrainingLoopWorkload.Spec.MAX_STEPS
                    + ". Default: ${DEFAULT-VALUE}.")
    int steps;

    @Option(names = "--layers", paramLabel = "N", defaultValue = "" + TrainingLoopWorkload.Spec.DEFAULT_LAYERS,
            description = "Layers in the model, 1 to " + TrainingLoopWorkload.Spec.MAX_LAYERS
                    + ". Default: ${DEFAULT-VALUE}.")
    int layers;

    @Option(names = "--seed", paramLabel = "S", defaultValue = "" + TrainingLoopWorkload.Spec.DEFAULT_SEED,
            description = "Random seed; the same seed gives the same workload. Default: ${DEFAULT-VALUE}.")
    long seed;

    @Mixin
    ObservabilityOptions observability = new ObservabilityOptions().named("demo");

    @Override
    public Integer call() {
        PrintWriter out = spec.commandLine().getOut();
        // Generated before the device is opened: a bad --steps or --layers costs no device.
        TrainingLoopWorkload workload =
                TrainingLoopWorkload.generate(new TrainingLoopWorkload.Spec(layers, steps, seed));
        // Opened before anything is printed, so a bad device, allocator or configuration prints only the error.
        observability.start();
        boolean failed = true;
        boolean written;
        try {
            run(out, workload, config.value());
            failed = false;
        } finally {
            written = observability.finish(out, spec.commandLine().getErr(), false, failed);
        }
        return written ? Launcher.EXIT_OK : Launcher.EXIT_OUTPUT;
    }

    private void run(PrintWriter out, TrainingLoopWorkload workload, String configText) {
        String allocatorName = allocator.value();
        DeviceAllocator alloc = observability.configure(DeviceAllocators.builder().device(device.value())
                .allocator(allocatorName).config(configText)).build();
        try (alloc) {
            observability.built(alloc);
            // What the allocator took from the environment (PYTORCH_CUDA_ALLOC_CONF, TensorFlow's switches) besides.
            String configShown = EnvironmentConfig.describe(configText,
                    AllocatorRegistry.load().get(allocatorName).configFromEnvironment(configText));
            int[] widths = workload.layerWidths();
            out.printf(Locale.ROOT, "Synthetic training loop: %d layers (widths %d..%d), %d steps, seed %d%n", layers,
                    Arrays.stream(widths).min().orElseThrow(), Arrays.stream(widths).max().orElseThrow(), steps, seed);
            out.printf(Locale.ROOT, "  %d allocations planned, %s to %s each, at most %s live at once%n",
                    workload.allocationCount(), ByteSize.format(workload.smallestAllocation()),
                    ByteSize.format(workload.largestAllocation()), ByteSize.format(workload.peakLiveBytes()));
            out.println();

            TrainingLoopWorkload.ReplayResult result = workload.replay(alloc);
            AllocatorStats s = alloc.stats();
            TextTable table = TextTable.withoutHeaders(2).wrap(1);
            table.row("device", alloc.device().descriptor());
            table.row("allocator", alloc.name());
            table.row("config", configShown.isBlank() ? "(defaults)" : configShown);
            table.row("steps", steps);
            table.row("allocations", s.allocationCount());
            table.row("frees", s.freeCount());
            table.row("live allocations at end", s.activeAllocations());
            table.row("peak allocated", ByteSize.format(s.peakAllocatedBytes()));
            table.row("peak reserved", ByteSize.format(s.peakReservedBytes()));
            table.row("peak requested", ByteSize.format(s.peakRequestedBytes()));
            table.row("device mallocs / frees", s.deviceMallocs() + " / " + s.deviceFrees());
            table.row("largest allocation", ByteSize.format(s.largestAllocation()));
            table.row("out-of-memory errors", s.outOfMemoryErrors());
            table.row("mean ns per malloc+free", String.format(Locale.ROOT, "%.0f", result.meanNanosPerMallocFree()));
            table.print(out, "  ");
            out.println();
            out.println("  (timing: System.nanoTime over one run of the loop, no warm-up: demo output,"
                    + " not a benchmark)");
            if (result.outOfMemoryErrors() > 0) {
                out.println("  " + result.outOfMemoryErrors() + " allocations ran out of memory and were skipped; "
                        + "a larger device or limit avoids that.");
            }

            // Caching allocators keep freed memory reserved; releasing the cache hands it back to the device.
            long reservedBefore = alloc.stats().reservedBytes();
            alloc.releaseCachedMemory();
            long reservedAfter = alloc.stats().reservedBytes();
            out.println();
            out.println("  reserved after the loop:               " + ByteSize.format(reservedBefore));
            out.println("  reserved after releaseCachedMemory():  " + ByteSize.format(reservedAfter));
            observability.ended();
        }
        out.println("  allocator closed: " + alloc.isClosed() + " (close() returns all memory and closes the device)");
    }
}
