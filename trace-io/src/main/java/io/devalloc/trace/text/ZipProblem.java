package io.devalloc.trace.text;

import io.devalloc.api.config.UntrustedText;
import java.io.IOException;

/**
 * What is wrong with a zip file, in words a message can quote: the JDK's zip messages name its classes
 * ({@code ZipFile invalid LOC header (bad signature)}), and an entry cut short often comes without a message at all.
 * Stateless.
 */
public final class ZipProblem {

    private ZipProblem() {
    }

    /** The problem {@code e} reports, without the JDK's class names, bounded and with control characters escaped. */
    public static String describe(IOException e) {
        String message = e.getMessage();
        if (message == null || message.isBlank()) {
            return "an entry ends before its data does";
        }
        String m = message.strip();
        for (String jdkName : new String[] {"ZipFile ", "ZipInputStream ", "ZipEntry "}) {
            if (m.startsWith(jdkName)) {
                m = m.substring(jdkName.length());
            }
        }
        return UntrustedText.excerpt(m);
    }
}
