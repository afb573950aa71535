/**
 * The advisor ({@code devalloc advise}): replays one trace under many allocator settings, device by device, finds what
 * each setting costs on the user's card and how small a device it can be squeezed into, and recommends one only when
 * the change is worth it, with a report that says how far the figures can be trusted. docs/advisor.md is the user's
 * description; this is the map of the code.
 *
 * <p><b>Devices.</b> A trace file is read once, device by device ({@link io.devalloc.replay.TraceFile}): a PyTorch
 * snapshot of a job on several GPUs holds one history per device, and each device with a history is its own job
 * ({@link io.devalloc.advisor.Advisor#advise(io.devalloc.replay.TraceFile, Advisor.Options,
 * io.devalloc.replay.ReplayProgress)} gives a {@link io.devalloc.advisor.JobAdvice} of one
 * {@link io.devalloc.advisor.Advice} per device). A device with only its end state gets that state, restored, and no
 * verdict.
 *
 * <p><b>Grids are data.</b> A grid is a list of configuration texts, each exactly what {@code --config} takes
 * ({@link io.devalloc.advisor.Grid}): the allocator provider's
 * {@link io.devalloc.api.spi.AllocatorProvider#defaultGrid(long)} or a file ({@link io.devalloc.advisor.Grids}).
 *
 * <p><b>Trust first.</b> The baseline is the setting the trace was recorded with (a snapshot's
 * {@code allocator_settings}), else the defaults. It is replayed exactly as
 * {@code devalloc replay --warm --empty-cache-at-segment-free} replays it: from the recorded start state, with the
 * program's {@code empty_cache()} calls, and the allocator's own flushes and out-of-memory errors reproduced where the
 * trace shows them ({@link io.devalloc.replay.CacheFlushes}). {@code MATCH} needs a recorded allocator decision.
 *
 * <p><b>What-if runs</b> start from an empty allocator (a warm state recorded under one setting cannot be restored
 * under another), replay only the program's {@code empty_cache()} calls and ask again for the requests that failed.
 * Each setting is replayed on the unlimited device ({@value io.devalloc.advisor.Advisor#UNLIMITED_DEVICE}), on the
 * card ({@link io.devalloc.advisor.CardCapacity}: {@code --capacity}, or the capacity the trace tells) and searched
 * for its smallest capacity by bisection to {@link io.devalloc.advisor.Advisor#GRANULARITY}
 * ({@link io.devalloc.advisor.SettingResult}). Every provider is used without the environment, so a
 * {@code PYTORCH_CUDA_ALLOC_CONF} in the shell changes no setting.
 *
 * <p><b>Ranking and recommendation</b> ({@link io.devalloc.advisor.Ranking}): by the
 * {@link io.devalloc.advisor.Objective}, on the card first (no out-of-memory error, fewest flushes, lowest peak
 * reserved) unless the objective is the smallest capacity; never a setting that holds more of the card than the
 * recorded one; a change only when it avoids a failure, flushes less, or saves the
 * {@link io.devalloc.advisor.MinSaving} margin; what it costs elsewhere said in words
 * ({@link io.devalloc.advisor.Recommendation#costs()}).
 *
 * <p><b>Parallelism and memory.</b> Each device's trace is a {@link io.devalloc.replay.CompactTrace}
 * ({@value io.devalloc.replay.CompactTrace#BYTES_PER_EVENT} bytes per event in primitive columns), replayed from
 * memory; settings run on {@code --threads} threads, each replay on its own simulated device and allocator.
 */
package io.devalloc.advisor;
