package io.devalloc.advisor;

import io.devalloc.replay.ReplayProgress;

/**
 * The advisor's progress over its replays, from several threads: replays done against replays expected. The
 * capacity search's length is known only after a setting's first replay, so the expected count starts from an
 * estimate per setting and is corrected as each search is planned.
 */
final class RunProgress {

    private final ReplayProgress progress;
    private long done;
    private long expected;

    RunProgress(ReplayProgress progress, long expected) {
        this.progress = progress;
        this.expected = expected;
    }

    /** Changes the expected count by {@code delta} replays. */
    synchronized void expect(long delta) {
        expected += delta;
        progress.update(done, Math.max(expected, done));
    }

    /** One replay done. */
    synchronized void ran() {
        done++;
        progress.update(done, Math.max(expected, done));
    }

    synchronized long done() {
        return done;
    }

    synchronized void finish() {
        progress.update(done, done);
        progress.finish();
    }
}
