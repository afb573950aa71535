package io.devalloc.bfc;

import io.devalloc.api.device.DeviceStream;
import io.devalloc.sim.DeviceCall;
import io.devalloc.sim.SimulatedDevice;
import io.devalloc.testkit.DeviceProbe;
import java.util.ArrayList;
import java.util.List;

/** The simulator's books and faults for the testkit's reliability suites: every {@link DeviceCall} kind by name. */
final class SimDeviceProbe implements DeviceProbe {

    private final SimulatedDevice device;

    SimDeviceProbe(SimulatedDevice device) {
        this.device = device;
    }

    @Override
    public long bytesInUse() {
        return device.counters().bytesInUse();
    }

    @Override
    public int liveEvents() {
        return device.liveEvents();
    }

    @Override
    public boolean knowsMappings() {
        return true;
    }

    @Override
    public boolean isMapped(long address, long bytes) {
        return device.isMapped(address, bytes);
    }

    @Override
    public List<String> faultKinds() {
        List<String> kinds = new ArrayList<>();
        for (DeviceCall kind : DeviceCall.values()) {
            kinds.add(kind.name());
        }
        return kinds;
    }

    @Override
    public long calls(String kind) {
        return device.calls(DeviceCall.valueOf(kind));
    }

    @Override
    public void refuseNext(String kind) {
        device.failNextCalls(DeviceCall.valueOf(kind), 1);
    }

    @Override
    public void failNextWith(String kind, RuntimeException error) {
        device.failNextCallWith(DeviceCall.valueOf(kind), error);
    }

    @Override
    public void clearFaults() {
        device.clearFaults();
    }

    @Override
    public void completeStream(DeviceStream stream) {
        device.completeStream(stream);
    }
}
