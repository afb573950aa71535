package io.devalloc.cuda;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.mockito.ArgumentMatchers.anyInt;
import static org.mockito.Mockito.doCallRealMethod;
import static org.mockito.Mockito.doReturn;
import static org.mockito.Mockito.spy;

import io.devalloc.api.device.DeviceEvent;
import io.devalloc.api.device.DeviceStream;
import io.devalloc.api.error.DeviceException;
import org.junit.jupiter.api.Test;

/** Regression (found in review): a failed cudaSetDevice during destroy must not make the handle leak. */
class CudaDestroyFailureTest {

    @Test
    void aStreamOrEventWhoseDestroyFailedCanBeDestroyedAgainAndCloseCleansUp() {
        FakeCuda fake = new FakeCuda(1, 1L << 30);
        CudaApi api = spy(fake);
        CudaDeviceMemory d = CudaDeviceMemory.gpu(api, 0, false);
        DeviceStream s = d.createStream();
        DeviceEvent e = d.createEvent();
        DeviceStream kept = d.createStream();
        doReturn(CudaApi.ERROR_INVALID_DEVICE).when(api).setDevice(anyInt());
        assertThrows(DeviceException.class, () -> d.destroyStream(s));
        assertThrows(DeviceException.class, () -> d.destroyEvent(e));
        doCallRealMethod().when(api).setDevice(anyInt());
        d.destroyStream(s);
        d.destroyEvent(e);
        assertEquals(1, fake.liveStreamsAndEvents(), "only the stream never destroyed is left");
        d.close();
        assertEquals(0, fake.liveStreamsAndEvents(), "close() destroyed the rest");
    }
}
