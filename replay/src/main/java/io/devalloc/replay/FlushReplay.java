package io.devalloc.replay;

/**
 * How one replay applied its trace's cache flushes and out-of-memory rows (see {@link EventDispatch#start}).
 *
 * @param trace                the trace's flushes told apart and the capacity it tells; null when the replay could
 *                             not tell (one streaming pass, which sees the trace once)
 * @param reproducedFlushes    the recorded allocator's own flushes reproduced (a warm replay): the device refused
 *                             the malloc that failed in the recording until as many segments were freed
 * @param reproducedOoms       the trace's out-of-memory errors that failed here too (a warm replay)
 * @param oomsNotReproduced    the trace's out-of-memory errors whose request this replay's allocator served from its
 *                             cache (a warm replay): the replay and the recording parted there
 * @param failedRequestsServed requests of the trace's {@code oom} rows that this replay served (not warm): freed at
 *                             once, as the program never had them
 */
public record FlushReplay(CacheFlushes trace, long reproducedFlushes, long reproducedOoms, long oomsNotReproduced,
                          long failedRequestsServed) {

    /** A replay that had no flushes and no out-of-memory rows to apply, or a result made before they were. */
    public static final FlushReplay NONE = new FlushReplay(null, 0, 0, 0, 0);
}
