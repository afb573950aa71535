package io.devalloc.api.registry;

import io.devalloc.api.DeviceAllocator;
import io.devalloc.api.config.AllocatorConfig;
import io.devalloc.api.device.DeviceMemory;
import io.devalloc.api.record.RecordingAllocator;
import io.devalloc.api.spi.AllocatorProvider;
import io.devalloc.api.spi.AllocatorSetup;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.util.Objects;

/**
 * The plain (no Guice) way in: opens a device and builds an allocator over it, both found with
 * {@link java.util.ServiceLoader}.
 * <pre>{@code
 * try (DeviceAllocator allocator = DeviceAllocators.builder()
 *         .device("sim:80GiB").allocator("direct").config("memory_limit_mb:1024").build()) {
 *     long address = allocator.malloc(1 << 20);
 *     allocator.free(address);
 * }
 * }</pre>
 * The allocator owns the device it opened: closing the allocator closes the device.
 *
 * <p>To capture a workload for replay, add {@code .record(Path.of("run.csv"), RecordingAllocator.Format.RMM_CSV)}:
 * the built allocator is then a {@link RecordingAllocator} that writes every allocation and free to that file, and
 * closing it also flushes and closes the file.
 */
public final class DeviceAllocators {

    private DeviceAllocators() {
    }

    /** A builder with the defaults: device {@code auto}, allocator {@code direct}, empty configuration. */
    public static Builder builder() {
        return new Builder();
    }

    /** Opens {@code deviceSpec} and builds allocator {@code allocator} with {@code config} over it. */
    public static DeviceAllocator open(String deviceSpec, String allocator, String config) {
        return builder().device(deviceSpec).allocator(allocator).config(config).build();
    }

    /** Builds from {@link DevallocSettings} (e.g. {@link DevallocSettings#fromEnvironment()}). */
    public static DeviceAllocator open(DevallocSettings settings) {
        return open(settings.device(), settings.allocator(), settings.config());
    }

    /** Builds allocators. Not thread-safe; the allocators it builds are. */
    public static final class Builder {
        private String device = "auto";
        private String allocator = DevallocSettings.DEFAULT_ALLOCATOR;
        private String config = "";
        private DeviceRegistry devices;
        private AllocatorRegistry allocators;
        private Path recordFile;
        private RecordingAllocator.Format recordFormat;

        private Builder() {
        }

        /** The device spec: {@code sim:80GiB}, {@code host}, {@code pinned-host}, {@code cuda:0}, {@code auto}. */
        public Builder device(String spec) {
            this.device = Objects.requireNonNull(spec, "spec");
            return this;
        }

        /** The allocator name: {@code direct}, {@code bfc}, {@code caching}. */
        public Builder allocator(String name) {
            this.allocator = Objects.requireNonNull(name, "name");
            return this;
        }

        /** The allocator's configuration, {@code key:value,key:value}. */
        public Builder config(String text) {
            this.config = Objects.requireNonNull(text, "text");
            return this;
        }

        /** Uses these device providers instead of the ones {@link java.util.ServiceLoader} finds. */
        public Builder deviceRegistry(DeviceRegistry registry) {
            this.devices = Objects.requireNonNull(registry, "registry");
            return this;
        }

        /** Uses these allocator providers instead of the ones {@link java.util.ServiceLoader} finds. */
        public Builder allocatorRegistry(AllocatorRegistry registry) {
            this.allocators = Objects.requireNonNull(registry, "registry");
            return this;
        }

        /**
         * Records every call on the built allocator to {@code file} (created or truncated by {@link #build()}) in
         * {@code format}; see {@link RecordingAllocator}.
         */
        public Builder record(Path file, RecordingAllocator.Format format) {
            this.recordFile = Objects.requireNonNull(file, "file");
            this.recordFormat = Objects.requireNonNull(format, "format");
            return this;
        }

        /**
         * Validates the allocator name and configuration, opens the device, and builds the allocator (wrapped in a
         * {@link RecordingAllocator} when {@link #record} was called). Nothing is left open when it fails.
         *
         * @throws UncheckedIOException if the recording file cannot be created
         */
        public DeviceAllocator build() {
            AllocatorRegistry allocatorRegistry = allocators != null ? allocators : AllocatorRegistry.load();
            AllocatorProvider provider = allocatorRegistry.get(allocator);
            // Check the configuration before touching any device, so a typo costs no device open.
            AllocatorConfig parsed = AllocatorConfig.parse(config, provider.configSchema());
            DeviceRegistry deviceRegistry = devices != null ? devices : DeviceRegistry.load();
            DeviceMemory memory = deviceRegistry.open(device);
            DeviceAllocator built;
            try {
                built = provider.create(new AllocatorSetup(memory, parsed, true));
            } catch (RuntimeException | Error e) {
                try {
                    memory.close();
                } catch (RuntimeException closeFailure) {
                    e.addSuppressed(closeFailure);
                }
                throw e;
            }
            if (recordFile == null) {
                return built;
            }
            try {
                return RecordingAllocator.wrap(built, recordFile, recordFormat);
            } catch (IOException e) {
                throw closing(built, new UncheckedIOException("cannot create recording file " + recordFile, e));
            } catch (RuntimeException e) {
                throw closing(built, e);
            }
        }

        /** Closes {@code allocator} (and so its device) and returns {@code failure} with any close failure added. */
        private static RuntimeException closing(DeviceAllocator allocator, RuntimeException failure) {
            try {
                allocator.close();
            } catch (RuntimeException closeFailure) {
                failure.addSuppressed(closeFailure);
            }
            return failure;
        }
    }
}
