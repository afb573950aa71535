package io.devalloc.benchmarks;

import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Warmup;

/**
 * The run settings of the benchmarks that time one short operation: its average time in nanoseconds, three warm-up
 * and five measured iterations of a second, one fork. JMH reads these annotations from a benchmark's superclass; an
 * annotation on the benchmark itself overrides the one here.
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
// JMH 1.37 calls sun.misc.Unsafe::objectFieldOffset, which JDK 24+ warns about; the flag keeps the forks quiet.
@Fork(value = 1, jvmArgsAppend = "--sun-misc-unsafe-memory-access=allow")
public abstract class NanosecondBenchmark {
}
