package io.devalloc.replay.cli;

/** The exit codes of devalloc's commands, shared by the launcher and the commands it registers. */
public final class ExitCodes {

    /** Done. */
    public static final int OK = 0;
    /** A bug: anything but bad usage or bad input. */
    public static final int INTERNAL = 1;
    /** Bad usage or bad input (a malformed trace, an unknown allocator, a bad configuration). */
    public static final int USAGE = 2;
    /**
     * The run finished, but a file it was asked to write ({@code --html}, {@code --export}, {@code --jfr}) could
     * not be written at its end; everything else was printed. ({@code check} uses 3 for a failed check.)
     */
    public static final int OUTPUT = 4;

    private ExitCodes() {
    }
}
