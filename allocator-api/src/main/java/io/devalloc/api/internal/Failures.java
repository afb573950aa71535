package io.devalloc.api.internal;

/**
 * Keeps going past failures when releasing many things (every segment at close, say): the first failure is the one
 * thrown, later ones ride along as suppressed exceptions, so no error is lost and no resource is skipped. Also
 * what failures are called in words: a throwable's description, the devices' refusal of a handle they do not have.
 * Stateless and thread-safe.
 */
public final class Failures {

    private Failures() {
    }

    /**
     * Chains {@code next} onto {@code first}.
     *
     * @return {@code next} when there was no earlier failure, otherwise {@code first} with {@code next} suppressed
     */
    @SuppressWarnings("ReferenceEquality") // a throwable cannot suppress itself
    public static RuntimeException chain(RuntimeException first, RuntimeException next) {
        if (first == null) {
            return next;
        }
        if (next != null && next != first) {
            first.addSuppressed(next);
        }
        return first;
    }

    /**
     * What went wrong, in words for a user: the throwable's message, or, when it has none, its simple class name
     * (a {@code NullPointerException} without a message, say). Never a stack trace or a package-qualified name.
     */
    public static String describe(Throwable t) {
        String message = t.getMessage();
        return message != null && !message.isBlank() ? message.strip() : t.getClass().getSimpleName();
    }

    /**
     * The error a device throws for a stream or event it never created or already destroyed.
     *
     * @param kind   {@code "stream"} or {@code "event"}
     * @param handle the stream or event, as the message names it
     * @param device the device, as the message names it
     */
    public static IllegalArgumentException notLive(String kind, Object handle, Object device) {
        return new IllegalArgumentException(handle + " is not a live " + kind + " of " + device
                + " (never created by it, or already destroyed)");
    }
}
