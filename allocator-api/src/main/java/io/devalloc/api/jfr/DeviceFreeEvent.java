package io.devalloc.api.jfr;

import jdk.jfr.Description;
import jdk.jfr.Label;
import jdk.jfr.Name;

/** {@value #NAME}: the allocator gave memory back to the device (cudaFree). */
@Name(DeviceFreeEvent.NAME)
@Label("Device Free")
@Description("The allocator gave memory back to the device (cudaFree)")
final class DeviceFreeEvent extends DeviceCallEvent {

    static final String NAME = "io.devalloc.DeviceFree";
}
