package io.devalloc.api.jfr;

import jdk.jfr.Description;
import jdk.jfr.Label;
import jdk.jfr.Name;

/** {@value #NAME}: the allocator asked the device for memory (cudaMalloc). */
@Name(DeviceAllocEvent.NAME)
@Label("Device Alloc")
@Description("The allocator asked the device for memory (cudaMalloc)")
final class DeviceAllocEvent extends DeviceCallEvent {

    static final String NAME = "io.devalloc.DeviceAlloc";
}
