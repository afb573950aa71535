package io.devalloc.replay.cli;

import java.io.IOException;
import java.io.PrintWriter;
import java.nio.channels.FileChannel;
import java.nio.file.AccessDeniedException;
import java.nio.file.FileSystemException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;

/**
 * The files a command writes after its run ({@code --html}, {@code --export}, {@code --jfr}): checked before the
 * run, so that a path that cannot be written costs no run, and reported after it without losing what was computed.
 *
 * <p>A run can take minutes and a file written at its end is only one of its outputs (the printed figures or JSON,
 * the meters, a recording), so a path that cannot be written is refused up front as a usage error
 * ({@link ExitCodes#USAGE}), and a write that still fails at the end (a full disk, a file made read-only meanwhile)
 * is reported on one line while the rest is printed, and the command exits with {@link ExitCodes#OUTPUT}.
 */
public final class OutputFiles {

    private OutputFiles() {
    }

    /**
     * Refuses a file the command could not write at the end of its run: a directory, a path under something that is
     * not a directory, a folder that cannot be written, an existing file that cannot be opened for writing. Missing
     * folders are allowed (the writers make them) when the nearest existing one can be written. Nothing is created
     * or truncated: an existing file is opened for writing and closed untouched, and a new file's folder is probed
     * with a temporary file that is deleted at once, so that a run that fails later leaves what was there.
     *
     * @param option the option that named the file, for the message ({@code --html})
     * @throws IllegalArgumentException one line: {@code OPTION FILE: cannot be written: why}
     */
    public static void checkWritable(String option, Path file) {
        Path absolute = file.toAbsolutePath();
        if (Files.isDirectory(absolute)) {
            throw refused(option, file, "it is a directory; give a file name");
        }
        if (Files.exists(absolute)) {
            try (FileChannel _ = FileChannel.open(absolute, StandardOpenOption.WRITE)) {
                return;
            } catch (IOException | SecurityException e) {
                throw refused(option, file, "the file cannot be opened for writing (" + reason(e) + ")");
            }
        }
        Path dir = absolute.getParent();
        while (dir != null && !Files.exists(dir)) {
            dir = dir.getParent();
        }
        if (dir == null) {
            throw refused(option, file, "none of its folders exists");
        }
        if (!Files.isDirectory(dir)) {
            throw refused(option, file, dir + " is not a folder");
        }
        try {
            Files.delete(Files.createTempFile(dir, ".devalloc-", ".probe"));
        } catch (IOException | SecurityException e) {
            throw refused(option, file, "no file can be created in " + dir + " (" + reason(e) + ")");
        }
    }

    /**
     * Reports, on one line of {@code err}, that {@code file} could not be written after the run; the caller carries
     * on printing what it computed and exits with {@link ExitCodes#OUTPUT}.
     */
    public static void reportFailure(PrintWriter err, String option, Path file, Exception failure) {
        Throwable cause = failure.getCause() instanceof IOException io ? io : failure;
        err.println("devalloc: error: " + option + " " + file + ": could not be written after the run ("
                + reason(cause) + "); the other results are kept");
        err.flush();
    }

    private static IllegalArgumentException refused(String option, Path file, String why) {
        return new IllegalArgumentException(option + " " + file + ": cannot be written: " + why);
    }

    /** What went wrong, in words, on one line: the file system's reason rather than the exception's type. */
    private static String reason(Throwable e) {
        if (e instanceof AccessDeniedException) {
            return "permission denied";
        }
        if (e instanceof FileSystemException fs && fs.getReason() != null) {
            return fs.getReason();
        }
        String message = e.getMessage();
        return message == null ? "no reason given" : message.replace('\n', ' ');
    }
}
