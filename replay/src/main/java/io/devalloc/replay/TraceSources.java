package io.devalloc.replay;

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

    private TraceSources() {
    }

    /**
     * A source reading {@code file} (each open detects the format again and starts at the first event).
     *
     * @throws IllegalArgumentException if {@code file} is not a readable regular file
     */
    public static TraceSource of(Path file) {
        Objects.requireNonNull(file, "file");
        if (!Files.isRegularFile(file)) {
            throw new IllegalArgumentException("no such trace file: " + file);
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
     * Opens {@code file} with the reader for its format, detected from its content.
     *
     * @throws IOException if it cannot be read, or its format is not recognised
     */
    public static TraceReader open(Path file) throws IOException {
        return TraceFormats.open(file);
    }
}
