/**
 * The {@link io.devalloc.api.device.DeviceMemory} port: one device's raw memory, its streams and events, and the
 * optional {@link io.devalloc.api.device.VirtualMemory} capability, modelled on the CUDA runtime and VMM APIs so
 * that the CUDA adapter is a thin translation and the simulator can stand in for a GPU in tests.
 */
package io.devalloc.api.device;
