package io.devalloc.testkit;

import java.util.List;
import java.util.Locale;

/**
 * What one {@link ModelRun} did and found.
 *
 * @param configuration    the allocator and configuration, for the summary line
 * @param operations       operations performed
 * @param checks           invariant checks made (several per operation)
 * @param violations       checks that failed, and operations that threw what the contract does not allow
 * @param faultsInjected   armed device faults that fired
 * @param faultsSurvived   fired faults after which every check passed
 * @param outOfMemory      allocations refused with an out-of-memory error
 * @param badFreesRefused  bad frees (double, foreign, interior, never handed out) refused as documented
 * @param firstViolations  the first few violations, each with its operation number
 */
public record RunReport(String configuration, long operations, long checks, long violations, long faultsInjected,
        long faultsSurvived, long outOfMemory, long badFreesRefused, List<String> firstViolations) {

    /** Copies the list. */
    public RunReport {
        firstViolations = List.copyOf(firstViolations);
    }

    /** One line with every figure. */
    public String summary() {
        return String.format(Locale.ROOT,
                "%s: %,d operations, %,d checks, %,d violations, %,d faults injected, %,d survived, %,d out of memory, "
                        + "%,d bad frees refused",
                configuration, operations, checks, violations, faultsInjected, faultsSurvived, outOfMemory,
                badFreesRefused);
    }

    /** The summary and the first violations, one a line. */
    public String details() {
        StringBuilder b = new StringBuilder(summary());
        for (String v : firstViolations) {
            b.append(System.lineSeparator()).append("  ").append(v);
        }
        return b.toString();
    }
}
