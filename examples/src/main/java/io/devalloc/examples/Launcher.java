package io.devalloc.examples;

import io.devalloc.advisor.cli.AdviseCommand;
import io.devalloc.api.error.DevallocException;
import io.devalloc.api.units.ByteSize;
import io.devalloc.replay.cli.CompareCommand;
import io.devalloc.replay.cli.ExitCodes;
import io.devalloc.replay.cli.ReplayCommand;
import io.devalloc.replay.cli.SettingOption;
import java.io.OutputStreamWriter;
import java.io.PrintStream;
import java.io.PrintWriter;
import java.lang.module.ModuleDescriptor;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.IVersionProvider;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.ParseResult;
import picocli.CommandLine.ScopeType;
import picocli.CommandLine.Spec;
import picocli.CommandLine.UnmatchedArgumentException;

/**
 * The {@code devalloc} command line, what {@code ./devalloc} runs: {@code devalloc devices} lists the device
 * providers and allocators on the class path, {@code devalloc demo} runs a synthetic training loop on one,
 * {@code devalloc replay} replays an allocation trace through one allocator and {@code devalloc compare} through
 * several, side by side, and {@code devalloc advise} replays it under many settings of one allocator and recommends
 * one.
 *
 * <p>Each subcommand is its own class listed in {@code subcommands} below; adding one (a replay, a report, a
 * benchmark) means writing a {@link Callable Callable&lt;Integer&gt;} annotated with {@code @Command} and adding
 * it to that list. Subcommands print through {@code spec.commandLine().getOut()} so that {@link #run} can capture
 * their output, and report bad input by throwing: {@link DevallocException} and {@link IllegalArgumentException}
 * become a one-line {@code devalloc: error: ...} and exit code {@value #EXIT_USAGE}; anything else is a bug and
 * exits with {@value #EXIT_INTERNAL}. A file a command writes after its run ({@code --html}, {@code --export},
 * {@code --jfr}) is checked before the run (a usage error); when it still cannot be written at the end, the command
 * says so on one line, prints its results all the same and exits with {@value #EXIT_OUTPUT}. Messages name no Java
 * class: {@code --verbose} adds the stack trace and, when run from {@link #main}, the allocator's info-level log
 * with the loggers' names.
 *
 * <p>{@code --device}, {@code --allocator} and {@code --config}, in every command that has them, default to the
 * {@code devalloc.*} system properties and {@code DEVALLOC_*} environment variables, as applications read them
 * ({@link io.devalloc.api.DevallocSettings}), and only then to the command's own default ({@link SettingsDefaults});
 * the options win. {@code --conf} is the older name of {@code --config}, still accepted where it was.
 */
@Command(name = "devalloc",
        mixinStandardHelpOptions = true,
        versionProvider = Launcher.Version.class,
        description = "Device memory allocators for the JVM: list the devices found here, run a demo workload, replay "
                + "allocation traces through any allocator, compare allocators on them, and find the setting a trace "
                + "needs least memory with.",
        subcommands = {
                DevicesCommand.class,
                CheckCommand.class,
                DemoCommand.class,
                ReplayCommand.class,
                CompareCommand.class,
                AdviseCommand.class,
                CommandLine.HelpCommand.class,
        },
        footer = {"", "Start with 'devalloc devices', then 'devalloc demo'."
                + " 'devalloc help COMMAND' explains one command."})
public final class Launcher implements Callable<Integer> {

    /** Success. */
    public static final int EXIT_OK = ExitCodes.OK;
    /** A bug or an unexpected failure (picocli's convention for exceptions from a command). */
    public static final int EXIT_INTERNAL = ExitCodes.INTERNAL;
    /** Bad command line or bad input: unknown command or option, unknown device, refused configuration. */
    public static final int EXIT_USAGE = ExitCodes.USAGE;
    /** The run finished, but a file it was asked to write (--html, --export, --jfr) could not be written. */
    public static final int EXIT_OUTPUT = ExitCodes.OUTPUT;

    private static final String PROGRAM = "devalloc";
    private static final String LOG_LEVEL_PROPERTY = "org.slf4j.simpleLogger.defaultLogLevel";
    private static final String LOG_NAME_PROPERTY = "org.slf4j.simpleLogger.showLogName";
    private static final String LOG_THREAD_PROPERTY = "org.slf4j.simpleLogger.showThreadName";
    private static final String BFC_LOG_LEVEL_PROPERTY = "org.slf4j.simpleLogger.log.io.devalloc.bfc.BfcArena";

    @Spec
    CommandSpec spec;

    // Inherited, so that both 'devalloc --verbose demo' and 'devalloc demo --verbose' work.
    @Option(names = {"-v", "--verbose"}, scope = ScopeType.INHERIT,
            description = "Show stack traces for errors, and the allocator's log (device choice, openings).")
    boolean verbose;

    /** Runs the launcher and exits the JVM with its exit code. */
    public static void main(String... args) {
        int code = run(System.out, System.err, args);
        System.out.flush();
        System.err.flush();
        System.exit(code);
    }

    /**
     * Runs the launcher with output going to {@code out} and {@code err}, and returns the exit code instead of
     * exiting: {@value #EXIT_OK} ok, {@value #EXIT_USAGE} bad usage or input, {@value #EXIT_INTERNAL} a bug,
     * {@value #EXIT_OUTPUT} a run whose output file could not be written.
     */
    public static int run(PrintStream out, PrintStream err, String... args) {
        return run(out, err, System.getProperties(), System.getenv(), args);
    }

    /**
     * {@link #run(PrintStream, PrintStream, String...)} with the {@code devalloc.*} settings read from
     * {@code properties} and {@code environment} instead of the JVM's (for tests).
     */
    static int run(PrintStream out, PrintStream err, Map<?, ?> properties, Map<String, String> environment,
                   String... args) {
        PrintWriter outWriter = new PrintWriter(new OutputStreamWriter(out, out.charset()), true);
        PrintWriter errWriter = new PrintWriter(new OutputStreamWriter(err, err.charset()), true);
        try {
            return commandLine(outWriter, errWriter, new SettingsDefaults(properties, environment)).execute(args);
        } finally {
            outWriter.flush();
            errWriter.flush();
        }
    }

    /** The configured command line, with the JVM's settings; writers and handlers apply to every subcommand. */
    static CommandLine commandLine(PrintWriter out, PrintWriter err) {
        return commandLine(out, err, new SettingsDefaults(System.getProperties(), System.getenv()));
    }

    private static CommandLine commandLine(PrintWriter out, PrintWriter err, SettingsDefaults settings) {
        CommandLine cmd = new CommandLine(new Launcher());
        shareVersion(cmd, cmd.getCommandSpec().versionProvider());
        // replay's module takes neither Micrometer nor JFR recordings: the launcher adds --metrics and --jfr to it.
        cmd.getSubcommands().get("replay").addMixin("observability", new ObservabilityOptions().named("replay"));
        cmd.setOut(out);
        cmd.setErr(err);
        cmd.setDefaultValueProvider(settings);
        cmd.setParameterExceptionHandler(Launcher::handleUsageError);
        cmd.setExecutionExceptionHandler((ex, c, parseResult) -> handleFailure(ex, c, parseResult, settings));
        cmd.setExecutionStrategy(parseResult -> {
            configureLogging(isVerbose(parseResult), lastCommandName(parseResult));
            checkConfigGivenOnce(parseResult);
            try {
                return new CommandLine.RunLast().execute(parseResult);
            } catch (OutOfMemoryError | StackOverflowError e) {
                // Picocli hands errors on untouched; the commands turn those of a trace's load into a message
                // naming the file (TraceReplays.tooBig): this is the rest, still one line and no stack trace.
                return handleResourceError(e, parseResult);
            }
        });
        return cmd;
    }

    /**
     * Gives every subcommand without a version of its own the root's {@code provider}: picocli does not inherit it,
     * so {@code devalloc demo -V} (every subcommand offers -V) printed nothing while {@code devalloc -V} printed the
     * version. Set here rather than on each {@code @Command}, since the subcommands live in other modules.
     */
    private static void shareVersion(CommandLine cmd, IVersionProvider provider) {
        for (CommandLine sub : cmd.getSubcommands().values()) {
            CommandSpec spec = sub.getCommandSpec();
            if (spec.versionProvider() == null && spec.version().length == 0) {
                spec.versionProvider(provider);
            }
            shareVersion(sub, provider);
        }
    }

    /** {@code --config} and its old name {@code --conf} are one option: refuse both at once. */
    private static void checkConfigGivenOnce(ParseResult parseResult) {
        ParseResult leaf = leaf(parseResult);
        if (leaf.hasMatchedOption(SettingOption.CONFIG) && leaf.hasMatchedOption(SettingOption.OLD_CONFIG)) {
            throw new ParameterException(leaf.commandSpec().commandLine(), "--config and --conf are the same option"
                    + " (--conf is its old name); give the configuration once, with --config");
        }
    }

    /** The parse result of the command that runs: the last subcommand. */
    private static ParseResult leaf(ParseResult parseResult) {
        ParseResult p = parseResult;
        while (p.hasSubcommand()) {
            p = p.subcommand();
        }
        return p;
    }

    /** {@code devalloc} without a command: say so and show what there is. */
    @Override
    public Integer call() {
        PrintWriter err = spec.commandLine().getErr();
        err.println(PROGRAM + ": error: no command given; " + commandList(spec.commandLine()));
        err.println();
        spec.commandLine().usage(err);
        return EXIT_USAGE;
    }

    private static int handleUsageError(ParameterException ex, String[] args) {
        CommandLine cmd = ex.getCommandLine();
        PrintWriter err = root(cmd).getErr();
        err.println(PROGRAM + ": error: " + usageMessage(ex));
        UnmatchedArgumentException.printSuggestions(ex, err);
        err.println("Run '" + cmd.getCommandSpec().qualifiedName() + " --help' for usage.");
        return cmd.getCommandSpec().exitCodeOnInvalidInput();
    }

    /** Picocli's "Unmatched argument at index 0" does not tell a newcomer that the command name was wrong. */
    private static String usageMessage(ParameterException ex) {
        CommandLine cmd = ex.getCommandLine();
        if (ex instanceof UnmatchedArgumentException unmatched && !cmd.getSubcommands().isEmpty()) {
            List<String> words = unmatched.getUnmatched();
            ParseResult parsed = cmd.getParseResult();
            boolean noCommandYet = parsed == null || !parsed.hasSubcommand();
            if (noCommandYet && !words.isEmpty() && !words.getFirst().startsWith("-")) {
                return "unknown command '" + words.getFirst() + "'; " + commandList(cmd);
            }
        }
        return ex.getMessage();
    }

    private static String commandList(CommandLine cmd) {
        return "commands: " + String.join(", ", cmd.getSubcommands().keySet());
    }

    private static int handleFailure(Exception ex, CommandLine cmd, ParseResult parseResult,
                                     SettingsDefaults settings) {
        PrintWriter err = root(cmd).getErr();
        boolean verbose = isVerbose(parseResult);
        if (ex instanceof DevallocException || ex instanceof IllegalArgumentException) {
            err.println(PROGRAM + ": error: " + message(ex, "the command failed"));
            // A device, allocator or configuration the user did not type may be the cause: say where it came from.
            ParseResult leaf = leaf(parseResult);
            for (SettingsDefaults.Setting s : SettingsDefaults.SETTINGS) {
                if (leaf.commandSpec().findOption(s.option()) != null && !leaf.hasMatchedOption(s.option())
                        && !(s.option().equals(SettingOption.CONFIG)
                        && leaf.hasMatchedOption(SettingOption.OLD_CONFIG))) {
                    settings.source(s).ifPresent(source -> err.println(PROGRAM + ": note: " + s.option()
                            + " came from " + source));
                }
            }
            if (verbose) {
                ex.printStackTrace(err);
            }
            return EXIT_USAGE;
        }
        // A bug: the message only (the exception's class is an internal name); --verbose shows the stack trace.
        err.println(PROGRAM + ": internal error: " + message(ex, "an unexpected failure without a message"));
        if (verbose) {
            ex.printStackTrace(err);
        } else {
            err.println("Run again with --verbose for the stack trace.");
        }
        return EXIT_INTERNAL;
    }

    private static int handleResourceError(VirtualMachineError e, ParseResult parseResult) {
        PrintWriter err = root(parseResult.commandSpec().commandLine()).getErr();
        err.println(PROGRAM + ": error: " + (e instanceof StackOverflowError
                ? "the input is nested too deep for this Java thread's stack: give Java a larger one with"
                        + " JDK_JAVA_OPTIONS=-Xss64m"
                : "the command needs more memory than the Java heap allows (-Xmx, "
                        + ByteSize.format(Runtime.getRuntime().maxMemory()) + " now): give Java more with"
                        + " JDK_JAVA_OPTIONS=-Xmx16g (or as much as this machine has)"));
        if (isVerbose(parseResult)) {
            e.printStackTrace(err);
        }
        return EXIT_USAGE;
    }

    /** The exception's message, or {@code fallback} when it has none. */
    private static String message(Exception ex, String fallback) {
        String m = ex.getMessage();
        return m == null || m.isBlank() ? fallback : m;
    }

    /**
     * Errors go to the root's writer: a subcommand added after {@link #commandLine} configured the writers still
     * reports to the stream the caller gave.
     */
    private static CommandLine root(CommandLine cmd) {
        CommandLine c = cmd;
        while (c.getParent() != null) {
            c = c.getParent();
        }
        return c;
    }

    /** The name of the innermost command given ({@code advise} in {@code devalloc advise ...}). */
    static String lastCommandName(ParseResult parseResult) {
        ParseResult p = parseResult;
        while (p.subcommand() != null) {
            p = p.subcommand();
        }
        return p.commandSpec().name();
    }

    /** Whether {@code --verbose} was given at any level of the command line. */
    static boolean isVerbose(ParseResult parseResult) {
        for (ParseResult p = parseResult; p != null; p = p.subcommand()) {
            if (p.hasMatchedOption("--verbose")) {
                return true;
            }
        }
        return false;
    }

    /**
     * Quiet by default: a newcomer should see the table, not the registry's info-level account of every device
     * candidate, and warnings without the logger's class name and thread ({@code WARN Overriding allow_growth...}).
     * Takes effect only before the first logger is created, and never overrides a setting the user made.
     */
    private static void configureLogging(boolean verbose, String command) {
        setIfAbsent(LOG_LEVEL_PROPERTY, verbose ? "info" : "warn");
        if (!verbose && command.equals("advise")) {
            // The capacity search runs each setting out of memory on purpose, a step below its smallest capacity;
            // BFC logs every such failure at WARN with its chunk map, as TensorFlow does: twenty expected failures
            // would bury the advice. --verbose shows them.
            setIfAbsent(BFC_LOG_LEVEL_PROPERTY, "error");
        }
        setIfAbsent(LOG_NAME_PROPERTY, Boolean.toString(verbose));
        setIfAbsent(LOG_THREAD_PROPERTY, Boolean.toString(verbose));
    }

    private static void setIfAbsent(String property, String value) {
        if (System.getProperty(property) == null) {
            System.setProperty(property, value);
        }
    }

    /** {@code devalloc --version}: the build's version and the Java running it. */
    static final class Version implements IVersionProvider {
        @Override
        public String[] getVersion() {
            // On the class path the launcher jar's manifest carries Implementation-Version; on the module path the
            // module descriptor carries the version; classes run from a build tree have neither.
            String version = Launcher.class.getPackage().getImplementationVersion();
            ModuleDescriptor module = Launcher.class.getModule().getDescriptor();
            if (version == null && module != null) {
                version = module.rawVersion().orElse(null);
            }
            List<String> lines = new ArrayList<>();
            lines.add(PROGRAM + " " + (version != null ? version : "(development build)"));
            lines.add("Java " + Runtime.version() + " (" + System.getProperty("java.vendor", "unknown vendor") + ", "
                    + System.getProperty("java.home", "unknown home") + ")");
            return lines.toArray(String[]::new);
        }
    }
}
