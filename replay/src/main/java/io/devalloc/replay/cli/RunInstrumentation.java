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

    /**
     * Called before the run starts (to start a recording, say). Checks the files it will write
     * ({@link OutputFiles#checkWritable}) first.
     *
     * @throws IllegalArgumentException when a file it was asked to write cannot be written
     */
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
     * @return whether every file it was asked to write was written; when one was not, it has said so on
     *         {@code err} (and where what it recorded was kept) rather than thrown, so that the command still
     *         prints its results and exits with {@link ExitCodes#OUTPUT}
     */
    boolean finish(PrintWriter out, PrintWriter err, boolean json, boolean failed);
}
