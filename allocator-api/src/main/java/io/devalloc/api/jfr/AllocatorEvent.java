package io.devalloc.api.jfr;

import jdk.jfr.Description;
import jdk.jfr.Event;
import jdk.jfr.Label;

/**
 * The fields every devalloc event has: which allocator and which device. JFR takes an abstract event class's fields
 * and annotations into each concrete event; the abstract class itself is never registered.
 */
abstract class AllocatorEvent extends Event {

    @Label("Allocator")
    @Description("The name the allocator was given (DeviceAllocators.builder().name), or its kind")
    String allocator;

    @Label("Device")
    @Description("The device's id, e.g. cuda:0 or sim:0")
    String device;

    /** Says which allocator and device the event is about. */
    final void source(String allocatorName, String deviceId) {
        this.allocator = allocatorName;
        this.device = deviceId;
    }
}
