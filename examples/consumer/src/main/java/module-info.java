/**
 * A consumer of devalloc on the module path: the API, and the caching allocator's own interface for
 * {@code emptyCache()}. The simulated device is found through {@code ServiceLoader} (service binding), and Guice,
 * which the API reads only with {@code requires static}, is not needed.
 */
module com.example.consumer {
    requires io.devalloc.caching;
}
