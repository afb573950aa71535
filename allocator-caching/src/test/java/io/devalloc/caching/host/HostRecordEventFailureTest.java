package io.devalloc.caching.host;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.devalloc.api.device.DeviceStream;
import io.devalloc.api.error.InvalidFreeException;
import io.devalloc.api.units.ByteSize;
import io.devalloc.sim.SimulatedDevice;
import org.junit.jupiter.api.Test;

/** Regression (found in review): a block whose recorded stream cannot take an event is never stranded. */
class HostRecordEventFailureTest {

    @Test
    void freeAfterTheRecordedStreamIsGoneSynchronizesAndFreesTheBlock() {
        try (SimulatedDevice device = SimulatedDevice.ofCapacity(ByteSize.GiB);
             HostCachingAllocator a = new CachingHostAllocatorProvider().create(device, "")) {
            DeviceStream s = device.createStream();
            long p = a.malloc(40_960, DeviceStream.DEFAULT);
            assertTrue(a.recordEvent(p, s));
            device.destroyStream(s);
            a.free(p);
            assertEquals(0, a.stats().activeAllocations());
            assertThrows(InvalidFreeException.class, () -> a.free(p), "a second free is a clean error");
            assertEquals(p, a.malloc(40_960, DeviceStream.DEFAULT), "the block is reusable at once");
        }
    }
}
