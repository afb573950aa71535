package io.devalloc.replay.cli;

import java.io.PrintWriter;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.util.function.Consumer;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Model.OptionSpec;
import picocli.CommandLine.Spec;

/**
 * {@value #JSON} and {@value #HTML} {@code FILE}, the options that choose how a command gives its results, as a
 * picocli mixin: {@code @Mixin ReportOptions report = new ReportOptions(...)}. Their names, parameter label and the
 * handling of the HTML file (checked before the run, reported without losing the rest when it still cannot be
 * written after it, see {@link OutputFiles}) are declared here once for every command that has them
 * ({@code replay}, {@code compare}, {@code advise}).
 *
 * <p>Declared through picocli's programmatic API, as {@link SettingOption} is: each command describes its JSON and
 * its page in its own words, and an annotation's text is a constant of the class that declares it. Picocli asks a
 * mixin for at least one annotation, hence the bare {@link Command}.
 *
 * <p>Not thread-safe: one parse at a time, as picocli parses.
 */
@Command
public final class ReportOptions {

    /** The JSON option's name. */
    public static final String JSON = "--json";
    /** The HTML option's name. */
    public static final String HTML = "--html";

    private final OptionSpec json;
    private final OptionSpec html;

    /**
     * {@value #JSON} and {@value #HTML} {@code FILE}.
     *
     * @param jsonDescription what {@value #JSON} prints
     * @param htmlDescription what {@value #HTML} writes
     */
    public ReportOptions(String jsonDescription, String htmlDescription) {
        json = OptionSpec.builder(JSON).type(boolean.class).initialValue(false).description(jsonDescription).build();
        html = OptionSpec.builder(HTML).paramLabel("FILE").type(Path.class).description(htmlDescription).build();
    }

    /** Picocli calls it when the mixin joins its command: the options become the command's. */
    @Spec(Spec.Target.MIXEE)
    void addTo(CommandSpec command) {
        command.addOption(json);
        command.addOption(html);
    }

    /** Whether {@value #JSON} was given. */
    public boolean json() {
        return Boolean.TRUE.equals(json.getValue());
    }

    /** The {@value #HTML} file; null when none was given. */
    public Path html() {
        return html.getValue();
    }

    /** Refuses, before the run, an {@value #HTML} file that could not be written: {@link OutputFiles#checkWritable}. */
    public void checkHtmlWritable() {
        if (html() != null) {
            OutputFiles.checkWritable(HTML, html());
        }
    }

    /**
     * Writes the {@value #HTML} file, when one was given, after the run. A write that fails is reported on
     * {@code err} ({@link OutputFiles#reportFailure}) and the caller prints its results all the same: the run is what
     * took the time.
     *
     * @param writer writes the page to the file it is given; throws {@link UncheckedIOException} when it cannot
     * @return whether the page was written; false also when none was asked for
     */
    public boolean writeHtml(PrintWriter err, Consumer<Path> writer) {
        if (html() == null) {
            return false;
        }
        try {
            writer.accept(html());
            return true;
        } catch (UncheckedIOException e) {
            OutputFiles.reportFailure(err, HTML, html(), e);
            return false;
        }
    }
}
