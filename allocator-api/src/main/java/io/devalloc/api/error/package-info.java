/**
 * Typed errors, a sealed hierarchy under {@link io.devalloc.api.error.DevallocException}: out of memory (with
 * figures), invalid free (with the reason), invalid configuration (key, value, what is allowed), device
 * unavailable (why), an unknown stream (one the device never created or already destroyed), and device failures.
 * A refused call changes nothing.
 */
package io.devalloc.api.error;
