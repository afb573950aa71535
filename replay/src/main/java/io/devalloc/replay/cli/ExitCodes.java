package io.devalloc.replay.cli;

/** The exit codes of devalloc's commands, shared by the launcher and the commands it registers. */
public final class ExitCodes {

    /** Done. */
    public static final int OK = 0;
    /** A bug: anything but bad usage or bad input. */
    public static final int INTERNAL = 1;
    /** Bad usage or bad input (a malformed trace, an unknown allocator, a bad configuration). */
    public static final int USAGE = 2;

    private ExitCodes() {
    }
}
