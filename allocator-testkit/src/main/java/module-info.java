/** Contract suites every adapter and allocator passes, and the invariant checks; for tests. */
module io.devalloc.testkit {
    requires transitive io.devalloc.api;
    requires org.slf4j;
    // The heap suite reads the heap in use after a collection (MemoryMXBean).
    requires java.management;
    requires transitive org.junit.jupiter.api;
    // SharedTraceSkips, public for the ServiceLoader, implements the launcher's listener interface.
    requires transitive org.junit.platform.launcher;

    exports io.devalloc.testkit;

    provides org.junit.platform.launcher.TestExecutionListener with io.devalloc.testkit.SharedTraceSkips;
}
