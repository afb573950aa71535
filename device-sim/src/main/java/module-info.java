/** A simulated GPU: provider {@code sim} of the {@code DeviceMemory} port. */
module io.devalloc.sim {
    requires transitive io.devalloc.api;
    requires org.slf4j;

    exports io.devalloc.sim;

    provides io.devalloc.api.spi.DeviceMemoryProvider with io.devalloc.sim.SimulatedDeviceProvider;
}
