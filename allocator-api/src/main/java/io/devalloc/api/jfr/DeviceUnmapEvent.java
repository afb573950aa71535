package io.devalloc.api.jfr;

import jdk.jfr.Description;
import jdk.jfr.Label;
import jdk.jfr.Name;

/**
 * {@value #NAME}: the allocator unmapped and released physical memory of a virtual range (cuMemUnmap +
 * cuMemRelease).
 */
@Name(DeviceUnmapEvent.NAME)
@Label("Device Unmap")
@Description("The allocator unmapped and released physical memory of a virtual range (cuMemUnmap + cuMemRelease)")
final class DeviceUnmapEvent extends DeviceCallEvent {

    static final String NAME = "io.devalloc.DeviceUnmap";
}
