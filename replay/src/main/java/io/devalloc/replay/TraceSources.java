package io.devalloc.replay;

import io.devalloc.trace.TraceFormat;
import io.devalloc.trace.TraceReader;
import io.devalloc.trace.detect.TraceFormats;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Objects;

/**
 * Trace files as {@link TraceSource}s: the one place where the replay tool turns a path into a reader, by format
 * detection from the file's content.
 */
public final class TraceSources {

    // The file-type bits of st_mode (POSIX), as the unix:mode attribute gives them.
    private static final int FILE_TYPE = 0170000;
    private static final int FIFO = 0010000;
    private static final int CHARACTER_DEVICE = 0020000;
    private static final int BLOCK_DEVICE = 0060000;
    private static final int SOCKET = 0140000;

    private TraceSources() {
    }

    /**
     * A source reading {@code file} (each open detects the format again and starts at the first event).
     *
     * @throws IllegalArgumentException if {@code file} is not a readable regular file ({@link #notAFile} says why)
     */
    public static TraceSource of(Path file) {
        Objects.requireNonNull(file, "file");
        if (!Files.isRegularFile(file)) {
            throw notAFile(file);
        }
        if (!Files.isReadable(file)) {
            throw new IllegalArgumentException("trace file is not readable: " + file);
        }
        return new TraceSource() {
            @Override
            public TraceReader open() throws IOException {
                return TraceSources.open(file);
            }

            @Override
            public long sizeBytes() {
                try {
                    return Files.size(file);
                } catch (IOException e) {
                    return -1;
                }
            }
        };
    }

    /**
     * Why {@code file}, which is not a regular file, cannot be a trace: it does not exist, it is a directory, or it is
     * a pipe or a device (as {@code /dev/stdin} is when a trace is piped in), which can be read only once while a
     * trace is read more than once (detection, then each of the replay's passes).
     */
    public static IllegalArgumentException notAFile(Path file) {
        if (Files.isDirectory(file)) {
            return new IllegalArgumentException(file + " is a directory, not a trace file");
        }
        if (!Files.exists(file)) {
            return new IllegalArgumentException("no such trace file: " + file);
        }
        return new IllegalArgumentException(file + " is " + kind(file) + ", not a regular file: a trace is read"
                + " more than once (its format's detection, then each pass of the replay), so save it to a file"
                + " first");
    }

    /** What a file that is neither a regular file nor a directory is, as far as the file system tells. */
    private static String kind(Path file) {
        int mode;
        try {
            mode = (Integer) Files.getAttribute(file, "unix:mode");
        } catch (IOException | UnsupportedOperationException | IllegalArgumentException e) {
            return "a special file";
        }
        return switch (mode & FILE_TYPE) {
            case FIFO -> "a pipe";
            case CHARACTER_DEVICE -> "a character device (a terminal or the like)";
            case BLOCK_DEVICE -> "a block device";
            case SOCKET -> "a socket";
            default -> "a special file";
        };
    }

    /**
     * Opens {@code file} with the reader for its format, detected from its content.
     *
     * @throws IOException if it cannot be read, or its format is not recognised
     */
    public static TraceReader open(Path file) throws IOException {
        return TraceFormats.open(file);
    }

    /**
     * The format's name as it reads before "trace": {@code a PyTorch CSV trace}, {@code a valgrind malloc trace}.
     */
    public static String formatKind(TraceFormat format) {
        return switch (format) {
            case PYTORCH_PICKLE -> "PyTorch snapshot pickle";
            case PYTORCH_CSV -> "PyTorch CSV";
            case RMM_CSV -> "RMM replay log";
            case VALGRIND -> "valgrind malloc";
            case ANDROID_MEMORY_REPLAY -> "Android memory_replay";
        };
    }
}
