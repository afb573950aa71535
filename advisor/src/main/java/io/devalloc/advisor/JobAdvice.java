package io.devalloc.advisor;

import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

/**
 * {@code devalloc advise} on a whole trace file: one {@link Advice} per device it holds (a PyTorch snapshot of a job
 * on several GPUs has one history per device; any other format has one), each its own job with its own baseline,
 * trust line, grid and capacity.
 *
 * @param trace         the file's name
 * @param allocator     the allocator's name
 * @param objective     what the recommendations minimise
 * @param devices       the advice for each device, by index: those with a history, and those with only their end
 *                      state ({@link Advice#hasHistory()} false)
 * @param unusedDevices the devices the snapshot lists without trace entries or segments (GPUs the process could see
 *                      and never used)
 * @param runs          the replays made in all
 * @param threads       the threads they ran on
 */
public record JobAdvice(String trace, String allocator, Objective objective, List<Advice> devices,
                        List<Integer> unusedDevices, long runs, int threads) {

    public JobAdvice {
        Objects.requireNonNull(trace, "trace");
        Objects.requireNonNull(allocator, "allocator");
        Objects.requireNonNull(objective, "objective");
        devices = List.copyOf(devices);
        unusedDevices = List.copyOf(unusedDevices);
        if (devices.isEmpty()) {
            throw new IllegalArgumentException("a job has at least one device");
        }
    }

    /** The advice on a trace of one device, as a job (for reports that take a job). */
    public static JobAdvice of(Advice advice) {
        return new JobAdvice(advice.trace(), advice.allocator(), advice.objective(), List.of(advice), List.of(),
                advice.runs(), advice.threads());
    }

    /** The devices with a recorded history. */
    public List<Advice> withHistory() {
        return byHistory(true);
    }

    /** The devices with only their end state. */
    public List<Advice> endStateOnly() {
        return byHistory(false);
    }

    private List<Advice> byHistory(boolean history) {
        List<Advice> found = new ArrayList<>();
        for (Advice a : devices) {
            if (a.hasHistory() == history) {
                found.add(a);
            }
        }
        return found;
    }

    /**
     * The device that needs the most memory ({@link Advice#neededBytes()}: a device that ran out of memory needs at
     * least what the best setting needs to get past its failures, not the peak it reached before it failed) among the
     * devices with a history (among all when none has one); the first of equals.
     */
    public Advice mostMemory() {
        List<Advice> pool = withHistory().isEmpty() ? devices : withHistory();
        Advice most = pool.getFirst();
        for (Advice a : pool) {
            if (a.neededBytes() > most.neededBytes()) {
                most = a;
            }
        }
        return most;
    }

    /** The advice of the only device, for a trace of one device. */
    public Advice only() {
        if (devices.size() != 1) {
            throw new IllegalStateException(trace + " has " + devices.size() + " devices");
        }
        return devices.getFirst();
    }
}
