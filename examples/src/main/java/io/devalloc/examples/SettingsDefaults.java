package io.devalloc.examples;

import io.devalloc.api.DevallocSettings;
import io.devalloc.replay.cli.DefaultSources;
import io.devalloc.replay.cli.SettingOption;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import picocli.CommandLine.IDefaultValueProvider;
import picocli.CommandLine.Model.ArgSpec;
import picocli.CommandLine.Model.OptionSpec;

/**
 * The launcher's defaults for {@code --device}, {@code --allocator} and {@code --config}, in every command that has
 * them: the {@code devalloc.*} system properties, else the {@code DEVALLOC_*} environment variables (as
 * {@link DevallocSettings} reads them), else the command's own default. An option given on the command line wins
 * over all of them. Picocli asks it for every option's default, also when it prints the help, so the help shows the
 * default in effect. Immutable.
 */
final class SettingsDefaults implements IDefaultValueProvider, DefaultSources {

    /** An option whose default comes from a devalloc setting. */
    record Setting(String option, String property, String variable) {
    }

    static final List<Setting> SETTINGS = List.of(
            new Setting(SettingOption.DEVICE, DevallocSettings.DEVICE_PROPERTY, DevallocSettings.DEVICE_VARIABLE),
            new Setting(SettingOption.ALLOCATOR, DevallocSettings.ALLOCATOR_PROPERTY,
                    DevallocSettings.ALLOCATOR_VARIABLE),
            new Setting(SettingOption.CONFIG, DevallocSettings.CONFIG_PROPERTY, DevallocSettings.CONFIG_VARIABLE));

    private final Map<?, ?> properties;
    private final Map<String, String> environment;

    SettingsDefaults(Map<?, ?> properties, Map<String, String> environment) {
        this.properties = Objects.requireNonNull(properties, "properties");
        this.environment = Objects.requireNonNull(environment, "environment");
    }

    @Override
    public String defaultValue(ArgSpec argSpec) {
        if (!(argSpec instanceof OptionSpec option)) {
            return null;
        }
        for (Setting s : SETTINGS) {
            if (s.option().equals(option.longestName())) {
                return DevallocSettings.lookup(properties, environment, s.property(), s.variable()).orElse(null);
            }
        }
        return null;
    }

    @Override
    public String sourceOf(String option) {
        for (Setting s : SETTINGS) {
            if (s.option().equals(option)) {
                return source(s).orElse(null);
            }
        }
        return null;
    }

    /**
     * Where the setting of {@code setting.option()} comes from when the command line does not give it, e.g.
     * {@code DEVALLOC_DEVICE=host} or {@code -Ddevalloc.device=host}; empty when neither is set.
     */
    Optional<String> source(Setting setting) {
        Object property = properties.get(setting.property());
        if (property != null) {
            return Optional.of("-D" + setting.property() + "=" + property);
        }
        String variable = environment.get(setting.variable());
        return variable == null ? Optional.empty() : Optional.of(setting.variable() + "=" + variable);
    }
}
