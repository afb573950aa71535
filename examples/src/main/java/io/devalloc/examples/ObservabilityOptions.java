package io.devalloc.examples;

import io.devalloc.api.DeviceAllocator;
import io.devalloc.api.DeviceAllocators;
import io.devalloc.api.device.DeviceDescriptor;
import io.devalloc.api.jfr.JfrEvents;
import io.devalloc.api.observe.AllocatorListener;
import io.devalloc.micrometer.DevallocMetrics;
import io.devalloc.replay.ReplayObserver;
import io.devalloc.replay.cli.OutputFiles;
import io.devalloc.replay.cli.RunInstrumentation;
import io.micrometer.core.instrument.Measurement;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.Statistic;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;
import java.util.stream.Collectors;
import jdk.jfr.Recording;
import picocli.CommandLine.Option;

/**
 * {@code --metrics} and {@code --jfr FILE}, the options {@code demo} and {@code replay} share: the allocator of the
 * run watched as an application watches its own, with devalloc's Micrometer binder and its JFR events. A picocli
 * mixin: the launcher adds it to {@code replay} (whose module takes neither Micrometer nor JFR recordings), and
 * {@code demo} declares it.
 *
 * <p>{@code --metrics} prints every {@code devalloc.*} meter of a {@link SimpleMeterRegistry} bound to the run's
 * allocator, read while the allocator is still open: for {@code demo} at its end, for {@code replay} after the
 * replay's last event (the allocator's close, and the second replay up to the peak that a replay makes for the
 * peak's snapshot, are not in them). {@code --jfr FILE} records devalloc's events (every device call, out-of-memory
 * error, retry and cache release, and the gauges every 100 ms and at both ends of the watch, so that a run shorter
 * than the period has them too) from the start of the run to its end and writes them to {@code FILE}, for
 * {@code jfr print --events 'io.devalloc.*' FILE}. The file is checked when the run starts; when it still cannot
 * be written at the end, the recording is kept in a temporary file, both paths are said, and the run's command exits
 * with {@link io.devalloc.replay.cli.ExitCodes#OUTPUT}.
 *
 * <p>Not thread-safe: one run at a time.
 */
final class ObservabilityOptions implements RunInstrumentation {

    /** How often the recording writes the gauges. */
    static final Duration GAUGE_PERIOD = Duration.ofMillis(100);

    @Option(names = "--metrics",
            description = "Print the allocator's Micrometer meters (devalloc.*: memory gauges per pool, device calls, "
                    + "out-of-memory errors, retries, cache releases) at the end of the run.")
    boolean metrics;

    @Option(names = "--jfr", paramLabel = "FILE",
            description = "Record devalloc's JDK Flight Recorder events (device calls, out-of-memory errors, retries, "
                    + "cache releases, gauges every 100 ms) to FILE; read it with: jfr print --events 'io.devalloc.*' "
                    + "FILE")
    Path jfr;

    /** The {@code allocator} tag and field: the command's name. */
    private String name = "devalloc";
    private DevallocMetrics meters;
    private SimpleMeterRegistry registry;
    private Recording recording;
    /** Removes the replay's periodic gauge hook; null when none is registered. */
    private Runnable stopGauges;
    /** The meters as read at the end of the run, while its allocator was open. */
    private String meterText;

    /** Names the run's allocator in the meters and events: the command's name. */
    ObservabilityOptions named(String commandName) {
        this.name = commandName;
        return this;
    }

    /** Whether either option was given. */
    boolean any() {
        return metrics || jfr != null;
    }

    @Override
    public void start() {
        meterText = null;
        if (metrics) {
            meters = DevallocMetrics.named(name);
            registry = new SimpleMeterRegistry();
        }
        if (jfr != null) {
            OutputFiles.checkWritable("--jfr", jfr);
            recording = new Recording();
            recording.setName("devalloc " + name);
            for (String event : JfrEvents.CALL_EVENTS) {
                recording.enable(event).withoutThreshold().withoutStackTrace();
            }
            recording.enable(JfrEvents.MEMORY_USAGE_EVENT).withPeriod(GAUGE_PERIOD);
            recording.start();
        }
    }

    /** The listeners of this run: Micrometer's and JFR's, as many as the options ask. */
    private List<AllocatorListener> listeners(String deviceId) {
        List<AllocatorListener> listeners = new ArrayList<>();
        if (meters != null) {
            listeners.add(meters.listener());
        }
        if (recording != null) {
            listeners.add(JfrEvents.listener(name, deviceId));
        }
        return listeners;
    }

    /** Sets the demo's builder up: the listeners, the recording's gauges. */
    DeviceAllocators.Builder configure(DeviceAllocators.Builder builder) {
        if (meters != null) {
            builder.listener(meters.listener());
        }
        if (recording != null) {
            builder.name(name).jfrEvents(true);
        }
        return builder;
    }

    /** The demo's allocator was built: bind the meters to it. */
    void built(DeviceAllocator allocator) {
        if (meters != null) {
            meters.bindTo(registry, allocator);
        }
    }

    /** The run's end, its allocator still open: read the meters. */
    void ended() {
        if (registry != null) {
            meterText = render(registry);
        }
    }

    @Override
    public ReplayObserver replayObserver() {
        if (!any()) {
            return ReplayObserver.NONE;
        }
        return new ReplayObserver() {
            private AllocatorListener listener;

            @Override
            public AllocatorListener listener(DeviceDescriptor device) {
                if (listener == null) {
                    listener = AllocatorListener.all(listeners(device.id()));
                }
                return listener;
            }

            @Override
            public void opened(DeviceAllocator allocator) {
                built(allocator);
                if (recording != null) {
                    stopGauges = JfrEvents.memoryUsageEvents(allocator, name);
                }
            }

            @Override
            public void finished(DeviceAllocator allocator) {
                stopGauges();
                ended();
            }
        };
    }

    private void stopGauges() {
        if (stopGauges != null) {
            stopGauges.run();
            stopGauges = null;
        }
    }

    @Override
    public boolean finish(PrintWriter out, PrintWriter err, boolean json, boolean failed) {
        stopGauges();
        PrintWriter to = json ? err : out;
        boolean written = true;
        try {
            if (meterText != null && !failed) {
                to.println();
                to.println("Meters (Micrometer, at the end of the run, before the allocator closed):");
                to.print(meterText);
            }
        } finally {
            if (recording != null) {
                written = writeRecording(to, err, failed);
            }
        }
        return written;
    }

    /**
     * Stops the recording and writes it to the {@code --jfr} file. When that fails (checked before the run, the
     * disk can still fill up), the recording is kept in a temporary file instead and both are said on {@code err}:
     * a run's recording cannot be made again.
     *
     * @return whether it went to the {@code --jfr} file
     */
    private boolean writeRecording(PrintWriter to, PrintWriter err, boolean failed) {
        try (Recording r = recording) {
            recording = null;
            r.stop();
            try {
                // Missing folders are made, as the other files' writers make theirs (the check allowed them).
                Path parent = jfr.toAbsolutePath().getParent();
                if (parent != null) {
                    Files.createDirectories(parent);
                }
                r.dump(jfr);
            } catch (IOException e) {
                OutputFiles.reportFailure(err, "--jfr", jfr, e);
                keepElsewhere(r, err);
                return false;
            }
            to.println();
            to.println("JFR recording" + (failed ? " of the failed run" : "") + ": " + jfr
                    + " (jfr print --events 'io.devalloc.*' " + jfr + ")");
            return true;
        }
    }

    /** Dumps the recording to a temporary file, and says where (or that it is lost, and why). */
    private static void keepElsewhere(Recording r, PrintWriter err) {
        try {
            Path kept = Files.createTempFile("devalloc-", ".jfr");
            r.dump(kept);
            err.println("devalloc: the JFR recording was kept in " + kept + " (jfr print --events 'io.devalloc.*' "
                    + kept + ")");
        } catch (IOException | SecurityException e) {
            err.println("devalloc: the JFR recording is lost: it could not be kept in a temporary file either ("
                    + e.getMessage() + ")");
        }
        err.flush();
    }

    /**
     * Every meter, one per line, sorted by name and tags: {@code name{tag=value,...}} then its measurements, each
     * named for what it is: {@code count} a number of events (calls, errors, releases), {@code total} what a counter
     * of an amount summed, with its unit ({@code total=2033297420 bytes}), {@code value} a gauge's reading with its
     * unit, and timers' {@code total_time} and {@code max} in milliseconds.
     */
    static String render(SimpleMeterRegistry registry) {
        List<Meter> list = new ArrayList<>(registry.getMeters());
        list.sort(Comparator.comparing((Meter m) -> m.getId().getName()).thenComparing(m -> tags(m)));
        StringWriter text = new StringWriter();
        PrintWriter w = new PrintWriter(text);
        for (Meter m : list) {
            List<String> values = new ArrayList<>();
            for (Measurement measure : m.measure()) {
                values.add(format(m, measure));
            }
            w.println("  " + m.getId().getName() + "{" + tags(m) + "}  " + String.join("  ", values));
        }
        w.flush();
        return text.toString();
    }

    private static String tags(Meter m) {
        return m.getId().getTags().stream().map(t -> t.getKey() + "=" + t.getValue())
                .collect(Collectors.joining(","));
    }

    private static String format(Meter meter, Measurement measure) {
        Statistic s = measure.getStatistic();
        double v = measure.getValue();
        Meter.Type type = meter.getId().getType();
        boolean timer = type == Meter.Type.TIMER || type == Meter.Type.LONG_TASK_TIMER;
        if (timer && (s == Statistic.TOTAL_TIME || s == Statistic.MAX)) {
            // SimpleMeterRegistry's base time unit is seconds.
            return s.name().toLowerCase(Locale.ROOT) + "=" + String.format(Locale.ROOT, "%.3f ms", v * 1e3);
        }
        String unit = meter.getId().getBaseUnit();
        String number = v == Math.rint(v) && !Double.isInfinite(v) ? String.format(Locale.ROOT, "%.0f", v)
                : String.format(Locale.ROOT, "%.3f", v);
        if (s == Statistic.COUNT) {
            // Micrometer names a counter's one figure COUNT whatever it sums: a counter of bytes holds bytes, not a
            // number of events, so it is a total with its unit. A timer's count, and a counter without a unit,
            // count events.
            return type == Meter.Type.COUNTER && unit != null
                    ? "total=" + number + " " + unit : "count=" + number;
        }
        return s.name().toLowerCase(Locale.ROOT) + "=" + number + (unit != null ? " " + unit : "");
    }
}
