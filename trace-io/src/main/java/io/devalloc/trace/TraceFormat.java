package io.devalloc.trace;

/** The trace formats devalloc reads. */
public enum TraceFormat {
    /** {@code torch.cuda.memory._dump_snapshot()}'s pickle. */
    PYTORCH_PICKLE,
    /** The CSV form of a PyTorch snapshot ({@code seq,action,addr,size,stream,time_us}). */
    PYTORCH_CSV,
    /** RMM's replay log ({@code Thread,Time,Action,Pointer,Size,Stream}). */
    RMM_CSV,
    /** valgrind-style {@code Alloc(size),} / {@code Free(k),} lines. */
    VALGRIND,
    /** Android's {@code memory_replay} text ({@code tid: malloc ptr size} ...), plain or zipped. */
    ANDROID_MEMORY_REPLAY
}
