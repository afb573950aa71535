/**
 * Host memory through {@code java.lang.foreign}: providers {@code host} and {@code pinned-host} of the
 * {@code DeviceMemory} port. On the module path it needs {@code --enable-native-access=io.devalloc.host}.
 */
module io.devalloc.host {
    requires transitive io.devalloc.api;
    requires org.slf4j;
    requires jdk.management;

    exports io.devalloc.host;

    provides io.devalloc.api.spi.DeviceMemoryProvider with io.devalloc.host.HostMemoryProvider,
            io.devalloc.host.PinnedHostMemoryProvider;
}
