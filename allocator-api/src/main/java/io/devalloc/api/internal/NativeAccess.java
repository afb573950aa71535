package io.devalloc.api.internal;

/**
 * The JVM option that grants native access ({@code java.lang.foreign} downcalls, JNI) to a module, for the hints in
 * availability reasons: on the module path a module's name, on the class path {@code ALL-UNNAMED}. Stateless.
 */
public final class NativeAccess {

    private NativeAccess() {
    }

    /**
     * {@code --enable-native-access=...} for {@code caller}'s module and, when it is named, the named modules
     * {@code alsoNamed} (a library it loads through JNI, say).
     */
    public static String option(Class<?> caller, String... alsoNamed) {
        Module module = caller.getModule();
        if (!module.isNamed()) {
            return "--enable-native-access=ALL-UNNAMED";
        }
        StringBuilder modules = new StringBuilder(module.getName());
        for (String other : alsoNamed) {
            modules.append(',').append(other);
        }
        return "--enable-native-access=" + modules;
    }
}
