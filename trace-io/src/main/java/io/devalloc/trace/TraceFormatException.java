package io.devalloc.trace;

import java.io.IOException;

/** A trace file that does not follow its format: says which file, which line and what was expected. */
public final class TraceFormatException extends IOException {

    private static final long serialVersionUID = 1L;

    private final String file;
    private final long line;

    /**
     * @param line the 1-based line (or record) at fault, or 0 for the file as a whole (a binary format's structure,
     *             an empty file), which the message then does not number
     */
    public TraceFormatException(String file, long line, String problem) {
        super(file + (line > 0 ? ":" + line : "") + ": " + problem);
        this.file = file;
        this.line = line;
    }

    public String file() {
        return file;
    }

    public long line() {
        return line;
    }
}
