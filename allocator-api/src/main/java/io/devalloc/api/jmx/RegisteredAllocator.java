package io.devalloc.api.jmx;

import io.devalloc.api.DeviceAllocator;
import io.devalloc.api.spi.ForwardingDeviceAllocator;
import java.util.concurrent.atomic.AtomicBoolean;
import javax.management.InstanceNotFoundException;
import javax.management.MBeanRegistrationException;
import javax.management.MBeanServer;
import javax.management.ObjectName;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * An allocator whose {@link AllocatorMXBean} is registered: closing it unregisters the bean (first, so that no JMX
 * client pokes an allocator that is closing), then closes the allocator inside. Everything else is forwarded.
 */
final class RegisteredAllocator extends ForwardingDeviceAllocator {

    private static final Logger LOG = LoggerFactory.getLogger(RegisteredAllocator.class);

    private final MBeanServer server;
    private final ObjectName objectName;
    private final AtomicBoolean registered = new AtomicBoolean(true);

    RegisteredAllocator(DeviceAllocator allocator, MBeanServer server, ObjectName objectName) {
        super(allocator);
        this.server = server;
        this.objectName = objectName;
    }

    /** The name the bean is registered under. */
    ObjectName objectName() {
        return objectName;
    }

    @Override
    public void close() {
        try {
            if (registered.compareAndSet(true, false)) {
                server.unregisterMBean(objectName);
            }
        } catch (InstanceNotFoundException e) {
            LOG.debug("{} was already unregistered (by hand?)", objectName, e);
        } catch (MBeanRegistrationException e) {
            LOG.warn("Could not unregister {}", objectName, e);
        } finally {
            super.close();
        }
    }

    @Override
    public String toString() {
        return delegate().toString();
    }
}
