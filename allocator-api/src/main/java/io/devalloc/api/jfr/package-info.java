/**
 * devalloc's JDK Flight Recorder events. Turned on per allocator with
 * {@code DeviceAllocators.builder().name("trainer").jfrEvents(true)} or, without code, with
 * {@code -Ddevalloc.jfr=true} (environment {@code DEVALLOC_JFR=true}; see
 * {@link io.devalloc.api.observe.ObservabilitySettings}); then recorded by any running recording, e.g.
 * {@code java -XX:StartFlightRecording=filename=rec.jfr ...}, and read with
 * {@code jfr print --events io.devalloc.DeviceAlloc rec.jfr}.
 *
 * <table class="striped">
 * <caption>Events (category devalloc)</caption>
 * <tr><th>Name</th><th>When</th><th>Fields beside allocator and device</th></tr>
 * <tr><td>{@code io.devalloc.DeviceAlloc}</td><td>a device malloc</td>
 *     <td>address, size, succeeded, callDuration</td></tr>
 * <tr><td>{@code io.devalloc.DeviceFree}</td><td>a device free</td><td>the same</td></tr>
 * <tr><td>{@code io.devalloc.DeviceMap}</td><td>a virtual-memory map</td><td>the same</td></tr>
 * <tr><td>{@code io.devalloc.DeviceUnmap}</td><td>a virtual-memory unmap</td><td>the same</td></tr>
 * <tr><td>{@code io.devalloc.OutOfMemory}</td><td>an allocation failed for want of memory</td>
 *     <td>requestedSize, reason, deviceFree, reserved, allocated, message</td></tr>
 * <tr><td>{@code io.devalloc.AllocationRetry}</td><td>the allocator tries an allocation again</td>
 *     <td>requestedSize, attempt, cause</td></tr>
 * <tr><td>{@code io.devalloc.CacheRelease}</td><td>cached memory given back to the device</td>
 *     <td>releasedSize, callDuration</td></tr>
 * <tr><td>{@code io.devalloc.MemoryUsage}</td><td>every period (1 s by default), one per pool</td>
 *     <td>pool, reserved, allocated, active, requested, inactiveSplit</td></tr>
 * </table>
 *
 * <p>Sizes are {@code @DataAmount(BYTES)} and addresses {@code @MemoryAddress}, so {@code jfr print} and JDK
 * Mission Control show them as such. {@code allocator} is the name the user gave (stable across runs, never a hash
 * code), or the allocator's kind when none was given; {@code device} is the device's id ({@code cuda:0}).
 *
 * <p><b>Durations.</b> The metrics SPI tells a listener of a call after it returned, with the nanoseconds it took
 * ({@link io.devalloc.api.observe.AllocatorListener#deviceCall}); JFR's public API has no way to give an event a
 * start time or a duration measured elsewhere ({@code begin()} and {@code end()} read JFR's own clock, and must run
 * around the call). So each event is written when the listener is told, with a JFR duration of 0, and the call's
 * duration is the field {@code callDuration} ({@code @Timespan(NANOSECONDS)}), as hikari-jfr records HikariCP's
 * acquisition times. Two things follow: the event's start time is the end of the call, and a {@code threshold}
 * setting above 0 (which JFR compares with the event's own duration) would drop every event: filter on
 * {@code callDuration} when reading instead.
 *
 * <p><b>Cost.</b> With the setting off, nothing is installed: no listener, no device wrapper, no hook. With it on
 * and no recording running (or the events disabled in the recording's settings), each device call, out-of-memory
 * error, retry and release costs the listener's check ({@link jdk.jfr.Event#shouldCommit()}: a flag read) and the
 * timing the metrics SPI does anyway; the cached allocate/free path is never touched. The periodic hook runs only
 * while a recording has {@code io.devalloc.MemoryUsage} enabled. The device-call and out-of-memory events take a
 * stack trace (who caused the {@code cudaMalloc}); turn it off with {@code io.devalloc.DeviceAlloc#stackTrace=false}
 * in the recording's settings when device calls are frequent ({@code direct} calls the device on every malloc).
 *
 * <p><b>Lifetime.</b> The periodic hook ({@link jdk.jfr.FlightRecorder#addPeriodicEvent}) holds the allocator; it is
 * removed when the allocator is closed, so a closed allocator is neither read nor kept alive by JFR. An allocator
 * that is never closed keeps its hook, as it keeps its device memory.
 *
 * <p><b>Modules.</b> The event classes are package-private in this package; JFR makes them readable to itself when it
 * registers them (it adds the exports and opens it needs to {@code jdk.jfr} at run time), so nothing but
 * {@link io.devalloc.api.jfr.JfrEvents} is public (its {@code listener} is the events' listener).
 */
package io.devalloc.api.jfr;

