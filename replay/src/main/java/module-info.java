/**
 * Trace replay: the engine, the ground-truth comparison, the JSON and HTML reports, the {@code replay} and
 * {@code compare} commands, and the bounds of a trace (its lower bound and offline plan). Allocators are reached
 * through the SPI; the simulator places segments where a trace had them.
 */
module io.devalloc.replay {
    requires transitive io.devalloc.api;
    requires transitive io.devalloc.trace;
    requires io.devalloc.sim;
    requires info.picocli;
    requires org.slf4j;

    exports io.devalloc.replay;
    exports io.devalloc.replay.bounds;
    exports io.devalloc.replay.report;
    exports io.devalloc.replay.cli;

    // picocli fills the commands' annotated fields reflectively.
    opens io.devalloc.replay.cli to info.picocli;

    uses io.devalloc.api.spi.AllocatorProvider;
    uses io.devalloc.api.spi.DeviceMemoryProvider;
}
