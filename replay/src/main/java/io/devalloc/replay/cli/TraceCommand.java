package io.devalloc.replay.cli;

import java.io.PrintWriter;
import java.nio.file.Path;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

/**
 * What the commands that read one trace file have in common ({@code replay}, {@code advise}): the file
 * ({@code TRACE}), {@value CudaDeviceOption#NAME} {@code N} for one device of a snapshot of several GPUs, and
 * {@value ReportOptions#JSON} and {@value ReportOptions#HTML} {@code FILE}, declared once here; each command
 * describes in its own words what it does with the device and what it prints and writes. Picocli fills the fields of
 * this class as it fills the command's own.
 */
public abstract class TraceCommand {

    /** The command as picocli parsed it: its output streams, its mixins. */
    @Spec
    CommandSpec spec;

    /** The trace file. */
    @Parameters(index = "0", paramLabel = "TRACE", description = "The trace file.")
    protected Path trace;

    /** {@value CudaDeviceOption#NAME} {@code N}. */
    @Mixin
    protected final CudaDeviceOption cudaDevice;

    /** {@value ReportOptions#JSON} and {@value ReportOptions#HTML} {@code FILE}. */
    @Mixin
    protected final ReportOptions report;

    /**
     * A command for picocli to fill in from the command line.
     *
     * @param cudaDevice what the command does with device N, and by default ({@link CudaDeviceOption})
     * @param json       what {@value ReportOptions#JSON} prints
     * @param html       what {@value ReportOptions#HTML} writes
     */
    protected TraceCommand(String cudaDevice, String json, String html) {
        this.cudaDevice = new CudaDeviceOption(cudaDevice);
        this.report = new ReportOptions(json, html);
    }

    /** Where the command prints its results. */
    protected PrintWriter out() {
        return spec.commandLine().getOut();
    }

    /** Where the command prints its progress and its errors. */
    protected PrintWriter err() {
        return spec.commandLine().getErr();
    }
}
