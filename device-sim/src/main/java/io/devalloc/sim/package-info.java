/**
 * The simulated GPU ({@link io.devalloc.sim.SimulatedDevice}, provider {@code sim}): GPU-scale capacity and
 * addresses without memory behind them, so that allocators can be tested, replayed and benchmarked at 80 GiB on a
 * laptop.
 *
 * <h2>Design</h2>
 * <ul>
 *   <li>An address space (64 TiB below {@code 0x7f0000000000} by default) kept as a sorted set of free ranges (a
 *       B-tree over primitive arrays, keyed by start and searchable by length: O(log n) per malloc or free).
 *       New ranges come from the top of the highest free range that fits, as the CUDA driver did in the recorded
 *       traces (best-fit ties go to the lowest address, so placement decides which block is reused), or bottom-up,
 *       or at addresses a test scripts.</li>
 *   <li>Capacity accounting only: bytes in use against the capacity and an optional injected limit.</li>
 *   <li>Fault injection per kind of call ({@link io.devalloc.sim.DeviceCall}: malloc, free, reserve, map, unmap,
 *       release, event creation and recording, waits): fail the n-th call of a kind, fail the next n, throw a device
 *       error; an armed fault fires only on its own kind; a failed call changes nothing but a failed unmap, whose
 *       range is unmapped afterwards (the port's rule). Also a cap on the bytes.</li>
 *   <li>Streams and events are sequence numbers per stream; events complete immediately or when the test (or a
 *       synchronize) says so.</li>
 *   <li>Virtual memory: reservations from the same address space, 2 MiB granules tracked in a bit set per
 *       reservation, with a second bit set of the granules where a map's pieces start, so that an unmap cutting a
 *       piece is refused as on CUDA (where a piece is one physical handle); mapped bytes counted against the
 *       capacity.</li>
 * </ul>
 * Everything is deterministic and every method synchronises on the device.
 */
package io.devalloc.sim;
