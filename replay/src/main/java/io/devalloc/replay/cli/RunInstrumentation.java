package io.devalloc.replay.cli;

import io.devalloc.replay.ReplayObserver;
import java.io.PrintWriter;

/**
 * What a launcher adds to {@code replay} to watch its allocator ({@code --metrics}, {@code --jfr FILE}): a picocli
 * mixin implementing this, added to the command by the launcher, which owns the dependencies (Micrometer, JFR) this
 * module does not take. {@link ReplayCommand} asks every mixin that implements it for an observer before the replay
 * and tells it after printing its result.
 */
public interface RunInstrumentation {

    /** Called before the run starts (to start a recording, say). */
    void start();

    /** The observer of the replay: {@link ReplayObserver#NONE} when this run watches nothing. */
    ReplayObserver replayObserver();

    /**
     * The command printed its result: print what was watched, write files. Also called when the run failed, with
     * {@code failed} true, so that a recording is not left open.
     *
     * @param out    the command's output
     * @param err    its error output
     * @param json   whether the result was printed as JSON on {@code out} (what is printed must then go to
     *               {@code err}, to keep {@code out} one JSON document)
     * @param failed whether the run failed
     */
    void finish(PrintWriter out, PrintWriter err, boolean json, boolean failed);
}
