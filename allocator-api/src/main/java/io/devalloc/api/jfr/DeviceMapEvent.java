package io.devalloc.api.jfr;

import jdk.jfr.Description;
import jdk.jfr.Label;
import jdk.jfr.Name;

/** {@value #NAME}: the allocator mapped physical memory into a reserved virtual range (cuMemCreate + cuMemMap). */
@Name(DeviceMapEvent.NAME)
@Label("Device Map")
@Description("The allocator mapped physical memory into a reserved virtual range (cuMemCreate + cuMemMap)")
final class DeviceMapEvent extends DeviceCallEvent {

    static final String NAME = "io.devalloc.DeviceMap";
}
