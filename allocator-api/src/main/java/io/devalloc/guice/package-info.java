/**
 * Guice wiring: install {@link io.devalloc.guice.DevallocModule} and inject
 * {@link io.devalloc.api.DeviceAllocator}. Guice is an optional dependency; nothing outside this package uses it.
 */
package io.devalloc.guice;
