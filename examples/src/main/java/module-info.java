/** The launcher ({@code ./devalloc}) and the example programs: the composition root that sees every module. */
module io.devalloc.examples {
    requires io.devalloc.api;
    requires io.devalloc.replay;
    requires io.devalloc.advisor;
    requires io.devalloc.sim;
    requires io.devalloc.host;
    requires io.devalloc.cuda;
    requires io.devalloc.bfc;
    requires io.devalloc.caching;
    requires io.devalloc.trace;
    requires io.devalloc.micrometer;
    requires jdk.jfr;
    requires info.picocli;
    requires com.google.guice;
    requires jakarta.inject;
    requires org.slf4j;

    opens io.devalloc.examples to info.picocli;

    uses io.devalloc.api.spi.AllocatorProvider;
    uses io.devalloc.api.spi.DeviceMemoryProvider;
}
