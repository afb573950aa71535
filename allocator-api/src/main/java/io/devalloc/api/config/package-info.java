/**
 * Allocator configuration: each allocator declares a {@link io.devalloc.api.config.ConfigSchema} of
 * {@link io.devalloc.api.config.ConfigOption}s; {@link io.devalloc.api.config.AllocatorConfig#parse} checks
 * {@code key:value,key:value} text (PyTorch's {@code PYTORCH_CUDA_ALLOC_CONF} syntax) against it and refuses
 * unknown keys and bad values with messages that say what is allowed.
 */
package io.devalloc.api.config;
