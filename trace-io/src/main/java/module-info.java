/**
 * Allocation traces: the vocabulary ({@code io.devalloc.trace}), one package per format, read and written, format
 * detection, and recording of live allocators. Pyrolite's pickle jar has no module name of its own; it is the
 * automatic module {@code pickle}, named after its file. The byte-level text helpers are shared with the replay only.
 */
module io.devalloc.trace {
    requires transitive io.devalloc.api;
    requires org.slf4j;
    requires pickle;

    exports io.devalloc.trace;
    exports io.devalloc.trace.detect;
    exports io.devalloc.trace.pytorch;
    exports io.devalloc.trace.rmm;
    exports io.devalloc.trace.valgrind;
    exports io.devalloc.trace.android;
    exports io.devalloc.trace.record;
    exports io.devalloc.trace.text to io.devalloc.replay, io.devalloc.advisor;
}
