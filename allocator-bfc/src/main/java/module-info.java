/** TensorFlow's best-fit-with-coalescing allocator, {@code bfc}; it sees nothing but the API. */
module io.devalloc.bfc {
    requires transitive io.devalloc.api;
    requires org.slf4j;

    exports io.devalloc.bfc;

    provides io.devalloc.api.spi.AllocatorProvider with io.devalloc.bfc.BfcAllocatorProvider;
}
