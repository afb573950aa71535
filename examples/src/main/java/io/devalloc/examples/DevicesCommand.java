package io.devalloc.examples;

import io.devalloc.api.ProviderStatus;
import io.devalloc.api.error.DeviceUnavailableException;
import io.devalloc.api.spi.AllocatorProvider;
import io.devalloc.api.spi.AllocatorRegistry;
import io.devalloc.api.spi.DeviceRegistry;
import io.devalloc.api.spi.DeviceSpec;
import io.devalloc.replay.cli.TextTable;
import io.devalloc.replay.cli.TextWrap;
import java.io.PrintWriter;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Spec;

/**
 * {@code devalloc devices}: every device provider and allocator that {@link java.util.ServiceLoader} finds,
 * available or not, and the device {@code auto} would open. It is the first thing to run on a new machine:
 * it shows why a GPU provider is unavailable rather than silently falling back.
 */
@Command(name = "devices",
        mixinStandardHelpOptions = true,
        header = "List device providers (available or not) and allocators, and what 'auto' picks.",
        description = {"List the device providers and allocators found on the class path, whether each device "
                + "provider is available here and why, and which one 'auto' picks. With --verbose, also the class "
                + "that provides each device."})
final class DevicesCommand implements Callable<Integer> {

    @Spec
    CommandSpec spec;

    @Override
    public Integer call() {
        PrintWriter out = spec.commandLine().getOut();
        DeviceRegistry devices = DeviceRegistry.load();
        List<ProviderStatus> statuses = devices.describe();

        out.println("Device providers (highest priority first; 'auto' takes the first available):");
        out.println();
        if (statuses.isEmpty()) {
            out.println("  (none on the class path: add device-sim, device-host or device-cuda)");
        } else {
            TextTable table = TextTable.withHeaders("PROVIDER", "PRIORITY", "DEVICES", "STATUS", "SPEC ARGUMENT")
                    .align(1, TextTable.Align.RIGHT)
                    .align(2, TextTable.Align.RIGHT)
                    .wrap(4);
            for (ProviderStatus s : statuses) {
                table.row(s.name(), s.priority(), s.deviceCount(),
                        s.availability().available() ? "available" : "unavailable", s.argumentHelp());
            }
            table.print(out, "  ");
            out.println();
            // The reasons are sentences of any length, so they go below the table instead of in a column. The class
            // behind each name is for plug-in authors: --verbose.
            boolean verbose = Launcher.isVerbose(spec.root().commandLine().getParseResult());
            TextTable details = TextTable.withoutHeaders(2).wrap(1);
            for (ProviderStatus s : statuses) {
                details.row(s.name(), s.description());
                details.row("", (s.availability().available() ? "available: " : "unavailable: ")
                        + s.availability().reason());
                if (verbose) {
                    details.row("", "class " + s.className());
                }
            }
            details.print(out, "  ");
        }
        out.println();
        TextWrap.print(out, "auto: ", "      ", autoChoice(devices));
        out.println();

        AllocatorRegistry allocators = AllocatorRegistry.load();
        out.println("Allocators:");
        out.println();
        if (allocators.providers().isEmpty()) {
            out.println("  (none on the class path)");
        } else {
            TextTable table = TextTable.withHeaders("ALLOCATOR", "CONFIG KEYS", "DESCRIPTION").wrap(1).wrap(2);
            for (AllocatorProvider p : allocators.providers()) {
                table.row(p.name(), p.configSchema().describeKeys(), p.description());
            }
            table.print(out, "  ");
        }
        out.println();
        out.println("Try: devalloc demo --device " + exampleSpec(statuses) + " --allocator "
                + (allocators.names().isEmpty() ? "direct" : allocators.names().getFirst()));
        return Launcher.EXIT_OK;
    }

    /** Asks the registry itself, so the answer is the one {@code --device auto} gets. */
    private static String autoChoice(DeviceRegistry devices) {
        try {
            DeviceSpec chosen = devices.resolve(DeviceSpec.AUTO);
            return "opens '" + chosen.provider() + "' (the available provider with the highest priority)";
        } catch (DeviceUnavailableException e) {
            return "nothing to open: " + e.getMessage();
        }
    }

    private static String exampleSpec(List<ProviderStatus> statuses) {
        for (ProviderStatus s : statuses) {
            if (s.name().equals("sim") && s.availability().available()) {
                return "sim:80GiB";
            }
        }
        return DeviceSpec.AUTO;
    }
}
