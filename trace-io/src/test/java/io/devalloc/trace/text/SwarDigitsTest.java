package io.devalloc.trace.text;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class SwarDigitsTest {

    /** Bytes that end a number: separators, the neighbours of '0'..'9', and bytes whose +6 carries. */
    private static final byte[] ENDS = {',', '\n', '\r', '/', ':', 0, ' ', '-', '.', 'x', (byte) 0xFA, (byte) 0xFF,
        (byte) 0x80, (byte) 0xC3, 0x7F, '`', 'z'};

    /** The digits' value and end as a plain loop reads them, or -1 when there are none or more than 18. */
    private static long[] reference(byte[] b, int from) {
        int i = from;
        long v = 0;
        while (i < b.length && b[i] >= '0' && b[i] <= '9') {
            v = v * 10 + (b[i] - '0');
            i++;
        }
        int n = i - from;
        return n == 0 || n > SwarDigits.MAX_DIGITS ? new long[] {-1, 0} : new long[] {i, v};
    }

    @Test
    void readsEveryLengthOfNumberFollowedByAnyByteAsAPlainLoopDoes() {
        SplittableRandom random = new SplittableRandom(42);
        SwarDigits digits = new SwarDigits();
        for (int round = 0; round < 200_000; round++) {
            byte[] b = new byte[48];
            int from = random.nextInt(8);
            for (int i = 0; i < b.length; i++) {
                b[i] = (byte) random.nextInt(256);
            }
            int length = random.nextInt(22);
            for (int i = 0; i < length; i++) {
                b[from + i] = (byte) ('0' + random.nextInt(10));
            }
            b[from + length] = ENDS[random.nextInt(ENDS.length)];
            long[] expected = reference(b, from);
            int end = digits.read(b, from);
            assertEquals(expected[0], end, () -> "end of a " + length + "-digit number");
            assertEquals(expected[0], SwarDigits.skip(b, from), () -> "skip of a " + length + "-digit number");
            if (end >= 0) {
                assertEquals(expected[1], digits.value(), () -> "value of a " + length + "-digit number");
            }
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"0,", "7,", "00000000,", "99999999,", "100000000,", "123456789012345678,",
        "999999999999999999,", "139800000000000,", "1763324225770003\n"})
    void readsTheEdges(String text) {
        byte[] b = Arrays.copyOf(text.getBytes(StandardCharsets.US_ASCII), 40);
        SwarDigits digits = new SwarDigits();
        int n = text.length() - 1;
        assertEquals(n, digits.read(b, 0));
        assertEquals(Long.parseLong(text.substring(0, n)), digits.value());
        assertEquals(n, SwarDigits.skip(b, 0));
    }

    @ParameterizedTest
    @ValueSource(strings = {",", "1234567890123456789,", "12345678901234567890123,"})
    void refusesNoDigitsAndMoreThanEighteen(String text) {
        byte[] b = Arrays.copyOf(text.getBytes(StandardCharsets.US_ASCII), 48);
        assertEquals(-1, new SwarDigits().read(b, 0));
        assertEquals(-1, SwarDigits.skip(b, 0));
    }
}
