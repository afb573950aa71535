/** PyTorch's caching allocators, {@code caching} and {@code caching-host}; they see nothing but the API. */
module io.devalloc.caching {
    requires transitive io.devalloc.api;
    requires org.slf4j;

    exports io.devalloc.caching;
    exports io.devalloc.caching.host;

    provides io.devalloc.api.spi.AllocatorProvider with io.devalloc.caching.CachingAllocatorProvider,
            io.devalloc.caching.host.CachingHostAllocatorProvider;
}
