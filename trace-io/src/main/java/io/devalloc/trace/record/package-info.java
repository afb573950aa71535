/**
 * Recording: {@link io.devalloc.trace.record.RecordingAllocator} decorates any
 * {@link io.devalloc.api.DeviceAllocator} and writes every allocation, failure, free and {@code recordStream} to a
 * {@link io.devalloc.trace.TraceRecorder}, so that a workload captured in production can be replayed later
 * through any allocator and configuration.
 *
 * <p>Two recorders are built in: {@link io.devalloc.trace.rmm.RmmCsvRecorder} writes RMM's replay log
 * ({@code Thread,Time,Action,Pointer,Size,Stream}, what RMM's {@code logging_resource_adaptor} writes and its
 * {@code REPLAY_BENCH} reads), and {@link io.devalloc.trace.pytorch.PyTorchCsvRecorder} writes the project's CSV form
 * of a PyTorch memory trace ({@code seq,action,addr,size,stream,time_us}); both are read by devalloc's
 * {@code replay}. The easiest way in is
 * {@link io.devalloc.trace.record.RecordingAllocator#wrap(io.devalloc.api.DeviceAllocator, java.nio.file.Path,
 * io.devalloc.trace.record.RecordingAllocator.Format)} or, when building,
 * {@code DeviceAllocators.builder()...decorate(RecordingAllocator.to(file, format))}.
 */
package io.devalloc.trace.record;
