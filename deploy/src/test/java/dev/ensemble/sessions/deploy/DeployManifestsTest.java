package dev.ensemble.sessions.deploy;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.MappingIterator;
import com.fasterxml.jackson.dataformat.yaml.YAMLMapper;
import org.apache.kafka.common.utils.AppInfoParser;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;

import java.io.File;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * deploy/compose and deploy/k8s, checked structurally: the compose file as {@code docker-compose config} resolves it
 * (skipped with a message where the command is absent), each Kubernetes manifest as YAML. Both must use the settings
 * of deploy/compose/kafka.env and services.env, which ClusterTest runs with, and every service's command line and
 * environment must be ones {@code run <service>} reads ({@link ServiceEnvironment}).
 */
class DeployManifestsTest {
    private static final YAMLMapper YAML = new YAMLMapper();
    private static final Path COMPOSE = Path.of("compose");
    private static final Path K8S = Path.of("k8s");
    private static final Set<String> STATEFUL = Set.of("projector", "gateway", "choice", "cleanup");

    @Test
    void theSharedSettingsAreOnesTheServicesAndBrokersRead() {
        Map<String, String> services = EnvFile.read(COMPOSE.resolve("services.env"));
        assertThat(services).containsKeys("ENSEMBLE_REPLICATION_FACTOR", "ENSEMBLE_STANDBY_REPLICAS", "ENSEMBLE_PARTITIONS");
        for (String service : STATEFUL) {
            List<String> args = new ArrayList<>(List.of("run", service));
            if (service.equals("gateway")) args.addAll(List.of("--tokens", "t.json"));
            if (service.equals("choice")) args.addAll(List.of("--secret-file", "s"));
            assertThat(ServiceEnvironment.problems(args, services)).as(service).isEmpty();
        }
        Map<String, String> brokers = KafkaEnvironment.settings(EnvFile.read(COMPOSE.resolve("kafka.env")));
        assertThat(brokers).containsEntry("default.replication.factor", "3").containsEntry("min.insync.replicas", "2")
                .containsEntry("transaction.state.log.replication.factor", "3").containsEntry("transaction.state.log.min.isr", "2")
                .containsEntry("offsets.topic.replication.factor", "3");
        assertThat(Integer.parseInt(services.get("ENSEMBLE_REPLICATION_FACTOR"))).as("the services' replication factor is the brokers'")
                .isEqualTo(Integer.parseInt(brokers.get("default.replication.factor")));
    }

    @Test
    void aWrongVariableOrAMissingRequiredOptionIsFound() {
        assertThat(ServiceEnvironment.problems(List.of("run", "projector"), Map.of("ENSEMBLE_STANDBY_REPLICA", "1")))
                .anyMatch(p -> p.startsWith("ENSEMBLE_STANDBY_REPLICA is no option"));
        assertThat(ServiceEnvironment.problems(List.of("run", "projector"), Map.of("KAFKA_SESSION_TIMEOUT", "1")))
                .anyMatch(p -> p.startsWith("KAFKA_SESSION_TIMEOUT (session.timeout) is no Kafka"));
        assertThat(ServiceEnvironment.problems(List.of("run", "gateway"), Map.of())).anyMatch(p -> p.contains("--tokens"));
        assertThat(ServiceEnvironment.problems(List.of("run", "gateway"), Map.of("ENSEMBLE_TOKENS", "t.json"))).isEmpty();
    }

    @Test
    void theComposeFileIsValidAndUsesTheSharedSettings() throws Exception {
        Assumptions.assumeTrue(onPath("docker-compose"), "docker-compose is not installed here: the compose file is not "
                + "validated (apt-get install docker-compose)");
        Process p = new ProcessBuilder("docker-compose", "-f", COMPOSE.resolve("compose.yaml").toString(), "config")
                .redirectError(ProcessBuilder.Redirect.PIPE).start();
        byte[] out = p.getInputStream().readAllBytes();
        String err = new String(p.getErrorStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(p.waitFor(60, TimeUnit.SECONDS)).isTrue();
        assertThat(p.exitValue()).as("docker-compose config: %s", err).isZero();
        JsonNode config = YAML.readTree(out);
        JsonNode services = config.path("services");
        Set<String> names = new HashSet<>();
        services.fieldNames().forEachRemaining(names::add);
        assertThat(names).containsExactlyInAnyOrder("kafka-1", "kafka-2", "kafka-3", "projector-1", "projector-2",
                "gateway-1", "gateway-2", "choice", "cleanup");

        Map<String, String> kafkaEnv = EnvFile.read(COMPOSE.resolve("kafka.env"));
        Set<String> clusterIds = new HashSet<>();
        Set<String> volumes = new HashSet<>();
        for (int i = 1; i <= 3; i++) {
            JsonNode node = services.path("kafka-" + i);
            assertThat(node.path("image").asText()).isEqualTo("apache/kafka:" + AppInfoParser.getVersion());
            Map<String, String> env = strings(node.path("environment"));
            assertThat(env).as("kafka-%d has kafka.env", i).containsAllEntriesOf(kafkaEnv);
            assertThat(env).containsEntry("KAFKA_NODE_ID", "" + i).containsEntry("KAFKA_PROCESS_ROLES", "broker,controller")
                    .containsEntry("KAFKA_CONTROLLER_QUORUM_VOTERS", "1@kafka-1:9093,2@kafka-2:9093,3@kafka-3:9093");
            clusterIds.add(env.get("CLUSTER_ID"));
            assertThat(node.path("healthcheck").path("test").toString()).contains("kafka-broker-api-versions");
            volumes.add(volumeOn(node, env.get("KAFKA_LOG_DIRS")));
        }
        assertThat(clusterIds).as("one cluster id").hasSize(1).doesNotContainNull();

        Map<String, String> servicesEnv = EnvFile.read(COMPOSE.resolve("services.env"));
        for (String name : List.of("projector-1", "projector-2", "gateway-1", "gateway-2", "choice", "cleanup")) {
            JsonNode s = services.path(name);
            Map<String, String> env = strings(s.path("environment"));
            assertThat(env).as("%s has services.env", name).containsAllEntriesOf(servicesEnv);
            assertThat(env.get("KAFKA_BOOTSTRAP_SERVERS")).isEqualTo("kafka-1:9092,kafka-2:9092,kafka-3:9092");
            List<String> args = new ArrayList<>();
            s.path("command").forEach(a -> args.add(a.asText()));
            assertThat(ServiceEnvironment.problems(args, env)).as(name).isEmpty();
            assertThat(s.path("healthcheck").path("test").isMissingNode()).as("%s has a health check", name).isFalse();
            if (!name.startsWith("gateway")) {
                assertThat(s.path("healthcheck").path("test").toString()).as(name).contains(env.get("ENSEMBLE_READY_FILE"));
            }
            assertThat(s.path("depends_on").path("kafka-1").path("condition").asText()).isEqualTo("service_healthy");
            volumes.add(volumeOn(s, env.get("ENSEMBLE_STATE_DIR")));
            if (name.startsWith("gateway")) {
                assertThat(args).as("%s is reached by the other at its service name", name)
                        .containsSequence("--application-server", name + ":8080").containsSequence("--port", "8080");
                assertThat(s.path("healthcheck").path("test").toString()).contains("http://localhost:8080/health");
            }
        }
        assertThat(volumes).as("one state volume per node and instance").hasSize(9);
        JsonNode vols = config.path("volumes");
        volumes.forEach(v -> assertThat(vols.has(v)).as("volume %s declared", v).isTrue());
    }

    @Test
    void theKubernetesManifestsAreStatefulSetsWithVolumesHeadlessServicesAndTheSharedSettings() throws Exception {
        Map<String, JsonNode> byKindAndName = new LinkedHashMap<>();
        List<Path> files;
        try (Stream<Path> s = Files.list(K8S)) {
            files = s.filter(f -> f.toString().endsWith(".yaml")).sorted().toList();
        }
        for (Path f : files) {
            try (MappingIterator<JsonNode> it = YAML.readerFor(JsonNode.class).readValues(f.toFile())) {
                while (it.hasNext()) {
                    JsonNode doc = it.next();
                    if (doc == null || doc.isEmpty()) continue;
                    assertThat(doc.path("kind").isTextual()).as("%s: every document has a kind", f).isTrue();
                    byKindAndName.put(doc.path("kind").asText() + "/" + doc.path("metadata").path("name").asText(), doc);
                }
            }
        }
        List<String> resources = new ArrayList<>();
        byKindAndName.get("Kustomization/").path("resources").forEach(r -> resources.add(r.asText()));
        assertThat(resources).as("kustomization.yaml lists every manifest")
                .containsExactlyInAnyOrderElementsOf(files.stream().map(f -> f.getFileName().toString())
                        .filter(n -> !n.equals("kustomization.yaml")).toList());
        assertThat(byKindAndName.keySet()).contains("Kafka/ensemble", "KafkaNodePool/dual-role", "ConfigMap/ensemble-services",
                "StatefulSet/projector", "StatefulSet/gateway", "StatefulSet/choice", "StatefulSet/cleanup",
                "Service/gateway", "Service/gateway-pods", "Service/choice");

        // the Kafka cluster: Strimzi, three nodes, kafka.env's settings
        JsonNode kafka = byKindAndName.get("Kafka/ensemble");
        JsonNode pool = byKindAndName.get("KafkaNodePool/dual-role");
        assertThat(pool.path("metadata").path("labels").path("strimzi.io/cluster").asText()).isEqualTo("ensemble");
        assertThat(pool.path("spec").path("replicas").asInt()).isEqualTo(3);
        assertThat(pool.path("spec").path("roles").toString()).contains("controller").contains("broker");
        assertThat(kafka.path("metadata").path("annotations").path("strimzi.io/kraft").asText()).isEqualTo("enabled");
        assertThat(kafka.path("metadata").path("annotations").path("strimzi.io/node-pools").asText()).isEqualTo("enabled");
        assertThat(strings(kafka.path("spec").path("kafka").path("config"))).as("the Strimzi cluster has kafka.env's settings")
                .isEqualTo(new TreeMap<>(KafkaEnvironment.settings(EnvFile.read(COMPOSE.resolve("kafka.env")))));
        int plainPort = -1;
        for (JsonNode l : kafka.path("spec").path("kafka").path("listeners")) {
            if (!l.path("tls").asBoolean()) plainPort = l.path("port").asInt();
        }

        // the services' settings: services.env's, and the Strimzi cluster's bootstrap service
        Map<String, String> config = strings(byKindAndName.get("ConfigMap/ensemble-services").path("data"));
        assertThat(config).as("services-config.yaml has services.env").containsAllEntriesOf(EnvFile.read(COMPOSE.resolve("services.env")));
        assertThat(config).containsEntry("KAFKA_BOOTSTRAP_SERVERS", "ensemble-kafka-bootstrap:" + plainPort);

        for (String name : STATEFUL) {
            JsonNode set = byKindAndName.get("StatefulSet/" + name).path("spec");
            JsonNode pod = set.path("template").path("spec");
            assertThat(set.path("selector").path("matchLabels").path("app.kubernetes.io/name").asText()).as("%s: its pods", name)
                    .isEqualTo(set.path("template").path("metadata").path("labels").path("app.kubernetes.io/name").asText())
                    .isEqualTo(name);
            JsonNode headless = byKindAndName.get("Service/" + set.path("serviceName").asText());
            assertThat(headless).as("%s: its serviceName is a Service", name).isNotNull();
            assertThat(headless.path("spec").path("clusterIP").asText()).as("%s: a headless service", name)
                    .isEqualTo(name.equals("choice") ? "" : "None");
            assertThat(pod.path("terminationGracePeriodSeconds").asInt()).as("%s: time to close its Streams applications", name)
                    .isGreaterThanOrEqualTo(90);
            JsonNode container = pod.path("containers").path(0);
            Map<String, String> env = new HashMap<>(config);
            for (JsonNode e : container.path("env")) {
                if (e.has("value")) env.put(e.path("name").asText(), e.path("value").asText());
            }
            assertThat(container.path("envFrom").path(0).path("configMapRef").path("name").asText()).isEqualTo("ensemble-services");
            List<String> args = new ArrayList<>();
            container.path("args").forEach(a -> args.add(a.asText()));
            assertThat(args.subList(0, 2)).isEqualTo(List.of("run", name));
            Map<String, String> substituted = new HashMap<>();
            env.forEach((k, v) -> substituted.put(k, v.replace("$(POD_NAME)", name + "-0").replace("$(POD_NAMESPACE)", "ns")));
            assertThat(ServiceEnvironment.problems(args, substituted)).as(name).isEmpty();
            // the stores on a volume per pod
            String claim = set.path("volumeClaimTemplates").path(0).path("metadata").path("name").asText();
            assertThat(claim).as("%s: a volume claim per pod", name).isNotEmpty();
            List<String> mounts = new ArrayList<>();
            container.path("volumeMounts").forEach(m -> { if (m.path("name").asText().equals(claim)) mounts.add(m.path("mountPath").asText()); });
            assertThat(mounts).as("%s: the claim is mounted at ENSEMBLE_STATE_DIR", name).containsExactly(env.get("ENSEMBLE_STATE_DIR"));
            JsonNode probe = container.path("readinessProbe");
            if (name.equals("gateway")) { // ready once its /health answers 200
                assertThat(probe.path("httpGet").path("path").asText()).as("%s: a readiness probe on /health", name).isEqualTo("/health");
            } else { // ready while run's --ready-file exists
                assertThat(env.get("ENSEMBLE_READY_FILE")).as("%s: a ready file", name).isNotBlank();
                assertThat(probe.path("exec").path("command").toString()).as("%s: a readiness probe on its ready file", name)
                        .isEqualTo("[\"test\",\"-f\",\"" + env.get("ENSEMBLE_READY_FILE") + "\"]");
            }
            for (JsonNode v : pod.path("volumes")) {
                assertThat(v.path("secret").path("secretName").asText()).as("%s: secrets the README names", name)
                        .isIn("ensemble-tokens", "ensemble-choice-secret");
            }
        }

        // the gateway: application.server is the pod's name in the headless service, on its HTTP port
        JsonNode gateway = byKindAndName.get("StatefulSet/gateway").path("spec");
        assertThat(gateway.path("replicas").asInt()).isEqualTo(2);
        assertThat(byKindAndName.get("StatefulSet/projector").path("spec").path("replicas").asInt()).isEqualTo(2);
        JsonNode container = gateway.path("template").path("spec").path("containers").path(0);
        Map<String, String> env = new HashMap<>();
        Map<String, String> fields = new HashMap<>();
        for (JsonNode e : container.path("env")) {
            if (e.has("value")) env.put(e.path("name").asText(), e.path("value").asText());
            else fields.put(e.path("name").asText(), e.path("valueFrom").path("fieldRef").path("fieldPath").asText());
        }
        assertThat(fields).containsEntry("POD_NAME", "metadata.name").containsEntry("POD_NAMESPACE", "metadata.namespace");
        int http = container.path("ports").path(0).path("containerPort").asInt();
        assertThat(env).containsEntry("ENSEMBLE_PORT", "" + http).containsEntry("ENSEMBLE_APPLICATION_SERVER",
                "$(POD_NAME)." + gateway.path("serviceName").asText() + ".$(POD_NAMESPACE).svc.cluster.local:" + http);
        assertThat(byKindAndName.get("Service/gateway-pods").path("spec").path("publishNotReadyAddresses").asBoolean()).isTrue();
        for (String svc : List.of("gateway", "gateway-pods")) {
            JsonNode port = byKindAndName.get("Service/" + svc).path("spec").path("ports").path(0);
            assertThat(port.path("port").asInt()).isEqualTo(http);
            assertThat(port.path("targetPort").asText()).isEqualTo(container.path("ports").path(0).path("name").asText());
        }
        JsonNode choice = byKindAndName.get("StatefulSet/choice").path("spec").path("template").path("spec").path("containers").path(0);
        assertThat(env.get("ENSEMBLE_CHOICE_URL")).isEqualTo("http://choice:" + byKindAndName.get("Service/choice").path("spec")
                .path("ports").path(0).path("port").asInt());
        assertThat(choice.path("ports").path(0).path("containerPort").asInt())
                .isEqualTo(byKindAndName.get("Service/choice").path("spec").path("ports").path(0).path("port").asInt());
    }

    /** The name of the volume {@code service} mounts at {@code path}. */
    private static String volumeOn(JsonNode service, String path) {
        for (JsonNode v : service.path("volumes")) {
            String target = v.isTextual() ? v.asText().split(":")[1] : v.path("target").asText();
            String source = v.isTextual() ? v.asText().split(":")[0] : v.path("source").asText();
            if (target.equals(path)) return source;
        }
        throw new AssertionError("no volume on " + path + " in " + service);
    }

    private static Map<String, String> strings(JsonNode object) {
        Map<String, String> out = new TreeMap<>();
        object.fields().forEachRemaining(e -> out.put(e.getKey(), e.getValue().asText()));
        return out;
    }

    static boolean onPath(String command) {
        String path = System.getenv("PATH");
        if (path == null) return false;
        for (String dir : path.split(File.pathSeparator)) {
            if (Files.isExecutable(Path.of(dir, command))) return true;
        }
        return false;
    }
}
