package io.devalloc.api;

import io.devalloc.api.device.DeviceStream;
import io.devalloc.api.error.InvalidFreeException;
import io.devalloc.api.units.ByteSize;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.Objects;

/**
 * A handle on one allocation. Closing it frees the memory, so try-with-resources scopes device memory:
 * <pre>{@code
 * try (Allocation a = allocator.allocate(64 * ByteSize.MiB)) {
 *     launchKernel(a.address());
 * }
 * }</pre>
 * Closing twice is an {@link InvalidFreeException} with reason {@code DOUBLE_FREE}; it changes nothing. A handle
 * whose memory was already freed through its raw address also gets {@code DOUBLE_FREE}, even if the address now
 * holds a newer allocation: the handle frees by allocation id, never somebody else's memory.
 * After the allocator itself was closed, closing a handle does nothing (its memory went back with the allocator);
 * the same holds when the allocator's close races the handle's: the handle's close never throws because the
 * allocator closed, whichever gets there first, and each allocation is freed exactly once (by the handle or by the
 * allocator's close).
 *
 * <p>A zero-byte allocation has address 0, as in PyTorch: it holds no memory and its close frees nothing.
 *
 * <p>Thread-safe: concurrent closes free the memory once; the others get {@code DOUBLE_FREE}.
 * For hot loops that must not create objects, use {@link DeviceAllocator#malloc(long, DeviceStream)} and
 * {@link DeviceAllocator#free(long)} on raw addresses instead.
 */
public final class Allocation implements AutoCloseable {

    private static final VarHandle FREED;

    static {
        try {
            FREED = MethodHandles.lookup().findVarHandle(Allocation.class, "freed", int.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    private final DeviceAllocator owner;
    private final long address;
    private final long size;
    private final DeviceStream stream;
    private final long allocationId;
    @SuppressWarnings("unused") // accessed through FREED
    private volatile int freed;

    /**
     * Wraps an address that {@code owner} handed out. Applications get handles from
     * {@link DeviceAllocator#allocate}.
     *
     * @param allocationId the owner's {@link DeviceAllocator#allocationId id} of the allocation (0 for address 0)
     */
    public Allocation(DeviceAllocator owner, long address, long size, DeviceStream stream, long allocationId) {
        this.owner = Objects.requireNonNull(owner, "owner");
        this.address = address;
        this.size = size;
        this.stream = Objects.requireNonNull(stream, "stream");
        this.allocationId = allocationId;
    }

    /** The allocator's id of this allocation (0 for a zero-byte allocation). */
    public long allocationId() {
        return allocationId;
    }

    /** The device address (0 for a zero-byte allocation). */
    public long address() {
        return address;
    }

    /** The bytes requested. */
    public long size() {
        return size;
    }

    /** The stream it was allocated on. */
    public DeviceStream stream() {
        return stream;
    }

    /** The allocator that made it. */
    public DeviceAllocator allocator() {
        return owner;
    }

    /** Whether it was freed. */
    public boolean isFreed() {
        return freed != 0;
    }

    /**
     * Records that the allocation is used on {@code other} (PyTorch's {@code Tensor.record_stream}): its memory is
     * not reused until the work queued on {@code other} when it is freed has completed.
     *
     * @throws io.devalloc.api.error.UnknownStreamException if {@code other} is not a live stream of the device (see
     *                                                      {@link DeviceAllocator#recordStream})
     */
    public void recordStream(DeviceStream other) {
        if (isFreed()) {
            throw new IllegalStateException("recordStream on an allocation that was already freed: " + this);
        }
        if (address != 0) {
            owner.recordStream(address, other);
        }
    }

    /** Frees the allocation. */
    @Override
    public void close() {
        if (!FREED.compareAndSet(this, 0, 1)) {
            throw new InvalidFreeException(InvalidFreeException.Reason.DOUBLE_FREE, address, owner.toString());
        }
        if (address == 0 || owner.isClosed()) {
            return;
        }
        try {
            owner.free(address, allocationId);
        } catch (RuntimeException e) {
            if (owner.isClosed()) {
                // The allocator closed between the check above and the free, so it refused the free: the memory goes
                // back with the allocator's close, as for any handle closed after it (exactly one free). The handle
                // stays freed and nothing is thrown.
                return;
            }
            // The allocator refused (e.g. the raw address was already freed): the handle stays as it was.
            FREED.setVolatile(this, 0);
            throw e;
        }
    }

    @Override
    public String toString() {
        return "Allocation[" + ByteSize.hex(address) + ", " + size + " bytes, " + stream
                + (isFreed() ? ", freed]" : "]");
    }
}
