package io.devalloc.replay.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Map;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.IDefaultValueProvider;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.ArgSpec;
import picocli.CommandLine.Model.OptionSpec;

class SettingOptionTest {

    /** A command with the three options, as {@code demo} has them. */
    @Command(name = "run")
    static final class RunCommand {
        @Mixin
        SettingOption device = SettingOption.device("auto", "Device spec: auto, sim:80GiB, ...");

        @Mixin
        SettingOption allocator = SettingOption.allocator("direct");

        @Mixin
        SettingOption config = SettingOption.config(null, "memory_limit_mb:1024", "none");
    }

    /** The launcher's defaults as a test gives them: from a map, each named by where it came from. */
    record MapDefaults(Map<String, String> values, boolean namesSources) implements IDefaultValueProvider,
            DefaultSources {

        @Override
        public String defaultValue(ArgSpec argSpec) {
            return argSpec instanceof OptionSpec o ? values.get(o.longestName()) : null;
        }

        @Override
        public String sourceOf(String option) {
            return namesSources && values.containsKey(option) ? "TEST_" + option.substring(2) + "="
                    + values.get(option) : null;
        }
    }

    @Test
    void eachOptionIsDescribedWithItsDefaultAndTheOldNameIsHidden() {
        String help = new CommandLine(new RunCommand()).getUsageMessage(CommandLine.Help.Ansi.OFF)
                .replaceAll("\\s+", " ");
        assertTrue(help.contains("--device=SPEC Device spec: auto, sim:80GiB, ... Default: auto (DEVALLOC_DEVICE sets"
                + " it)."), help);
        assertTrue(help.contains("--allocator=NAME Allocator: direct, bfc, caching, caching-host or any plug-in"
                + " ('devalloc devices' lists them). Default: direct (DEVALLOC_ALLOCATOR sets it)."), help);
        assertTrue(help.contains("--config=K:V,... The allocator's configuration, key:value pairs separated by"
                + " commas, passed to it unchanged, e.g. memory_limit_mb:1024. Default: none (DEVALLOC_CONFIG sets"
                + " one; without one, caching reads PYTORCH_CUDA_ALLOC_CONF). --conf is the same option."), help);
        assertFalse(help.contains("--conf="), help);
    }

    @Test
    void theCommandLineWinsOverTheDefaultAndEachParseStartsAfresh() {
        RunCommand run = new RunCommand();
        CommandLine cmd = new CommandLine(run);
        cmd.parseArgs("--device", "host", "--allocator", "bfc", "--conf", "allow_growth:true");
        assertEquals("host", run.device.value());
        assertEquals("bfc", run.allocator.value());
        assertEquals("allow_growth:true", run.config.value(), "the old name gives the configuration too");
        cmd.parseArgs();
        assertEquals("auto", run.device.value());
        assertEquals("direct", run.allocator.value());
        assertNull(run.config.value());
    }

    @Test
    void aDefaultFromTheLauncherIsNamedWhereItCameFrom() {
        RunCommand run = new RunCommand();
        CommandLine cmd = new CommandLine(run);
        cmd.setDefaultValueProvider(new MapDefaults(Map.of("--config", "a:1"), true));
        cmd.parseArgs();
        assertEquals("a:1", run.config.value());
        assertEquals("TEST_config=a:1", run.config.defaultSource());
        assertNull(run.device.defaultSource(), "the command's own default has no source to name");
        cmd.parseArgs("--config", "b:2");
        assertNull(run.config.defaultSource(), "given on the command line");
        cmd.parseArgs("--conf", "b:2");
        assertNull(run.config.defaultSource(), "given on the command line by its old name");
        cmd.setDefaultValueProvider(new MapDefaults(Map.of("--config", "a:1"), false));
        cmd.parseArgs();
        assertEquals("the launcher's default", run.config.defaultSource());
    }
}
