/**
 * devalloc's API: what applications call ({@code io.devalloc.api} and its {@code error}, {@code snapshot},
 * {@code stats} and {@code units} packages, and the optional Guice module), the port and SPI that devices and
 * allocators implement ({@code device}, {@code spi}, {@code config}), the {@code direct} allocator, the internal
 * package shared by the modules that implement devices and allocators, and primitive collections shared by
 * devalloc's own modules.
 */
module io.devalloc.api {
    requires org.slf4j;
    requires static com.google.guice;
    // JFR events and the JMX bean (io.devalloc.api.jfr, io.devalloc.api.jmx): both modules are in every JDK image.
    // AllocatorMXBeans.objectName returns a javax.management.ObjectName, so readers of the API read it too.
    requires jdk.jfr;
    requires transitive java.management;

    exports io.devalloc.api;
    exports io.devalloc.api.error;
    exports io.devalloc.api.snapshot;
    exports io.devalloc.api.stats;
    exports io.devalloc.api.observe;
    exports io.devalloc.api.units;
    exports io.devalloc.api.device;
    exports io.devalloc.api.spi;
    exports io.devalloc.api.config;
    exports io.devalloc.api.direct;
    // The event classes are package-private; JFR adds the access it needs to them when it registers them.
    exports io.devalloc.api.jfr;
    // java.management calls the public AllocatorMXBean interface, so the package is exported.
    exports io.devalloc.api.jmx;
    exports io.devalloc.guice;
    // What the modules that implement devices and allocators share; tools use the public API and the SPI.
    exports io.devalloc.api.internal to io.devalloc.sim, io.devalloc.host, io.devalloc.cuda, io.devalloc.bfc,
            io.devalloc.caching;
    // Primitive collections for hot paths: devalloc's modules share them; nothing here is an API.
    exports io.devalloc.api.collect to io.devalloc.sim, io.devalloc.host, io.devalloc.bfc, io.devalloc.caching,
            io.devalloc.trace, io.devalloc.replay;

    // Guice reads the module's @Provides methods reflectively.
    opens io.devalloc.guice to com.google.guice;

    uses io.devalloc.api.spi.AllocatorProvider;
    uses io.devalloc.api.spi.DeviceMemoryProvider;

    provides io.devalloc.api.spi.AllocatorProvider with io.devalloc.api.direct.DirectAllocatorProvider;
}
