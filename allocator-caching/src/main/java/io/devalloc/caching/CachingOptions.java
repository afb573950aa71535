package io.devalloc.caching;

import static io.devalloc.caching.SizeRules.LARGE_BUFFER;
import static io.devalloc.caching.SizeRules.MIN_LARGE_ALLOC;
import static io.devalloc.caching.SizeRules.ROUNDUP_INTERVALS;

import java.util.Arrays;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;

/**
 * The options of the caching allocator: one value per key of PyTorch's {@code PYTORCH_CUDA_ALLOC_CONF}, in bytes
 * where the key is in MiB. {@link CachingConfig} parses them from a configuration text (the keys, defaults, rules
 * and PyTorch's messages are documented there); {@link #defaults()} are PyTorch's; the constructor checks what
 * parsing guarantees, so that options built by hand are as safe as parsed ones. The size arithmetic that depends on
 * them is {@link SizeRules}.
 *
 * <p>Immutable and thread-safe.
 *
 * @param backend                       {@code native} or {@code cudaMallocAsync}
 * @param largeSegmentSize              bytes of a segment for a large request under 10 MiB (default 20 MiB)
 * @param maxSplitSize                  bytes; blocks this large are never split ({@link Long#MAX_VALUE}: unlimited)
 * @param maxNonSplitRounding           bytes an oversize request may waste in an unsplittable cached block
 * @param garbageCollectionThreshold    the GC trigger as a fraction of the allowed memory, 0 for off
 * @param roundupPower2Divisions        16 entries, each 0 or a power of two (copied in and out)
 * @param expandableSegments            use expandable segments
 * @param releaseLockOnCudamalloc       release the allocator lock around the device malloc
 * @param pinnedUseCudaHostRegister     pinned memory from malloc + cudaHostRegister instead of cudaHostAlloc
 * @param pinnedNumRegisterThreads      threads that prefault pinned pages before registration (power of two, &le; 128)
 * @param pinnedUseBackgroundThreads    process pinned-memory events on a background thread
 * @param pinnedReserveSegmentSize      bytes of the pinned reserve segment, 0 for none
 * @param graphCaptureRecordStreamReuse allow reuse of record_stream blocks during graph capture
 * @param perProcessMemoryFraction      the fraction of device memory the allocator may use, 1.0 for no limit
 * @param expandableSegmentsReserve     the address space an expandable segment reserves
 *                                      ({@link ExpandableSegmentReserve#HISTORICAL}: 9/8 of the device's memory)
 * @param throwOnCudamallocOom          refuse a device allocation at once, skipping the retry ladder, when it
 *                                      would take the allocator past fraction &times; total memory
 * @param pinnedFreeCatchAll            the value of {@code pinned_free_catch_all} (pinned-host allocator only)
 * @param pinnedMaxRoundThreshold       bytes; pinned requests above it are not rounded ({@link Long#MAX_VALUE}:
 *                                      unlimited; pinned-host allocator only)
 * @param pinnedMaxCachedSize           bytes; freed pinned blocks above it are not cached ({@link Long#MAX_VALUE}:
 *                                      unlimited; pinned-host allocator only)
 * @param searchPoolAfterRelease        devalloc's option for pytorch#191302: search the pool again after
 *                                      releasing cached blocks, before the last device allocation
 * @param configText                    the text these options were parsed from ("" for the defaults); reported as
 *                                      {@code allocator_settings["PYTORCH_CUDA_ALLOC_CONF"]}
 */
@SuppressWarnings("ArrayRecordComponent") // the array is copied in and out; equals and hashCode compare contents
public record CachingOptions(Backend backend, long largeSegmentSize, long maxSplitSize, long maxNonSplitRounding,
                             double garbageCollectionThreshold, int[] roundupPower2Divisions,
                             boolean expandableSegments, boolean releaseLockOnCudamalloc,
                             boolean pinnedUseCudaHostRegister, int pinnedNumRegisterThreads,
                             boolean pinnedUseBackgroundThreads, long pinnedReserveSegmentSize,
                             boolean graphCaptureRecordStreamReuse, double perProcessMemoryFraction,
                             ExpandableSegmentReserve expandableSegmentsReserve, boolean throwOnCudamallocOom,
                             boolean pinnedFreeCatchAll, long pinnedMaxRoundThreshold, long pinnedMaxCachedSize,
                             boolean searchPoolAfterRelease, String configText) {

    /** The allocator backend ({@code backend} key). */
    public enum Backend {
        /** The caching allocator: the only one devalloc implements. */
        NATIVE("native"),
        /** CUDA's stream-ordered allocator: parsed, then refused with a message (devalloc has no such backend). */
        CUDA_MALLOC_ASYNC("cudaMallocAsync");

        private final String configName;

        Backend(String configName) {
            this.configName = configName;
        }

        /** The spelling in the configuration text. */
        public String configName() {
            return configName;
        }

        /** The backend spelled {@code text}, exactly. */
        public static Backend parse(String text) {
            for (Backend b : values()) {
                if (b.configName.equals(text)) {
                    return b;
                }
            }
            throw new IllegalArgumentException("Unknown allocator backend, options are native and cudaMallocAsync");
        }

        @Override
        public String toString() {
            return configName;
        }
    }

    /**
     * Checks the invariants that parsing guarantees, so that hand-built options are as safe as parsed ones.
     *
     * @throws IllegalArgumentException naming the broken invariant
     */
    public CachingOptions {
        Objects.requireNonNull(backend, "backend");
        Objects.requireNonNull(roundupPower2Divisions, "roundupPower2Divisions");
        Objects.requireNonNull(configText, "configText");
        if (largeSegmentSize <= MIN_LARGE_ALLOC) {
            throw new IllegalArgumentException("large segment size must be > 10 MiB, got " + largeSegmentSize);
        }
        if (maxSplitSize < Math.max(LARGE_BUFFER, largeSegmentSize)) {
            throw new IllegalArgumentException("max split size must be >= max(20 MiB, large segment size), got "
                    + maxSplitSize);
        }
        if (maxNonSplitRounding < largeSegmentSize) {
            throw new IllegalArgumentException("max non-split rounding must be >= the large segment size, got "
                    + maxNonSplitRounding);
        }
        if (!(garbageCollectionThreshold >= 0 && garbageCollectionThreshold < 1.0)) {
            throw new IllegalArgumentException("garbage collection threshold must be in [0, 1) (0 = off), got "
                    + garbageCollectionThreshold);
        }
        roundupPower2Divisions = roundupPower2Divisions.clone();
        if (roundupPower2Divisions.length != ROUNDUP_INTERVALS) {
            throw new IllegalArgumentException("roundup_power2_divisions needs " + ROUNDUP_INTERVALS
                    + " entries, got " + roundupPower2Divisions.length);
        }
        for (int d : roundupPower2Divisions) {
            if (d < 0 || (d != 0 && Integer.bitCount(d) != 1)) {
                throw new IllegalArgumentException("roundup_power2_divisions entries must be 0 or a power of 2, got "
                        + Arrays.toString(roundupPower2Divisions));
            }
        }
        if (pinnedNumRegisterThreads < 1 || pinnedNumRegisterThreads > CachingConfig.MAX_REGISTER_THREADS
                || Integer.bitCount(pinnedNumRegisterThreads) != 1) {
            throw new IllegalArgumentException("pinned register threads must be a power of 2 <= 128, got "
                    + pinnedNumRegisterThreads);
        }
        if (pinnedReserveSegmentSize < 0) {
            throw new IllegalArgumentException("pinned reserve segment size must be >= 0, got "
                    + pinnedReserveSegmentSize);
        }
        if (!(perProcessMemoryFraction >= 0.0 && perProcessMemoryFraction <= 1.0)) {
            throw new IllegalArgumentException("per-process memory fraction must be in [0, 1], got "
                    + perProcessMemoryFraction);
        }
        Objects.requireNonNull(expandableSegmentsReserve, "expandableSegmentsReserve");
        if (pinnedMaxRoundThreshold < 0 || pinnedMaxCachedSize < 0) {
            throw new IllegalArgumentException("pinned thresholds must be >= 0, got " + pinnedMaxRoundThreshold
                    + " and " + pinnedMaxCachedSize);
        }
    }

    /** These options with expandable segments on or off (everything else the same). */
    public CachingOptions withExpandableSegments(boolean on) {
        return new CachingOptions(backend, largeSegmentSize, maxSplitSize, maxNonSplitRounding,
                garbageCollectionThreshold, roundupPower2Divisions, on, releaseLockOnCudamalloc,
                pinnedUseCudaHostRegister, pinnedNumRegisterThreads, pinnedUseBackgroundThreads,
                pinnedReserveSegmentSize, graphCaptureRecordStreamReuse, perProcessMemoryFraction,
                expandableSegmentsReserve, throwOnCudamallocOom, pinnedFreeCatchAll, pinnedMaxRoundThreshold,
                pinnedMaxCachedSize, searchPoolAfterRelease, configText);
    }

    /** PyTorch's defaults, with configuration text "". */
    public static CachingOptions defaults() {
        return new CachingOptions(Backend.NATIVE, LARGE_BUFFER, Long.MAX_VALUE, LARGE_BUFFER, 0.0,
                new int[ROUNDUP_INTERVALS], false, false, false, 1, false, 0, false, 1.0,
                ExpandableSegmentReserve.HISTORICAL, false, false, Long.MAX_VALUE, Long.MAX_VALUE, false, "");
    }

    /** {@link #maxSplitSize} as PyTorch reports it in stats and snapshots: -1 when unlimited. */
    public long maxSplitSizeStat() {
        return maxSplitSize == Long.MAX_VALUE ? -1 : maxSplitSize;
    }

    /**
     * The snapshot's {@code allocator_settings} dict, in PyTorch's key order: {@code PYTORCH_CUDA_ALLOC_CONF}
     * (String, the configuration text), {@code max_split_size} (Long, -1 when unlimited),
     * {@code garbage_collection_threshold} (Double), {@code expandable_segments} (Boolean),
     * {@code pinned_num_register_threads} (Long), {@code release_lock_on_cudamalloc} (Boolean),
     * {@code pinned_use_cuda_host_register} (Boolean), {@code graph_capture_record_stream_reuse} (Boolean),
     * {@code max_round_threshold} and {@code max_cached_size} (Long bytes of the two pinned limits, -1 when
     * unlimited, as the newest upstream writes them) and {@code roundup_power2_divisions} (a Map from "1", "2",
     * "4", ..., "32768" to Long). Upstream writes no key for the fraction, the reserve or
     * {@code throw_on_cudamalloc_oom}. Unmodifiable.
     */
    public Map<String, Object> allocatorSettings() {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("PYTORCH_CUDA_ALLOC_CONF", configText);
        m.put("max_split_size", maxSplitSizeStat());
        m.put("garbage_collection_threshold", garbageCollectionThreshold);
        m.put("expandable_segments", expandableSegments);
        m.put("pinned_num_register_threads", (long) pinnedNumRegisterThreads);
        m.put("release_lock_on_cudamalloc", releaseLockOnCudamalloc);
        m.put("pinned_use_cuda_host_register", pinnedUseCudaHostRegister);
        m.put("graph_capture_record_stream_reuse", graphCaptureRecordStreamReuse);
        m.put("max_round_threshold", pinnedMaxRoundThreshold == Long.MAX_VALUE ? -1L : pinnedMaxRoundThreshold);
        m.put("max_cached_size", pinnedMaxCachedSize == Long.MAX_VALUE ? -1L : pinnedMaxCachedSize);
        Map<String, Object> roundup = new LinkedHashMap<>();
        for (int i = 0; i < ROUNDUP_INTERVALS; i++) {
            roundup.put(Long.toString(1L << i), (long) roundupPower2Divisions[i]);
        }
        m.put("roundup_power2_divisions", Collections.unmodifiableMap(roundup));
        return Collections.unmodifiableMap(m);
    }

    /** A copy of the 16 division entries. */
    @Override
    public int[] roundupPower2Divisions() {
        return roundupPower2Divisions.clone();
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof CachingOptions c
                && backend == c.backend
                && largeSegmentSize == c.largeSegmentSize
                && maxSplitSize == c.maxSplitSize
                && maxNonSplitRounding == c.maxNonSplitRounding
                && Double.compare(garbageCollectionThreshold, c.garbageCollectionThreshold) == 0
                && Arrays.equals(roundupPower2Divisions, c.roundupPower2Divisions)
                && expandableSegments == c.expandableSegments
                && releaseLockOnCudamalloc == c.releaseLockOnCudamalloc
                && pinnedUseCudaHostRegister == c.pinnedUseCudaHostRegister
                && pinnedNumRegisterThreads == c.pinnedNumRegisterThreads
                && pinnedUseBackgroundThreads == c.pinnedUseBackgroundThreads
                && pinnedReserveSegmentSize == c.pinnedReserveSegmentSize
                && graphCaptureRecordStreamReuse == c.graphCaptureRecordStreamReuse
                && Double.compare(perProcessMemoryFraction, c.perProcessMemoryFraction) == 0
                && expandableSegmentsReserve.equals(c.expandableSegmentsReserve)
                && throwOnCudamallocOom == c.throwOnCudamallocOom
                && pinnedFreeCatchAll == c.pinnedFreeCatchAll
                && pinnedMaxRoundThreshold == c.pinnedMaxRoundThreshold
                && pinnedMaxCachedSize == c.pinnedMaxCachedSize
                && searchPoolAfterRelease == c.searchPoolAfterRelease
                && configText.equals(c.configText);
    }

    @Override
    public int hashCode() {
        return Objects.hash(backend, largeSegmentSize, maxSplitSize, maxNonSplitRounding, garbageCollectionThreshold,
                Arrays.hashCode(roundupPower2Divisions), expandableSegments, releaseLockOnCudamalloc,
                pinnedUseCudaHostRegister, pinnedNumRegisterThreads, pinnedUseBackgroundThreads,
                pinnedReserveSegmentSize, graphCaptureRecordStreamReuse, perProcessMemoryFraction,
                expandableSegmentsReserve, throwOnCudamallocOom, pinnedFreeCatchAll, pinnedMaxRoundThreshold,
                pinnedMaxCachedSize, searchPoolAfterRelease, configText);
    }

    @Override
    public String toString() {
        return "CachingOptions[backend=" + backend + ", largeSegmentSize=" + largeSegmentSize
                + ", maxSplitSize=" + maxSplitSizeStat() + ", maxNonSplitRounding=" + maxNonSplitRounding
                + ", garbageCollectionThreshold=" + garbageCollectionThreshold
                + ", roundupPower2Divisions=" + Arrays.toString(roundupPower2Divisions)
                + ", expandableSegments=" + expandableSegments + ", releaseLockOnCudamalloc=" + releaseLockOnCudamalloc
                + ", pinnedUseCudaHostRegister=" + pinnedUseCudaHostRegister
                + ", pinnedNumRegisterThreads=" + pinnedNumRegisterThreads
                + ", pinnedUseBackgroundThreads=" + pinnedUseBackgroundThreads
                + ", pinnedReserveSegmentSize=" + pinnedReserveSegmentSize
                + ", graphCaptureRecordStreamReuse=" + graphCaptureRecordStreamReuse
                + ", perProcessMemoryFraction=" + perProcessMemoryFraction
                + ", expandableSegmentsReserve=" + expandableSegmentsReserve
                + ", throwOnCudamallocOom=" + throwOnCudamallocOom + ", pinnedFreeCatchAll=" + pinnedFreeCatchAll
                + ", pinnedMaxRoundThreshold=" + pinnedMaxRoundThreshold
                + ", pinnedMaxCachedSize=" + pinnedMaxCachedSize
                + ", searchPoolAfterRelease=" + searchPoolAfterRelease + ", configText='" + configText + "']";
    }
}
