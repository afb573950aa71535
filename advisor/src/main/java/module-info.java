/**
 * The advisor: replays one trace under a grid of allocator settings, finds the smallest device each setting runs
 * on, recommends one, and reports it on the terminal, as JSON and as an HTML page ({@code devalloc advise}). It
 * drives the replay engine of {@code io.devalloc.replay} and reaches allocators through the SPI only.
 */
module io.devalloc.advisor {
    requires transitive io.devalloc.api;
    requires transitive io.devalloc.trace;
    requires transitive io.devalloc.replay;
    requires info.picocli;
    requires org.slf4j;

    exports io.devalloc.advisor;
    exports io.devalloc.advisor.report;
    exports io.devalloc.advisor.cli;

    // picocli fills the command's annotated fields reflectively.
    opens io.devalloc.advisor.cli to info.picocli;

    uses io.devalloc.api.spi.AllocatorProvider;
    uses io.devalloc.api.spi.DeviceMemoryProvider;
}
