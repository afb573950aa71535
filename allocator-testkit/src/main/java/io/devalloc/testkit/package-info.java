/**
 * Contract suites every module reuses in its tests: {@link io.devalloc.testkit.DeviceMemoryContract} for device
 * adapters and {@link io.devalloc.testkit.DeviceAllocatorContract} for allocators (no overlap under long random
 * and concurrent workloads, consistent stats and snapshots, bad input refused without change, close releases
 * everything), plus {@link io.devalloc.testkit.AllocatorInvariants}, checked during every workload. Subclass a
 * contract, supply the device (and allocator), and the whole suite runs.
 */
package io.devalloc.testkit;
