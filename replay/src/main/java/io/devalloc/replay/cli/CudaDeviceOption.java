package io.devalloc.replay.cli;

import io.devalloc.replay.TraceFile;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Model.OptionSpec;
import picocli.CommandLine.Spec;

/**
 * {@value #NAME} {@code N}, the option that picks one device of a PyTorch snapshot of several GPUs, as a picocli
 * mixin: {@code @Mixin CudaDeviceOption cudaDevice = new CudaDeviceOption(...)}. Its name, parameter label and check
 * are declared here once for every command that has it ({@code replay}, {@code compare}, {@code advise}).
 *
 * <p>Declared through picocli's programmatic API, as {@link SettingOption} is: each command says in its own words
 * what it does with the device and without one, and an annotation's text is a constant of the class that declares it.
 * Picocli asks a mixin for at least one annotation, hence the bare {@link Command}.
 *
 * <p>Not thread-safe: one parse at a time, as picocli parses.
 */
@Command
public final class CudaDeviceOption {

    /** The option's name. */
    public static final String NAME = "--cuda-device";

    private final OptionSpec option;

    /**
     * {@value #NAME} {@code N}.
     *
     * @param description the help text: what the command does with device N, and by default
     */
    public CudaDeviceOption(String description) {
        option = OptionSpec.builder(NAME).paramLabel("N").type(Integer.class).description(description).build();
    }

    /** Picocli calls it when the mixin joins its command: the option becomes the command's. */
    @Spec(Spec.Target.MIXEE)
    void addTo(CommandSpec command) {
        command.addOption(option);
    }

    /**
     * The device index given, else {@link TraceFile#ALL_DEVICES}.
     *
     * @throws IllegalArgumentException when the index given is negative
     */
    public int index() {
        Integer given = option.getValue();
        if (given == null) {
            return TraceFile.ALL_DEVICES;
        }
        if (given < 0) {
            throw new IllegalArgumentException(NAME + ": a device index is 0 or more, got " + given);
        }
        return given;
    }
}
