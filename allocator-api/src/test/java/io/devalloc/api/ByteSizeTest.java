package io.devalloc.api;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.devalloc.api.units.ByteSize;
import org.junit.jupiter.api.Test;

class ByteSizeTest {

    @Test
    void parsesBinaryAndDecimalUnits() {
        assertEquals(80L << 30, ByteSize.parse("80GiB"));
        assertEquals(80L << 30, ByteSize.parse("80g"));
        assertEquals(512L << 20, ByteSize.parse(" 512 MiB "));
        assertEquals(4096, ByteSize.parse("4096"));
        assertEquals(4096, ByteSize.parse("4096B"));
        assertEquals(1_500_000_000L, ByteSize.parse("1.5GB"));
        assertEquals(3L << 29, ByteSize.parse("1.5GiB"));
        assertEquals(1L << 40, ByteSize.parse("1TiB"));
    }

    @Test
    void refusesWhatIsNotASize() {
        for (String bad : new String[] {"", " ", "GiB", "12XB", "-1GiB", "1.2.3", "1.", "0.3B", "9999999999TiB",
                "abc"}) {
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> ByteSize.parse(bad), bad);
            assertTrue(e.getMessage() != null && !e.getMessage().isBlank(), bad);
        }
    }

    @Test
    void roundUpNeverOverflows() {
        assertEquals(512, ByteSize.roundUp(1, 512));
        assertEquals(512, ByteSize.roundUp(512, 512));
        assertEquals(1024, ByteSize.roundUp(513, 512));
        assertEquals(-1, ByteSize.roundUp(Long.MAX_VALUE, 512));
        assertEquals(-1, ByteSize.roundUp(Long.MAX_VALUE - 510, 512));
        assertEquals(Long.MAX_VALUE - 511, ByteSize.roundUp(Long.MAX_VALUE - 511, 512));
        assertThrows(IllegalArgumentException.class, () -> ByteSize.roundUp(1, 384));
    }

    @Test
    void formatsForPeople() {
        assertEquals("0 B", ByteSize.format(0));
        assertEquals("1023 B", ByteSize.format(1023));
        assertEquals("1.50 KiB", ByteSize.format(1536));
        assertEquals("80.00 GiB", ByteSize.format(80L << 30));
        assertEquals("8.00 EiB", ByteSize.format(Long.MAX_VALUE));
        assertEquals("0x7f00", ByteSize.hex(0x7f00));
    }
}
