/**
 * Micrometer meters for devalloc's allocators: {@link io.devalloc.micrometer.DevallocMetrics}, a binder with memory
 * gauges per pool and an {@link io.devalloc.api.observe.AllocatorListener} that counts and times device calls,
 * out-of-memory errors, retries and cache releases. Optional: an application without Micrometer does not need it.
 */
// micrometer-core is an automatic module (Automatic-Module-Name micrometer.core), which javac warns about when
// required transitively; transitively it must be, since DevallocMetrics' API takes and implements its types.
@SuppressWarnings("requires-transitive-automatic")
module io.devalloc.micrometer {
    requires transitive io.devalloc.api;
    requires transitive micrometer.core;
    requires org.slf4j;

    exports io.devalloc.micrometer;
}
