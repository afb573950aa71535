package io.devalloc.replay.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.devalloc.replay.TraceFile;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;
import picocli.CommandLine.Command;

/** {@link CudaDeviceOption} and {@link ReportOptions} as a command has them, through {@link TraceCommand}. */
class CommandOptionsTest {

    @Command(name = "run")
    static final class RunCommand extends TraceCommand {
        RunCommand() {
            super("Run device N only. Default: every device.", "Print JSON.", "Also write a page.");
        }
    }

    @Test
    void eachOptionIsDescribedInTheCommandsWords() {
        String help = new CommandLine(new RunCommand()).getUsageMessage(CommandLine.Help.Ansi.OFF)
                .replaceAll("\\s+", " ");
        assertTrue(help.contains("--cuda-device=N Run device N only. Default: every device."), help);
        assertTrue(help.contains("--json Print JSON."), help);
        assertTrue(help.contains("--html=FILE Also write a page."), help);
        assertTrue(help.contains("TRACE The trace file."), help);
    }

    @Test
    void theValuesGivenAndEachParseStartsAfresh() {
        RunCommand run = new RunCommand();
        CommandLine cmd = new CommandLine(run);
        cmd.parseArgs("t.pickle", "--cuda-device", "2", "--json", "--html", "page.html");
        assertEquals(Path.of("t.pickle"), run.trace);
        assertEquals(2, run.cudaDevice.index());
        assertTrue(run.report.json());
        assertEquals(Path.of("page.html"), run.report.html());
        cmd.parseArgs("t.pickle");
        assertEquals(TraceFile.ALL_DEVICES, run.cudaDevice.index());
        assertFalse(run.report.json());
        assertNull(run.report.html());
        assertFalse(run.report.writeHtml(null, page -> {
            throw new AssertionError("no page was asked for");
        }));
    }

    @Test
    void aNegativeDeviceIndexIsRefused() {
        RunCommand run = new RunCommand();
        new CommandLine(run).parseArgs("t.pickle", "--cuda-device", "-1");
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, run.cudaDevice::index);
        assertEquals("--cuda-device: a device index is 0 or more, got -1", e.getMessage());
    }
}
