package dev.ensemble.sessions.deploy;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.entry;

/**
 * A service run alone ({@code run <service>}): how the {@code KAFKA_*} and {@code ENSEMBLE_*} environment, the client
 * properties file and the flags make its Kafka settings, and which wins.
 */
class ServiceSettingsTest {

    /** The projector's options parsed from {@code args} with {@code environment} as the process's. */
    static ServiceOptions parse(Map<String, String> environment, String... args) {
        RunCommand.Projector projector = new RunCommand.Projector();
        new CommandLine(projector).setDefaultValueProvider(new EnvironmentDefaults(environment)).parseArgs(args);
        return projector.options;
    }

    @Test
    void kafkaVariablesAreSettingsNamedInLowerCaseWithDots() {
        assertThat(KafkaEnvironment.settingName("KAFKA_BOOTSTRAP_SERVERS")).isEqualTo("bootstrap.servers");
        assertThat(KafkaEnvironment.settingName("KAFKA_SECURITY_PROTOCOL")).isEqualTo("security.protocol");
        assertThat(KafkaEnvironment.settings(Map.of("KAFKA_SASL_MECHANISM", " SCRAM-SHA-512 ", "KAFKA_NUM_STANDBY_REPLICAS", "1",
                "PATH", "/bin", "KAFKA_HOME", "/opt/kafka", "KAFKA_HEAP_OPTS", "-Xmx1g", "KAFKA_OPTS", "-Dx", "KAFKA_", "x",
                "ENSEMBLE_THREADS", "2")))
                .containsExactly(entry("num.standby.replicas", "1"), entry("sasl.mechanism", "SCRAM-SHA-512"));
        assertThat(EnvironmentDefaults.variable("--standby-replicas")).isEqualTo("ENSEMBLE_STANDBY_REPLICAS");
        // a variable of that name that is no option's, or --version's, changes nothing
        Map<String, String> env = Map.of("KAFKA_BOOTSTRAP_SERVERS", "k:9092", "ENSEMBLE_VERSION", "1.2", "ENSEMBLE_JAVA_OPTS", "-Xmx1g");
        assertThat(parse(env).resolve(env).bootstrapServers()).isEqualTo("k:9092");
    }

    @Test
    void theEnvironmentAloneGivesTheClusterItsSecurityAndStreamsSettings() {
        Map<String, String> env = Map.of("KAFKA_BOOTSTRAP_SERVERS", "k1:9092,k2:9092", "KAFKA_SECURITY_PROTOCOL", "SASL_SSL",
                "KAFKA_SASL_MECHANISM", "PLAIN", "KAFKA_NUM_STANDBY_REPLICAS", "1", "KAFKA_COMMIT_INTERVAL_MS", "200");
        ServiceOptions.Resolved r = parse(env).resolve(env);
        assertThat(r.bootstrapServers()).isEqualTo("k1:9092,k2:9092");
        // security settings go to every client; the others only to the Streams applications
        assertThat(r.clientProperties()).containsOnly(entry("security.protocol", "SASL_SSL"), entry("sasl.mechanism", "PLAIN"));
        assertThat(r.streamsSettings()).containsOnly(entry("num.standby.replicas", "1"), entry("commit.interval.ms", "200"));
        assertThat(r.streamsOverrides()).containsEntry("security.protocol", "SASL_SSL").containsEntry("num.standby.replicas", "1");
    }

    @Test
    void theFileWinsOverKafkaVariablesAndFlagsOrTheirEnsembleVariablesWinOverBoth(@TempDir Path dir) throws Exception {
        Path file = dir.resolve("client.properties");
        Files.writeString(file, "security.protocol=SSL\nssl.truststore.location=/etc/trust.jks\nbootstrap.servers=ignored:1\n"
                + "num.standby.replicas=2\n");
        Map<String, String> env = Map.of("KAFKA_BOOTSTRAP_SERVERS", "from-env:9092", "KAFKA_SECURITY_PROTOCOL", "PLAINTEXT",
                "KAFKA_NUM_STANDBY_REPLICAS", "1", "KAFKA_NUM_STREAM_THREADS", "4", "ENSEMBLE_STANDBY_REPLICAS", "3",
                "ENSEMBLE_THREADS", "2", "ENSEMBLE_STATE_DIR", "/var/lib/ensemble");

        ServiceOptions fromEnvironment = parse(env, "--client-properties", file.toString());
        ServiceOptions.Resolved r = fromEnvironment.resolve(env);
        assertThat(r.bootstrapServers()).isEqualTo("from-env:9092"); // never from the file
        assertThat(r.clientProperties()).containsOnly(entry("security.protocol", "SSL"), entry("ssl.truststore.location", "/etc/trust.jks"),
                entry("num.standby.replicas", "2"));
        // ENSEMBLE_STANDBY_REPLICAS (the flag's variable) over the file's and KAFKA_NUM_STANDBY_REPLICAS
        assertThat(r.streamsOverrides()).containsEntry("num.standby.replicas", 3).containsEntry("num.stream.threads", 2);
        assertThat(fromEnvironment.stateDir("projector")).isEqualTo(Path.of("/var/lib/ensemble"));

        ServiceOptions flags = parse(env, "--client-properties", file.toString(), "--bootstrap-servers", "flag:9092",
                "--standby-replicas", "0", "--threads", "1", "--state-dir", dir.toString());
        ServiceOptions.Resolved f = flags.resolve(env);
        assertThat(f.bootstrapServers()).isEqualTo("flag:9092");
        assertThat(f.streamsOverrides()).containsEntry("num.standby.replicas", 0).containsEntry("num.stream.threads", 1);
        assertThat(flags.stateDir("projector")).isEqualTo(dir);

        // without the flags or their variables, the KAFKA_ variable is the setting
        Map<String, String> kafkaOnly = Map.of("KAFKA_BOOTSTRAP_SERVERS", "k:9092", "KAFKA_NUM_STANDBY_REPLICAS", "1");
        assertThat(parse(kafkaOnly).resolve(kafkaOnly).streamsOverrides()).containsEntry("num.standby.replicas", "1")
                .doesNotContainKey("num.stream.threads");
    }

    @Test
    void noClusterOrABadNumberIsAUsageError() {
        assertThatThrownBy(() -> parse(Map.of()).resolve(Map.of())).isInstanceOf(CommandLine.ParameterException.class)
                .hasMessage("give the Kafka cluster: --bootstrap-servers HOST:PORT or KAFKA_BOOTSTRAP_SERVERS");
        Map<String, String> env = Map.of("KAFKA_BOOTSTRAP_SERVERS", "k:9092", "ENSEMBLE_STANDBY_REPLICAS", "-1");
        assertThatThrownBy(() -> parse(env).resolve(env)).isInstanceOf(CommandLine.ParameterException.class)
                .hasMessage("--standby-replicas must be 0 or more, not -1");
    }

    @Test
    void aClusterThatCannotBeReachedEndsTheServiceWithCodeOneAndOneLine(@org.junit.jupiter.api.io.TempDir java.nio.file.Path dir)
            throws Exception {
        // nobody listens: tried once a second without a client's warnings, then one line, by run and by up (which has
        // made nothing then: no data folder)
        for (String[] args : new String[][]{{"run", "projector", "--bootstrap-servers", "PLAINTEXT://127.0.0.1:1", "--cluster-timeout", "2"},
                {"up", "--bootstrap-servers", "127.0.0.1:1", "--cluster-timeout", "2", "--data-dir", dir.resolve("data").toString(),
                        "--port", "0", "--no-import"}}) {
            StringWriter err = new StringWriter();
            long start = System.nanoTime();
            int code = EnsembleSessions.commandLine().setErr(new PrintWriter(err, true)).execute(args);
            assertThat(code).as(err.toString()).isEqualTo(1);
            assertThat(err.toString()).as(args[0]).startsWith("error: cannot reach the Kafka cluster at ")
                    .contains("127.0.0.1:1 within 2 s (").contains("127.0.0.1:1: Connection refused); check --bootstrap-servers");
            assertThat(err.toString().lines()).as(args[0]).hasSize(1);
            assertThat(System.nanoTime() - start).as("gave up in time").isLessThan(java.time.Duration.ofSeconds(20).toNanos());
        }
        assertThat(dir.resolve("data")).doesNotExist();
        // an address that is no address: at once
        StringWriter bad = new StringWriter();
        assertThat(EnsembleSessions.commandLine().setErr(new PrintWriter(bad, true)).execute("run", "projector", "--bootstrap-servers",
                "not a host")).isEqualTo(1);
        assertThat(bad.toString()).startsWith("error: cannot reach the Kafka cluster at not a host ('not a host' is not HOST:PORT)");
        StringWriter none = new StringWriter();
        long before = System.nanoTime();
        assertThat(EnsembleSessions.commandLine().setErr(new PrintWriter(none, true)).execute("run", "projector", "--bootstrap-servers",
                ",")).isEqualTo(1);
        assertThat(none.toString()).startsWith("error: no Kafka cluster address in ','");
        assertThat(System.nanoTime() - before).as("at once").isLessThan(java.time.Duration.ofSeconds(10).toNanos());
        // a name whose first address refuses and whose second listens is reachable: checked through unreachable() with a
        // server on the loopback address and a port nobody has on the first entry
        try (java.net.ServerSocket listening = new java.net.ServerSocket(0, 50, java.net.InetAddress.getLoopbackAddress())) {
            assertThat(ServiceOptions.unreachable("127.0.0.1:1,SASL_SSL://127.0.0.1:" + listening.getLocalPort(), "x")).isNull();
        }
        // something listens but does not answer as Kafka: given up after --cluster-timeout
        try (java.net.ServerSocket silent = new java.net.ServerSocket(0, 50, java.net.InetAddress.getLoopbackAddress())) {
            StringWriter err = new StringWriter();
            long start = System.nanoTime();
            int code = EnsembleSessions.commandLine().setErr(new PrintWriter(err, true))
                    .execute("run", "projector", "--bootstrap-servers", "127.0.0.1:" + silent.getLocalPort(), "--cluster-timeout", "2");
            assertThat(code).as(err.toString()).isEqualTo(1);
            assertThat(err.toString()).startsWith("error: cannot reach the Kafka cluster at 127.0.0.1:" + silent.getLocalPort() + " within 2 s (")
                    .contains("check --bootstrap-servers or KAFKA_BOOTSTRAP_SERVERS");
            assertThat(System.nanoTime() - start).as("gave up in time").isLessThan(java.time.Duration.ofSeconds(30).toNanos());
        }
    }
}
