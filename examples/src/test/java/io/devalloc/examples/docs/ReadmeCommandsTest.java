package io.devalloc.examples.docs;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.devalloc.api.spi.DeviceRegistry;
import io.devalloc.examples.Launcher;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Every {@code ./devalloc} command of the README's shell blocks, run as written through the launcher: the trace a
 * synopsis names ({@code TRACE}) is the shipped OPT snapshot, {@code help COMMAND} asks for {@code advise}, and a
 * file written ({@code advice.html}) goes to a temporary directory. Each must exit 0, except {@code check cuda:0}
 * on a machine without a GPU, which must say why with exit code 2. The README's other commands run elsewhere:
 * {@code ./mvnw verify} is CI itself, {@code ./mvnw install} is {@code ConsumerBuildTest}'s first step, and the
 * archive's {@code tar} and {@code bin/devalloc} are {@code DistributionArchiveTest}'s (module
 * {@code integration-tests}).
 */
class ReadmeCommandsTest {

    private static final String OPT = "traces/pt-opt-zeroth-order-fl/memory.pickle";

    @TempDir
    Path dir;

    /** The README's shell lines that start with {@code ./devalloc}, comments cut, synopsis continuations skipped. */
    static List<String> devallocCommands() throws IOException {
        List<String> commands = new ArrayList<>();
        boolean inShell = false;
        for (String line : Files.readAllLines(MarkdownSnippets.REPOSITORY.resolve("README.md"))) {
            if (line.startsWith("```")) {
                inShell = !inShell && line.equals("```sh");
                continue;
            }
            if (inShell && line.startsWith("./devalloc ")) {
                int comment = line.indexOf(" # ");
                commands.add((comment < 0 ? line : line.substring(0, comment)).strip());
            }
        }
        return commands;
    }

    /** The arguments a README line runs with: placeholders filled, paths made to work from this module. */
    private List<String> arguments(String command) {
        List<String> args = new ArrayList<>();
        String[] words = command.substring("./devalloc ".length()).split("\\s+");
        String name = words[0];
        for (String w : words) {
            if (w.startsWith("[")) {
                break;   // a synopsis: its required words only
            }
            String arg = switch (w) {
                case "TRACE", "TRACE..." -> repository(OPT);
                case "COMMAND" -> "advise";
                case "advice.html" -> dir.resolve("advice.html").toString();
                default -> w.startsWith("traces/") ? repository(w) : w;
            };
            args.add(arg);
        }
        assertTrue(!args.isEmpty() && args.getFirst().equals(name), command);
        return args;
    }

    private record Run(int exitCode, String out, String err) {
        @Override
        public String toString() {
            return "exit " + exitCode + "\n--- stdout\n" + out + "--- stderr\n" + err;
        }
    }

    /** The launcher as a user runs it (the machine's DEVALLOC_* settings would change nothing the README shows). */
    private static Run run(String... args) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        int code;
        try (PrintStream o = new PrintStream(out, true, StandardCharsets.UTF_8);
             PrintStream e = new PrintStream(err, true, StandardCharsets.UTF_8)) {
            code = Launcher.run(o, e, args);
        }
        return new Run(code, out.toString(StandardCharsets.UTF_8), err.toString(StandardCharsets.UTF_8));
    }

    private static String repository(String relative) {
        return MarkdownSnippets.REPOSITORY.resolve(relative).toString();
    }

    @Test
    void everyDevallocCommandOfTheReadmeRunsAsWritten() throws IOException {
        List<String> commands = devallocCommands();
        assertTrue(commands.size() >= 10, "the README's ./devalloc commands: " + commands);
        boolean gpu = DeviceRegistry.load().describe().stream()
                .anyMatch(s -> s.name().equals("cuda") && s.availability().available());
        for (String command : commands) {
            List<String> args = arguments(command);
            Run r = run(args.toArray(String[]::new));
            if (command.contains("cuda:0") && !gpu) {
                assertEquals(2, r.exitCode(), command + "\n" + r);
                assertTrue(r.err().contains("is unavailable"), command + "\n" + r);
            } else {
                assertEquals(0, r.exitCode(), command + "\n" + r);
            }
        }
        assertTrue(Files.size(dir.resolve("advice.html")) > 10_000, "the main command wrote its page");
    }
}
