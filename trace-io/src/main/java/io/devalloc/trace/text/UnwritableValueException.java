package io.devalloc.trace.text;

import java.util.ArrayDeque;

/**
 * A value that a {@link SnapshotTreeVisitor} cannot write, thrown from where it is found. {@link SnapshotTreeWalker}
 * adds each enclosing container's path segment on the way out, so the happy path builds no path strings, and turns
 * it into the {@link IllegalArgumentException} the writers throw. Internal to trace-io's writers (this package is
 * exported only to the replay and the advisor).
 */
public final class UnwritableValueException extends RuntimeException {
    private static final long serialVersionUID = 1L;
    private final ArrayDeque<String> path = new ArrayDeque<>();

    /** {@code problem} says what is wrong with the value, e.g. {@code "unsupported type java.lang.Object"}. */
    public UnwritableValueException(String problem) {
        super(problem, null, false, false);
    }

    UnwritableValueException at(String segment) {
        path.addFirst(segment);
        return this;
    }

    /** {@code .key} where the key is a Java identifier, else {@code ["key"]} with quotes and backslashes escaped. */
    static String keySegment(String key) {
        if (!key.isEmpty() && Character.isJavaIdentifierStart(key.charAt(0))
                && key.chars().allMatch(Character::isJavaIdentifierPart)) {
            return "." + key;
        }
        return "[\"" + key.replace("\\", "\\\\").replace("\"", "\\\"") + "\"]";
    }

    /** The writer's exception: {@code refusal}, the problem and the path from the root, {@code $...}. */
    IllegalArgumentException toIllegalArgument(String refusal) {
        return new IllegalArgumentException(refusal + ": " + getMessage() + " at $" + String.join("", path));
    }
}
