/**
 * Choosing devices and allocators: {@link io.devalloc.api.registry.DeviceRegistry} resolves specs such as
 * {@code sim:80GiB}, {@code host}, {@code cuda:0} or {@code auto} (the available provider with the highest
 * priority, every candidate logged with the reason it was or wasn't chosen);
 * {@link io.devalloc.api.registry.AllocatorRegistry} finds algorithms by name;
 * {@link io.devalloc.api.registry.DevallocSettings} reads the three settings from system properties and the
 * environment.
 */
package io.devalloc.api.registry;
