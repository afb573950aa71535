/**
 * Contract suites every module reuses in its tests: {@link io.devalloc.testkit.DeviceMemoryContract} for device
 * adapters and {@link io.devalloc.testkit.DeviceAllocatorContract} for allocators (no overlap under long random
 * and concurrent workloads, consistent stats and snapshots, bad input refused without change, close releases
 * everything), plus {@link io.devalloc.testkit.AllocatorInvariants}, checked during every workload; and
 * {@link io.devalloc.testkit.AllocatorReliabilityContract}, the reliability suites (a model-based long run
 * ({@link io.devalloc.testkit.ModelRun}), fault injection through a {@link io.devalloc.testkit.DeviceProbe}, races
 * against close and the cache operations, a flat heap). Subclass a contract, supply the device (and allocator), and
 * the whole suite runs.
 */
package io.devalloc.testkit;
