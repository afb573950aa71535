/**
 * CUDA devices over JCuda: providers {@code cuda} and {@code cuda-host} of the {@code DeviceMemory} port. JCuda's
 * jar has no module name of its own; it is the automatic module {@code jcuda}, named after its file.
 */
module io.devalloc.cuda {
    requires transitive io.devalloc.api;
    requires org.slf4j;
    requires jdk.management;
    requires jcuda;

    exports io.devalloc.cuda;

    provides io.devalloc.api.spi.DeviceMemoryProvider with io.devalloc.cuda.CudaDeviceMemoryProvider,
            io.devalloc.cuda.CudaHostMemoryProvider;
}
