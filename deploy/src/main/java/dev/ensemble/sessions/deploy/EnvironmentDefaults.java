package dev.ensemble.sessions.deploy;

import picocli.CommandLine.IDefaultValueProvider;
import picocli.CommandLine.Model.ArgSpec;
import picocli.CommandLine.Model.OptionSpec;

import java.util.Locale;
import java.util.Map;

/**
 * The default of each option of a service run alone from an {@code ENSEMBLE_} environment variable: {@code --state-dir}
 * from {@code ENSEMBLE_STATE_DIR}, {@code --standby-replicas} from {@code ENSEMBLE_STANDBY_REPLICAS} (the option's
 * long name without its dashes, upper case, each {@code -} a {@code _}). An option given on the command line wins over
 * its variable; a variable wins over the option's built-in default. An empty variable counts as not set; {@code --help}
 * and {@code --version} read none.
 */
final class EnvironmentDefaults implements IDefaultValueProvider {
    /** The prefix of the variables read. */
    static final String PREFIX = "ENSEMBLE_";
    private final Map<String, String> environment;

    /** Defaults from the process's environment. */
    EnvironmentDefaults() {
        this(System.getenv());
    }

    EnvironmentDefaults(Map<String, String> environment) {
        this.environment = Map.copyOf(environment);
    }

    /** {@code --state-dir} → {@code ENSEMBLE_STATE_DIR}. */
    static String variable(String longOption) {
        return PREFIX + longOption.replaceFirst("^-+", "").toUpperCase(Locale.ROOT).replace('-', '_');
    }

    @Override
    public String defaultValue(ArgSpec argSpec) {
        if (!(argSpec instanceof OptionSpec option) || !option.longestName().startsWith("--") || option.usageHelp()
                || option.versionHelp()) { // ENSEMBLE_VERSION=1.2 in a container must not turn --version on
            return null;
        }
        String value = environment.get(variable(option.longestName()));
        return value == null || value.isBlank() ? null : value.strip();
    }
}
