package io.devalloc.examples;

import io.devalloc.replay.cli.CompareCommand;
import io.devalloc.replay.cli.ExitCodes;
import io.devalloc.replay.cli.ReplayCommand;
import io.devalloc.api.error.DevallocException;
import java.io.OutputStreamWriter;
import java.io.PrintStream;
import java.io.PrintWriter;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.IVersionProvider;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.ParseResult;
import picocli.CommandLine.ScopeType;
import picocli.CommandLine.Spec;
import picocli.CommandLine.UnmatchedArgumentException;
import picocli.CommandLine;

/**
 * The {@code devalloc} command line, what {@code ./devalloc} runs: {@code devalloc devices} lists the device
 * providers and allocators on the class path, {@code devalloc demo} runs a synthetic training loop on one,
 * {@code devalloc replay} replays an allocation trace through one allocator and {@code devalloc compare} through
 * several, side by side.
 *
 * <p>Each subcommand is its own class listed in {@code subcommands} below; adding one (a replay, a report, a
 * benchmark) means writing a {@link Callable Callable&lt;Integer&gt;} annotated with {@code @Command} and adding
 * it to that list. Subcommands print through {@code spec.commandLine().getOut()} so that {@link #run} can capture
 * their output, and report bad input by throwing: {@link DevallocException} and {@link IllegalArgumentException}
 * become a one-line {@code devalloc: error: ...} and exit code {@value #EXIT_USAGE}; anything else is a bug and
 * exits with {@value #EXIT_INTERNAL}. {@code --verbose} adds the stack trace and, when run from {@link #main},
 * the allocator's info-level log.
 */
@Command(name = "devalloc",
        mixinStandardHelpOptions = true,
        versionProvider = Launcher.Version.class,
        description = "Device memory allocators for the JVM: list the devices found here, run a demo workload, replay "
                + "allocation traces through any allocator and compare allocators on them.",
        subcommands = {
                DevicesCommand.class,
                DemoCommand.class,
                ReplayCommand.class,
                CompareCommand.class,
                CommandLine.HelpCommand.class,
        },
        footer = {"", "Start with 'devalloc devices', then 'devalloc demo'. 'devalloc help COMMAND' explains one command."})
public final class Launcher implements Callable<Integer> {

    /** Success. */
    public static final int EXIT_OK = ExitCodes.OK;
    /** A bug or an unexpected failure (picocli's convention for exceptions from a command). */
    public static final int EXIT_INTERNAL = ExitCodes.INTERNAL;
    /** Bad command line or bad input: unknown command or option, unknown device, refused configuration. */
    public static final int EXIT_USAGE = ExitCodes.USAGE;

    private static final String PROGRAM = "devalloc";
    private static final String LOG_LEVEL_PROPERTY = "org.slf4j.simpleLogger.defaultLogLevel";

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
     * exiting: {@value #EXIT_OK} ok, {@value #EXIT_USAGE} bad usage or input, {@value #EXIT_INTERNAL} a bug.
     */
    public static int run(PrintStream out, PrintStream err, String... args) {
        PrintWriter outWriter = new PrintWriter(new OutputStreamWriter(out, out.charset()), true);
        PrintWriter errWriter = new PrintWriter(new OutputStreamWriter(err, err.charset()), true);
        try {
            return commandLine(outWriter, errWriter).execute(args);
        } finally {
            outWriter.flush();
            errWriter.flush();
        }
    }

    /** The configured command line; writers and handlers apply to every subcommand. */
    static CommandLine commandLine(PrintWriter out, PrintWriter err) {
        CommandLine cmd = new CommandLine(new Launcher());
        cmd.setOut(out);
        cmd.setErr(err);
        cmd.setParameterExceptionHandler(Launcher::handleUsageError);
        cmd.setExecutionExceptionHandler(Launcher::handleFailure);
        cmd.setExecutionStrategy(parseResult -> {
            configureLogging(isVerbose(parseResult));
            return new CommandLine.RunLast().execute(parseResult);
        });
        return cmd;
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

    private static int handleFailure(Exception ex, CommandLine cmd, ParseResult parseResult) {
        PrintWriter err = root(cmd).getErr();
        boolean verbose = isVerbose(parseResult);
        if (ex instanceof DevallocException || ex instanceof IllegalArgumentException) {
            err.println(PROGRAM + ": error: " + (ex.getMessage() != null ? ex.getMessage() : ex.toString()));
            if (verbose) {
                ex.printStackTrace(err);
            }
            return EXIT_USAGE;
        }
        err.println(PROGRAM + ": internal error: " + ex);
        if (verbose) {
            ex.printStackTrace(err);
        } else {
            err.println("Run again with --verbose for the stack trace.");
        }
        return EXIT_INTERNAL;
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
     * candidate. Takes effect only before the first logger is created, and never overrides a level the user set.
     */
    private static void configureLogging(boolean verbose) {
        if (System.getProperty(LOG_LEVEL_PROPERTY) == null) {
            System.setProperty(LOG_LEVEL_PROPERTY, verbose ? "info" : "warn");
        }
    }

    /** {@code devalloc --version}: the build's version and the Java running it. */
    static final class Version implements IVersionProvider {
        @Override
        public String[] getVersion() {
            // The launcher jar's manifest carries Implementation-Version; classes run from a build tree have none.
            String version = Launcher.class.getPackage().getImplementationVersion();
            List<String> lines = new ArrayList<>();
            lines.add(PROGRAM + " " + (version != null ? version : "(development build)"));
            lines.add("Java " + Runtime.version() + " (" + System.getProperty("java.vendor", "unknown vendor") + ", "
                    + System.getProperty("java.home", "unknown home") + ")");
            return lines.toArray(String[]::new);
        }
    }
}
