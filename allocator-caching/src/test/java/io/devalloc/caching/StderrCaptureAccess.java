package io.devalloc.caching;

/** {@link StderrCapture} for the tests of other packages of this module. */
public final class StderrCaptureAccess {

    private StderrCaptureAccess() {
    }

    /** Runs {@code r} and returns what it printed on standard error. */
    public static String during(Runnable r) {
        return StderrCapture.during(r);
    }
}
