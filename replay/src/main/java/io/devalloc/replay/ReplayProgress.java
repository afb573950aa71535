package io.devalloc.replay;

/** Hears how far a replay has got; called on the replaying thread, every {@value #INTERVAL} events. */
public interface ReplayProgress {

    /** Events between two calls of {@link #update}. */
    int INTERVAL = 1 << 16;

    /** Hears nothing. */
    ReplayProgress NONE = new ReplayProgress() {
        @Override
        public void update(long done, long total) {
        }

        @Override
        public void finish() {
        }
    };

    /**
     * {@code done} of {@code total} events replayed; {@code total} is an estimate during a one-pass replay, and -1
     * when it cannot be estimated.
     */
    void update(long done, long total);

    /** The replay ended (normally or not). */
    void finish();
}
