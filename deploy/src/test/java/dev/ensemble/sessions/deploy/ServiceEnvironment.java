package dev.ensemble.sessions.deploy;

import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.streams.StreamsConfig;
import picocli.CommandLine;
import picocli.CommandLine.Model.OptionSpec;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Checks a deployment's command line and environment for a service against what {@code ensemble-sessions run <service>}
 * reads: every {@code ENSEMBLE_*} variable is one of that service's options ({@link EnvironmentDefaults}), every
 * {@code KAFKA_*} variable one of Kafka's client or Streams settings ({@link KafkaEnvironment}), and the command line
 * with that environment parses (required options given by flag or variable, numbers numbers).
 */
final class ServiceEnvironment {
    private static final List<String> PREFIXES = List.of("topic.", "consumer.", "main.consumer.", "restore.consumer.",
            "global.consumer.", "producer.", "admin.");

    private ServiceEnvironment() {
    }

    /**
     * What is wrong with running {@code args} ({@code run <service> ...}) in {@code environment}: one line per problem,
     * empty when nothing is.
     */
    static List<String> problems(List<String> args, Map<String, String> environment) {
        List<String> out = new ArrayList<>();
        if (args.size() < 2 || !args.get(0).equals("run")) {
            out.add("not 'run <service>': " + args);
            return out;
        }
        CommandLine root = EnsembleSessions.commandLine();
        CommandLine service = root.getSubcommands().get("run").getSubcommands().get(args.get(1));
        if (service == null) {
            out.add("no service " + args.get(1));
            return out;
        }
        Set<String> variables = new HashSet<>();
        for (OptionSpec o : service.getCommandSpec().options()) {
            if (o.longestName().startsWith("--") && !o.usageHelp() && !o.versionHelp()) {
                variables.add(EnvironmentDefaults.variable(o.longestName()));
            }
        }
        Set<String> kafka = kafkaSettings();
        environment.forEach((name, value) -> {
            if (name.startsWith(EnvironmentDefaults.PREFIX) && !variables.contains(name)) {
                out.add(name + " is no option of 'run " + args.get(1) + "'");
            }
            if (!KafkaEnvironment.settings(Map.of(name, value)).isEmpty()) {
                String setting = KafkaEnvironment.settingName(name);
                String bare = PREFIXES.stream().filter(setting::startsWith).findFirst().map(p -> setting.substring(p.length())).orElse(setting);
                if (!kafka.contains(setting) && !kafka.contains(bare) && !setting.startsWith("topic.")) {
                    out.add(name + " (" + setting + ") is no Kafka client or Streams setting");
                }
            }
        });
        service.setDefaultValueProvider(new EnvironmentDefaults(environment));
        try {
            root.parseArgs(args.toArray(String[]::new));
        } catch (CommandLine.ParameterException e) {
            out.add("'" + String.join(" ", args) + "' with " + environment.keySet() + ": " + e.getMessage());
        }
        return out;
    }

    /** The names of Kafka's consumer, producer, admin and Streams settings. */
    static Set<String> kafkaSettings() {
        Set<String> s = new HashSet<>(ConsumerConfig.configNames());
        s.addAll(ProducerConfig.configNames());
        s.addAll(AdminClientConfig.configNames());
        s.addAll(StreamsConfig.configDef().names());
        return s;
    }
}
