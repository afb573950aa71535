package io.devalloc.api.jmx;

import io.devalloc.api.DeviceAllocator;
import io.devalloc.api.error.InvalidConfigurationException;
import java.lang.management.ManagementFactory;
import java.util.Objects;
import javax.management.InstanceAlreadyExistsException;
import javax.management.JMException;
import javax.management.MBeanServer;
import javax.management.MalformedObjectNameException;
import javax.management.ObjectName;
import javax.management.StandardMBean;

/**
 * Registers an allocator's {@link AllocatorMXBean} with the platform MBean server (the one {@code jconsole},
 * {@code jcmd} and JMX exporters see). The builder does this for {@code registerMXBean(true)}; this class is for an
 * allocator built by hand.
 */
public final class AllocatorMXBeans {

    /** The domain of devalloc's beans. */
    public static final String DOMAIN = "io.devalloc";

    private AllocatorMXBeans() {
    }

    /**
     * {@code io.devalloc:type=Allocator,name=NAME}, the name quoted ({@link ObjectName#quote}) when it holds a
     * character an ObjectName value cannot hold bare ({@code , = : " * ?}, a newline), else as given.
     *
     * @throws IllegalArgumentException a blank name
     */
    public static ObjectName objectName(String name) {
        Objects.requireNonNull(name, "name");
        if (name.isBlank()) {
            throw new IllegalArgumentException("an allocator's MXBean needs a name that is not blank");
        }
        String value = needsQuoting(name) ? ObjectName.quote(name) : name;
        try {
            return new ObjectName(DOMAIN + ":type=Allocator,name=" + value);
        } catch (MalformedObjectNameException e) {
            throw new IllegalArgumentException("cannot make an ObjectName of allocator name '" + name + "'", e);
        }
    }

    private static boolean needsQuoting(String name) {
        for (int i = 0; i < name.length(); i++) {
            switch (name.charAt(i)) {
                case ',', '=', ':', '"', '*', '?', '\n', '\\' -> {
                    return true;
                }
                default -> {
                }
            }
        }
        return false;
    }

    /**
     * Registers {@code allocator}'s bean as {@link #objectName(String) objectName(name)} and returns the allocator
     * wrapped so that closing it unregisters the bean (then closes {@code allocator}). The bean reads and operates
     * on {@code allocator}.
     *
     * <p>When it fails nothing is registered and {@code allocator} is left open (the caller owns it).
     *
     * @throws InvalidConfigurationException (key {@code name}) a bean of that name is already registered: another
     *                                       allocator has the name; give this one another
     */
    public static DeviceAllocator register(DeviceAllocator allocator, String name) {
        Objects.requireNonNull(allocator, "allocator");
        ObjectName objectName = objectName(name);
        MBeanServer server = ManagementFactory.getPlatformMBeanServer();
        try {
            server.registerMBean(new StandardMBean(new AllocatorBean(allocator, name), AllocatorMXBean.class, true),
                    objectName);
        } catch (InstanceAlreadyExistsException e) {
            InvalidConfigurationException clash = new InvalidConfigurationException("name", name,
                    "an allocator MXBean named '" + name + "' is already registered (" + objectName
                            + "): give this allocator another name (DeviceAllocators.builder().name(...), or"
                            + " -Ddevalloc.name=...), or close the allocator that has it first");
            clash.initCause(e);
            throw clash;
        } catch (JMException e) {
            throw new IllegalStateException("could not register the MXBean " + objectName + ": " + e.getMessage(), e);
        }
        return new RegisteredAllocator(allocator, server, objectName);
    }
}
