package io.devalloc.replay.cli;

import java.util.Objects;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Model.OptionSpec;
import picocli.CommandLine.ParseResult;
import picocli.CommandLine.Spec;

/**
 * One of the options that choose what a command runs on, {@value #DEVICE}, {@value #ALLOCATOR} or {@value #CONFIG}
 * (with {@value #OLD_CONFIG}, its older name, hidden), as a picocli mixin: {@code @Mixin SettingOption device =
 * SettingOption.device(...)}. Each option's names, parameter label, help text and parsing are declared here once for
 * every command that has it; the launcher's default-value provider ({@code DEVALLOC_DEVICE} and the like) applies to
 * it as to any option.
 *
 * <p>Declared through picocli's programmatic API when the mixin joins its command, not by annotations: the commands
 * default and describe the same option differently ({@code replay} runs on a simulated 80 GiB GPU by default,
 * {@code demo} on the device {@code auto} picks; {@code check} checks one allocator), and an annotation's default
 * and text are constants of the class that declares it. Picocli asks a mixin for at least one annotation, hence the
 * bare {@link Command}.
 *
 * <p>Not thread-safe: one parse at a time, as picocli parses.
 */
@Command
public final class SettingOption {

    /** The device option's name. */
    public static final String DEVICE = "--device";
    /** The allocator option's name. */
    public static final String ALLOCATOR = "--allocator";
    /** The configuration option's name. */
    public static final String CONFIG = "--config";
    /**
     * The configuration option's older name, still accepted where it was (the help shows {@value #CONFIG} only). A
     * separate option rather than an alias because picocli gives an unmatched option its default after parsing, which
     * would overwrite a value the alias set; the launcher refuses both names at once.
     */
    public static final String OLD_CONFIG = "--conf";

    /** Ends the device's help text: the launcher's default-value provider reads {@code DEVALLOC_DEVICE}. */
    private static final String DEVICE_DEFAULT = " Default: ${DEFAULT-VALUE} (DEVALLOC_DEVICE sets it).";

    /** The allocator's help text where any allocator runs ({@code replay}, {@code demo}). */
    private static final String ANY_ALLOCATOR = "Allocator: direct, bfc, caching, caching-host or any plug-in"
            + " ('devalloc devices' lists them). Default: ${DEFAULT-VALUE} (DEVALLOC_ALLOCATOR sets it).";

    private final OptionSpec option;
    /** {@value #OLD_CONFIG} beside {@value #CONFIG}; null for the other options. */
    private final OptionSpec oldName;

    private SettingOption(OptionSpec option, OptionSpec oldName) {
        this.option = option;
        this.oldName = oldName;
    }

    /**
     * {@value #DEVICE} {@code SPEC}.
     *
     * @param defaultDevice the device spec when none is given
     * @param what          the help text's first sentence, saying what the spec chooses; the default follows it
     */
    public static SettingOption device(String defaultDevice, String what) {
        return new SettingOption(OptionSpec.builder(DEVICE).paramLabel("SPEC").type(String.class)
                .defaultValue(Objects.requireNonNull(defaultDevice, "defaultDevice"))
                .description(what + DEVICE_DEFAULT).build(), null);
    }

    /** {@value #ALLOCATOR} {@code NAME}, any allocator, {@code defaultAllocator} when none is given. */
    public static SettingOption allocator(String defaultAllocator) {
        return allocator(defaultAllocator, ANY_ALLOCATOR);
    }

    /**
     * {@value #ALLOCATOR} {@code NAME}, for a command that takes only some allocators or uses the one it is given in
     * a way of its own.
     *
     * @param defaultAllocator the allocator when none is given
     * @param description      the help text, with {@code ${DEFAULT-VALUE}} where the default goes
     */
    public static SettingOption allocator(String defaultAllocator, String description) {
        return new SettingOption(OptionSpec.builder(ALLOCATOR).paramLabel("NAME").type(String.class)
                .defaultValue(Objects.requireNonNull(defaultAllocator, "defaultAllocator"))
                .description(description).build(), null);
    }

    /**
     * {@value #CONFIG} {@code K:V,...}, with {@value #OLD_CONFIG}.
     *
     * @param defaultConfig the configuration when none is given; null for none, which the command then decides
     * @param example       configurations the help text shows, e.g. {@code memory_limit_mb:1024}
     * @param whenNone      what the help text says the command uses when no configuration is given
     */
    public static SettingOption config(String defaultConfig, String example, String whenNone) {
        String description = "The allocator's configuration, key:value pairs separated by commas, passed to it"
                + " unchanged, e.g. " + example + ". Default: " + whenNone + " (DEVALLOC_CONFIG sets one; without"
                + " one, caching reads PYTORCH_CUDA_ALLOC_CONF). " + OLD_CONFIG + " is the same option.";
        return new SettingOption(OptionSpec.builder(CONFIG).paramLabel("K:V,...").type(String.class)
                .defaultValue(defaultConfig).description(description).build(),
                OptionSpec.builder(OLD_CONFIG).paramLabel("K:V,...").type(String.class).hidden(true).build());
    }

    /** Picocli calls it when the mixin joins its command: the option (and its old name) become the command's. */
    @Spec(Spec.Target.MIXEE)
    void addTo(CommandSpec command) {
        command.addOption(option);
        if (oldName != null) {
            command.addOption(oldName);
        }
    }

    /** The value given on the command line (either name of the configuration), else the default; null when none. */
    public String value() {
        String old = oldName == null ? null : oldName.getValue();
        return old != null ? old : option.getValue();
    }

    /**
     * Where the value comes from when the command line does not give it but the launcher's default does (e.g.
     * {@code DEVALLOC_CONFIG=...} or {@code -Ddevalloc.config=...}, as its {@link DefaultSources} says, else "the
     * launcher's default"); null when the command line gives it, when the command's own default is in effect, when
     * there is none, or before a parse.
     */
    public String defaultSource() {
        CommandSpec command = option.command();
        ParseResult parsed = command == null ? null : command.commandLine().getParseResult();
        if (value() == null || parsed == null || parsed.hasMatchedOption(option.longestName())
                || (oldName != null && parsed.hasMatchedOption(oldName.longestName()))) {
            return null;
        }
        String source = command.commandLine().getDefaultValueProvider() instanceof DefaultSources sources
                ? sources.sourceOf(option.longestName()) : null;
        if (source != null) {
            return source;
        }
        return value().equals(option.defaultValue()) ? null : "the launcher's default";
    }
}
