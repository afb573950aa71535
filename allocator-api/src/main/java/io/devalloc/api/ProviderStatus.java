package io.devalloc.api;

import io.devalloc.api.spi.Availability;

/**
 * What the registry knows of one device provider, for listings such as {@code devalloc devices}.
 *
 * @param name         provider name
 * @param description  what it opens
 * @param priority     preference for {@code auto}
 * @param availability the probe's answer
 * @param deviceCount  devices it can open (0 when unavailable)
 * @param argumentHelp what the spec argument means
 * @param className    the implementing class
 */
public record ProviderStatus(String name, String description, int priority, Availability availability,
                             int deviceCount, String argumentHelp, String className) {
}
