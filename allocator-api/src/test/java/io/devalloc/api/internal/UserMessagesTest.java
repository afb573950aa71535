package io.devalloc.api.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;

import org.junit.jupiter.api.Test;

/** The helpers that turn failures and module facts into words for availability reasons and messages. */
class UserMessagesTest {

    @Test
    void describeGivesTheMessageWithoutTheClassName() {
        assertEquals("libcuda.so.1: cannot open shared object file",
                Failures.describe(new UnsatisfiedLinkError(" libcuda.so.1: cannot open shared object file ")));
    }

    @Test
    void describeFallsBackToTheSimpleNameWhenThereIsNoMessage() {
        assertEquals("NullPointerException", Failures.describe(new NullPointerException()));
        assertEquals("IllegalStateException", Failures.describe(new IllegalStateException("  ")));
    }

    @Test
    void nativeAccessNamesTheModuleOrAllUnnamed() {
        // Tests run on the class path: devalloc's classes are in the unnamed module.
        assertEquals("--enable-native-access=ALL-UNNAMED", NativeAccess.option(NativeAccess.class, "jcuda"));
        // A class of a named module (java.base) shows the module-path form, with the extra modules.
        assertEquals("--enable-native-access=java.base,jcuda", NativeAccess.option(String.class, "jcuda"));
        assertEquals("--enable-native-access=java.base", NativeAccess.option(String.class));
    }
}
