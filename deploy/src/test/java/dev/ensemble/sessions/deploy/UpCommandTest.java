package dev.ensemble.sessions.deploy;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.net.BindException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;

import static org.assertj.core.api.Assertions.assertThat;

/** {@code up} when it cannot go on: one line saying why and what to change, a non-zero exit, nothing left running. */
class UpCommandTest {
    @Test
    void aTakenHttpPortEndsUpWithOneLineNamingThePortAndTheOptionBeforeAnythingStarts(@TempDir Path dir) throws Exception {
        try (ServerSocket taken = new ServerSocket(0, 50, InetAddress.getByName("127.0.0.1"))) {
            int port = taken.getLocalPort();
            StringWriter err = new StringWriter();
            CommandLine cli = EnsembleSessions.commandLine();
            cli.setErr(new PrintWriter(err, true));
            int code = cli.execute("up", "--data-dir", dir.toString(), "--port", String.valueOf(port), "--no-import");
            assertThat(code).isEqualTo(1);
            assertThat(err.toString()).isEqualTo("error: port " + port + " is in use (by another program, or an 'up' already"
                    + " running); stop it or choose another HTTP port with --port" + System.lineSeparator());
            assertThat(dir.resolve("kafka")).as("no broker was started").doesNotExist();
            assertThat(dir.resolve("state")).as("no service was started").doesNotExist();
        }
    }

    @Test
    void aDataFolderInUseEndsUpWithOneLineNamingTheFolderItsHolderAndTheOptionAndStartsNothing(@TempDir Path dir) throws Exception {
        Path data = dir.resolve("data");
        try (AutoCloseable running = LocalKafka.holdDataFolder(data)) { // as the broker of an 'up' already running
            StringWriter err = new StringWriter();
            CommandLine cli = EnsembleSessions.commandLine();
            cli.setErr(new PrintWriter(err, true));
            int code = cli.execute("up", "--data-dir", data.toString(), "--port", "0", "--kafka-port", "0", "--no-import");
            assertThat(code).isEqualTo(1);
            long pid = ProcessHandle.current().pid(); // the holder here: this test's JVM, whose command is neither
            assertThat(err.toString()).isEqualTo("error: the data folder " + data + " is in use by another 'up' or 'rebuild'"
                    + " (process " + pid + "); stop it or choose another data folder with --data-dir" + System.lineSeparator());
            assertThat(data.resolve("kafka/metadata")).as("the broker's storage was not touched").doesNotExist();
            assertThat(data.resolve("state")).as("no service was started").doesNotExist();
            assertThat(data.resolve("token")).as("no token was issued").doesNotExist();
        }
    }

    @Test
    void aSecondUpOnTheSameFolderIsToldTheFolderIsInUseNotThatTheFirstOnesPortIsTaken(@TempDir Path dir) throws Exception {
        Path data = dir.resolve("data");
        try (AutoCloseable running = LocalKafka.holdDataFolder(data); // the first 'up': its broker's folder …
             ServerSocket taken = new ServerSocket(0, 50, InetAddress.getByName("127.0.0.1"))) { // … and its HTTP port
            StringWriter err = new StringWriter();
            CommandLine cli = EnsembleSessions.commandLine();
            cli.setErr(new PrintWriter(err, true));
            int code = cli.execute("up", "--data-dir", data.toString(), "--port", String.valueOf(taken.getLocalPort()), "--no-import");
            assertThat(code).isEqualTo(1);
            assertThat(err.toString()).startsWith("error: the data folder " + data + " is in use by another 'up' or 'rebuild'")
                    .doesNotContain("port");
            assertThat(data.resolve("state")).as("no service was started").doesNotExist();
        }
    }

    @Test
    void aPortOutOfRangeEndsUpWithOneLineNamingTheOption(@TempDir Path dir) {
        for (String[] option : new String[][]{{"--port", "70000"}, {"--kafka-port", "-1"}}) {
            StringWriter err = new StringWriter();
            CommandLine cli = EnsembleSessions.commandLine();
            cli.setErr(new PrintWriter(err, true));
            int code = cli.execute("up", "--data-dir", dir.resolve("data").toString(), option[0], option[1], "--no-import");
            assertThat(code).isEqualTo(2);
            assertThat(err.toString()).startsWith(option[0] + " must be a port from 0 to 65535 (0: any free one), not " + option[1]);
            assertThat(dir.resolve("data")).as("nothing was created").doesNotExist();
        }
    }

    @Test
    void aPollIntervalBelowOneSecondIsRefusedBeforeAnythingStartsAlsoWithoutTheImport(@TempDir Path dir) {
        for (String[] args : new String[][]{{"--poll-seconds", "-5"}, {"--poll-seconds", "0"}, {"--poll-seconds", "-5", "--no-import"}}) {
            StringWriter err = new StringWriter();
            CommandLine cli = EnsembleSessions.commandLine();
            cli.setErr(new PrintWriter(err, true));
            java.util.List<String> all = new java.util.ArrayList<>(java.util.List.of("up", "--data-dir", dir.resolve("data").toString(),
                    "--port", "0", "--kafka-port", "0"));
            all.addAll(java.util.List.of(args));
            assertThat(cli.execute(all.toArray(String[]::new))).as(all.toString()).isEqualTo(2);
            assertThat(err.toString()).as(all.toString()).startsWith("--poll-seconds must be 1 or more, not " + args[1]
                    + System.lineSeparator()).doesNotContain("Exception").doesNotContain("\tat ");
            assertThat(dir.resolve("data")).as("nothing was created").doesNotExist();
        }
    }

    @Test
    void aDataFolderTheBrokerCannotUseEndsUpWithOneLineNamingTheFolderAndTheReason(@TempDir Path dir) throws Exception {
        Path data = Files.createDirectories(dir.resolve("data"));
        Files.writeString(data.resolve("computer-id"), "laptop\n"); // a data folder of an earlier start
        Files.writeString(data.resolve("kafka"), "not a folder"); // where the broker's folder should be
        StringWriter err = new StringWriter();
        CommandLine cli = EnsembleSessions.commandLine();
        cli.setErr(new PrintWriter(err, true));
        assertThat(cli.execute("up", "--data-dir", data.toString(), "--port", "0", "--kafka-port", "0", "--no-import")).isEqualTo(1);
        assertThat(err.toString()).isEqualTo("error: cannot create the Kafka data folder " + data.resolve("kafka")
                + ": a file is in the way; give another --data-dir" + System.lineSeparator());
        assertThat(data.resolve("state")).as("no service was started").doesNotExist();
        assertThat(data.resolve("token")).as("no token was issued").doesNotExist();

        Path file = Files.writeString(dir.resolve("notes.txt"), "x"); // a data folder under a file cannot be made
        err.getBuffer().setLength(0);
        assertThat(cli.execute("up", "--data-dir", file.resolve("data").toString(), "--port", "0", "--kafka-port", "0", "--no-import"))
                .isEqualTo(1);
        assertThat(err.toString()).isEqualTo("error: cannot create the data folder " + file.resolve("data") + ": a file is in the way: "
                + file + "; give another --data-dir" + System.lineSeparator());
    }

    @Test
    void upMakesAnExistingDataFolderOwnerOnlyFirst(@TempDir Path dir) throws Exception {
        Path data = dir.resolve("data");
        Files.createDirectories(data);
        org.junit.jupiter.api.Assumptions.assumeTrue(data.getFileSystem().supportedFileAttributeViews().contains("posix"));
        Files.setPosixFilePermissions(data, java.nio.file.attribute.PosixFilePermissions.fromString("rwxr-xr-x"));
        Files.writeString(data.resolve("computer-id"), "laptop\n"); // a data folder of an earlier start
        Files.writeString(data.resolve("kafka"), "not a folder"); // ends this 'up' right after it prepared the folder
        CommandLine cli = EnsembleSessions.commandLine();
        cli.setErr(new PrintWriter(new StringWriter(), true));
        assertThat(cli.execute("up", "--data-dir", data.toString(), "--port", "0", "--kafka-port", "0", "--no-import")).isEqualTo(1);
        assertThat(java.nio.file.attribute.PosixFilePermissions.toString(Files.getPosixFilePermissions(data))).isEqualTo("rwx------");
    }

    @Test
    void clientPropertiesGoWithBootstrapServersAndAnUnreadableFileIsNamed(@TempDir Path dir) {
        for (String cmd : new String[]{"up", "rebuild", "recalibrate"}) {
            StringWriter err = new StringWriter();
            CommandLine cli = EnsembleSessions.commandLine();
            cli.setErr(new PrintWriter(err, true));
            java.util.List<String> args = new java.util.ArrayList<>(java.util.List.of(cmd, "--data-dir", dir.resolve("data").toString(),
                    "--client-properties", dir.resolve("client.properties").toString()));
            if (cmd.equals("recalibrate")) args.addAll(java.util.List.of("--config", dir.resolve("c.json").toString()));
            if (!cmd.equals("recalibrate")) {
                assertThat(cli.execute(args.toArray(String[]::new))).as(cmd).isEqualTo(2);
                assertThat(err.toString()).as(cmd).startsWith("--client-properties goes with --bootstrap-servers (the embedded broker's "
                        + "clients use <data-dir>/kafka-client.properties)");
            }
            err.getBuffer().setLength(0);
            args.addAll(java.util.List.of("--bootstrap-servers", "127.0.0.1:1"));
            assertThat(cli.execute(args.toArray(String[]::new))).as(cmd).isEqualTo(1);
            if (!cmd.equals("recalibrate")) { // recalibrate reads its --config first
                assertThat(err.toString()).as(cmd).startsWith("error: cannot read the Kafka client properties file "
                        + dir.resolve("client.properties"));
            }
        }
        assertThat(dir.resolve("data")).as("nothing was created").doesNotExist();
    }

    /** The static members' instance id: Kafka's characters only, and short enough for Kafka's 249 with Streams' thread suffix. */
    @Test
    void theInstanceIdTakesOnlyKafkasCharactersAndStaysUnderItsLengthLimit() {
        assertThat(UpCommand.instanceId("vm-4b200a05")).isEqualTo("up-vm-4b200a05");
        assertThat(UpCommand.instanceId("my pc/\u00fc")).isEqualTo("up-my-pc--");
        String longId = "pc-" + "x".repeat(297);
        String cut = UpCommand.instanceId(longId);
        assertThat(cut).hasSize(UpCommand.INSTANCE_ID_CHARS).startsWith("up-pc-xxx").matches("[A-Za-z0-9._-]+");
        assertThat((cut + "-1").length()).isLessThanOrEqualTo(249);
        assertThat(UpCommand.instanceId(longId + "y")).as("two long ids apart").isNotEqualTo(cut).hasSize(UpCommand.INSTANCE_ID_CHARS);
        assertThat(UpCommand.staticMembership(java.util.Map.of("security.protocol", "SASL_PLAINTEXT"), "vm-1"))
                .containsEntry("main.consumer.group.instance.id", "up-vm-1").containsEntry("security.protocol", "SASL_PLAINTEXT");
    }

    @Test
    void theHolderOfADataFolderIsNamedByItsCommand() {
        assertThat(UpCommand.holder(4242, java.util.List.of("-Xmx2g", "-jar", "/x/ensemble-sessions.jar", "up", "--port", "8081")))
                .isEqualTo("another 'up' (process 4242)");
        assertThat(UpCommand.holder(4242, java.util.List.of("-jar", "ensemble-sessions.jar", "rebuild")))
                .isEqualTo("a 'rebuild' (process 4242)");
        assertThat(UpCommand.holder(4242, java.util.List.of())).isEqualTo("another 'up' or 'rebuild' (process 4242)");
    }

    /**
     * The real command in a JVM of its own, as {@code deploy/ensemble-sessions up} runs it (embedded broker, every
     * service): SIGTERM once it is ready stops everything and ends it with exit code 0, as Ctrl-C does.
     */
    @Test
    @org.junit.jupiter.api.Timeout(value = 5, unit = java.util.concurrent.TimeUnit.MINUTES)
    void sigtermAfterReadyStopsEverythingAndExitsZero(@TempDir Path dir) throws Exception {
        Path log = dir.resolve("up.log");
        Process up = startUp(dir.resolve("data"), log, java.util.List.of("--no-import"));
        try {
            awaitLine(up, log, "Press Ctrl-C to stop");
            assertThat(Files.readString(dir.resolve("data").resolve("computer-id")).strip())
                    .as("this computer's id, which choose asks in, also with --no-import").isNotBlank();
            up.destroy(); // SIGTERM
            assertThat(up.waitFor(120, java.util.concurrent.TimeUnit.SECONDS)).as("stopped in time").isTrue();
            String out = Files.readString(log);
            assertThat(up.exitValue()).as(out).isZero();
            assertThat(out).containsOnlyOnce("stopping…");
        } finally {
            up.destroyForcibly();
        }
    }

    /**
     * The real command in a JVM of its own, twice on one data folder, importing the example stores (those of
     * {@code ../shared/data/agent-stores} when present, else the computer agent's test fixtures): every service works
     * through the broker's SASL listener (the sessions are listed over HTTP), a plain Kafka client is refused while the
     * example consumer with {@code <data-dir>/kafka-client.properties} reads the log, and neither start prints an
     * {@code ERROR} line (issue 14, items 6 and 7).
     */
    @Test
    @org.junit.jupiter.api.Timeout(value = 10, unit = java.util.concurrent.TimeUnit.MINUTES)
    void upServesTheImportedSessionsThroughTheAuthenticatedBrokerAndStartsTwiceWithoutAnError(@TempDir Path dir) throws Exception {
        Path stores = dev.ensemble.sessions.schema.testing.SharedData.path("data/agent-stores");
        Path claude = stores.resolve("claude/projects");
        Path codex = stores.resolve("codex/sessions");
        if (!Files.isDirectory(claude) || !Files.isDirectory(codex)) {
            Path fixtures = dev.ensemble.sessions.schema.testing.SharedData.projectRoot().resolve("computer-agent/src/test/resources/fixtures");
            claude = fixtures.resolve("claude");
            codex = fixtures.resolve("codex");
        }
        Path data = dir.resolve("data");
        java.util.List<String> args = java.util.List.of("--claude-dir", claude.toString(), "--codex-dir", codex.toString(),
                "--poll-seconds", "3600", "--account", "acct-up");
        String first = runUp(dir, data, "first", args, () -> {
            com.fasterxml.jackson.databind.JsonNode endpoints = DataDir.JSON.readTree(data.resolve("endpoints.json").toFile());
            String bootstrap = endpoints.path("bootstrapServers").asText();
            Path credentials = data.resolve(LocalKafka.CLIENT_PROPERTIES);
            assertThat(endpoints.path("clientProperties").asText()).isEqualTo(credentials.toString());
            String token = Files.readString(data.resolve("token")).strip();
            String computerToken = Files.readString(data.resolve("computer-token")).strip();
            assertThat(computerToken).as("the computer's own token, for assistant-turn").startsWith("es_").isNotEqualTo(token);
            String computerId = Files.readString(data.resolve("computer-id")).strip();
            assertThat(dev.ensemble.sessions.gateway.Tokens.load(data.resolve("tokens.json")).authenticate(computerToken))
                    .as("the computer token acts as this computer").contains(
                            new dev.ensemble.sessions.gateway.Principal("acct-up", "computer", computerId));
            java.net.http.HttpClient http = java.net.http.HttpClient.newHttpClient();
            int sessions = 0;
            long until = System.currentTimeMillis() + 90_000;
            while (sessions == 0 && System.currentTimeMillis() < until) {
                java.net.http.HttpResponse<String> r = http.send(java.net.http.HttpRequest.newBuilder(
                                java.net.URI.create(endpoints.path("http").asText() + "/api/agent/sessions"))
                        .header("Authorization", "Bearer " + token).build(), java.net.http.HttpResponse.BodyHandlers.ofString());
                if (r.statusCode() == 200) sessions = DataDir.JSON.readTree(r.body()).path("sessions").size();
                if (sessions == 0) Thread.sleep(500);
            }
            assertThat(sessions).as("sessions listed over HTTP").isPositive();
            // an event posted over HTTP goes through the gateway's own (transactional) producers to the log
            String event = "{\"eventId\":\"f0000000-0000-0000-0000-0000000000a1\",\"type\":\"ComputerStatus\",\"account\":\"acct-up\","
                    + "\"space\":\"local:pc\",\"occurredAt\":\"2026-11-02T09:00:00Z\",\"source\":\"computer:pc\","
                    + "\"payload\":{\"computerId\":\"pc\",\"online\":true}}";
            java.net.http.HttpResponse<String> posted = http.send(java.net.http.HttpRequest.newBuilder(
                            java.net.URI.create(endpoints.path("http").asText() + "/api/events"))
                    .header("Authorization", "Bearer " + token).header("Content-Type", "application/json")
                    .timeout(java.time.Duration.ofSeconds(90))
                    .POST(java.net.http.HttpRequest.BodyPublishers.ofString(event)).build(), java.net.http.HttpResponse.BodyHandlers.ofString());
            assertThat(posted.statusCode()).as(posted.body()).isEqualTo(200);
            assertThat(DataDir.JSON.readTree(posted.body()).path("accepted").asInt()).as(posted.body()).isEqualTo(1);

            // a plain consumer reads nothing of the event log; the example consumer with the credentials file reads it
            java.util.List<Object> plain = new java.util.ArrayList<>();
            try (org.apache.kafka.clients.consumer.KafkaConsumer<byte[], byte[]> c = new org.apache.kafka.clients.consumer.KafkaConsumer<>(
                    java.util.Map.of("bootstrap.servers", bootstrap), new org.apache.kafka.common.serialization.ByteArrayDeserializer(),
                    new org.apache.kafka.common.serialization.ByteArrayDeserializer())) {
                java.util.List<org.apache.kafka.common.TopicPartition> parts = java.util.List.of(
                        new org.apache.kafka.common.TopicPartition(dev.ensemble.sessions.schema.Topics.EVENTS.name(), 0),
                        new org.apache.kafka.common.TopicPartition(dev.ensemble.sessions.schema.Topics.EVENTS.name(), 1));
                c.assign(parts);
                c.seekToBeginning(parts);
                long stop = System.currentTimeMillis() + 5_000;
                while (System.currentTimeMillis() < stop) c.poll(java.time.Duration.ofMillis(200)).forEach(plain::add);
            }
            assertThat(plain).as("what a consumer without the credentials read").isEmpty();
            long read = dev.ensemble.sessions.deploy.examples.SessionEventsConsumer.consume(bootstrap, KafkaClientProperties.load(credentials),
                    "up-command-test", 1, java.time.Duration.ofSeconds(60), e -> { });
            assertThat(read).as("events the example consumer read with the credentials").isPositive();

            // every Kafka Streams application's consumer is a static member named for this computer, so a start after a
            // crash takes its partitions back at once (UpCommand#staticMembership)
            try (org.apache.kafka.clients.admin.Admin admin = org.apache.kafka.clients.admin.Admin.create(
                    dev.ensemble.sessions.schema.KafkaClients.config(bootstrap, KafkaClientProperties.load(credentials)))) {
                java.util.List<String> groups = admin.listConsumerGroups().all().get().stream()
                        .map(org.apache.kafka.clients.admin.ConsumerGroupListing::groupId).toList();
                java.util.Map<String, String> instanceOfStreamsMember = new java.util.TreeMap<>();
                admin.describeConsumerGroups(groups).all().get().forEach((group, d) -> d.members().forEach(m -> {
                    if (m.clientId().contains("StreamThread")) {
                        instanceOfStreamsMember.put(group + " " + m.clientId(), m.groupInstanceId().orElse("(none)"));
                    }
                }));
                assertThat(instanceOfStreamsMember.keySet()).as("the Streams applications' members")
                        .anyMatch(k -> k.startsWith("ensemble-projector")).anyMatch(k -> k.startsWith("ensemble-cleanup"))
                        .anyMatch(k -> k.startsWith("ensemble-choice")).anyMatch(k -> k.startsWith("ensemble-gateway"));
                assertThat(instanceOfStreamsMember.values()).as(instanceOfStreamsMember.toString())
                        .allMatch(id -> id.equals("up-" + computerId + "-1"));
            }
        });
        assertThat(errorLines(first)).as("ERROR lines of the first start").isEmpty();
        String computerToken = Files.readString(data.resolve("computer-token"));
        String second = runUp(dir, data, "second", args, () -> { });
        assertThat(second).contains("Ready: ");
        for (String out : java.util.List.of(first, second)) { // the import's summary, printed from its own thread, never inside the block
            java.util.List<String> lines = out.lines().toList();
            int ready = java.util.stream.IntStream.range(0, lines.size()).filter(i -> lines.get(i).startsWith("Ready: ")).findFirst().orElseThrow();
            assertThat(lines.subList(ready + 1, ready + 6)).as(out).satisfiesExactly(
                    l -> assertThat(l).startsWith("Web page: "), l -> assertThat(l).startsWith("Your token is in "),
                    l -> assertThat(l).startsWith("  curl "), l -> assertThat(l).startsWith("Metrics (Prometheus): "),
                    l -> assertThat(l).startsWith("Press Ctrl-C to stop"));
        }
        assertThat(Files.readString(data.resolve("computer-token"))).as("the computer token kept across a restart")
                .isEqualTo(computerToken);
        assertThat(errorLines(second)).as("ERROR lines of the second start").isEmpty();
    }

    /**
     * {@code up} runs every service in one JVM with one registry, served at {@code GET /metrics} behind the scrape token
     * in {@code <data-dir>/metrics-token} (issue 19, item 4): the scrape (read strictly as the Prometheus text format) has
     * the JVM's series, the Kafka Streams metrics of the projector, the cleanup, the choice service and the gateway's read
     * side, the importer's files, transcripts and lag and its producer's metrics; a session choice moves the decisions by
     * band and note, a deletion the projector's deletion outcomes.
     */
    @Test
    @org.junit.jupiter.api.Timeout(value = 10, unit = java.util.concurrent.TimeUnit.MINUTES)
    void upServesEveryServicesMetricsInOneScrapeBehindTheScrapeToken(@TempDir Path dir) throws Exception {
        Path fixtures = dev.ensemble.sessions.schema.testing.SharedData.projectRoot().resolve("computer-agent/src/test/resources/fixtures");
        Path stores = dir.resolve("stores"); // a copy: the deletion below removes a transcript
        try (java.util.stream.Stream<Path> all = Files.walk(fixtures)) {
            for (Path p : (Iterable<Path>) all::iterator) {
                Path to = stores.resolve(fixtures.relativize(p).toString());
                if (Files.isDirectory(p)) Files.createDirectories(to);
                else Files.copy(p, to);
            }
        }
        Path data = dir.resolve("data");
        java.util.List<String> args = java.util.List.of("--claude-dir", stores.resolve("claude").toString(), "--codex-dir",
                stores.resolve("codex").toString(), "--poll-seconds", "3600", "--account", "acct-up");
        String out = runUp(dir, data, "metrics", args, () -> {
            String url = DataDir.JSON.readTree(data.resolve("endpoints.json").toFile()).path("http").asText();
            String token = Files.readString(data.resolve("token")).strip();
            String scrapeToken = Files.readString(data.resolve("metrics-token")).strip();
            assertThat(Files.getPosixFilePermissions(data.resolve("metrics-token")))
                    .isEqualTo(java.nio.file.attribute.PosixFilePermissions.fromString("rw-------"));
            java.net.http.HttpClient http = java.net.http.HttpClient.newHttpClient();
            java.util.function.BiFunction<String, String, java.net.http.HttpResponse<String>> get = (path, bearer) -> {
                try {
                    java.net.http.HttpRequest.Builder b = java.net.http.HttpRequest.newBuilder(java.net.URI.create(url + path));
                    if (bearer != null) b.header("Authorization", "Bearer " + bearer);
                    return http.send(b.build(), java.net.http.HttpResponse.BodyHandlers.ofString());
                } catch (Exception e) {
                    throw new AssertionError(e);
                }
            };
            assertThat(get.apply("/metrics", null).statusCode()).isEqualTo(401);
            assertThat(get.apply("/metrics", token).statusCode()).as("the API token does not open /metrics").isEqualTo(401);
            // the first import is done once its sessions are listed
            com.fasterxml.jackson.databind.JsonNode sessions = null;
            long until = System.currentTimeMillis() + 120_000;
            while (System.currentTimeMillis() < until) {
                java.net.http.HttpResponse<String> r = get.apply("/api/agent/sessions", token);
                if (r.statusCode() == 200 && DataDir.JSON.readTree(r.body()).path("sessions").size() > 0) {
                    sessions = DataDir.JSON.readTree(r.body()).path("sessions");
                    break;
                }
                Thread.sleep(500);
            }
            assertThat(sessions).as("sessions listed over HTTP").isNotNull();
            java.util.function.Supplier<dev.ensemble.sessions.schema.testing.PrometheusText> scrape = () -> {
                java.net.http.HttpResponse<String> r = get.apply("/metrics", scrapeToken);
                assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
                return dev.ensemble.sessions.schema.testing.PrometheusText.parse(r.body());
            };
            dev.ensemble.sessions.schema.testing.PrometheusText m = scrape.get();
            assertThat(m.value("jvm_memory_used_bytes", java.util.Map.of("area", "heap"))).isPositive();
            for (String service : java.util.List.of("projector", "cleanup", "choice", "gateway")) {
                assertThat(m.series("kafka_stream_thread_process_total")).as("the Streams metrics of the %s", service)
                        .anyMatch(x -> service.equals(x.labels().get("service")));
            }
            assertThat(m.series("kafka_producer_record_send_total")).as("the importer's producer sent the import")
                    .anyMatch(x -> "computer-agent".equals(x.labels().get("service")) && x.value() > 0);
            assertThat(m.series("ensemble_import_files_read_total").stream().mapToDouble(x -> x.value()).sum()).isPositive();
            assertThat(m.series("ensemble_import_transcripts").stream().mapToDouble(x -> x.value()).sum()).isPositive();
            assertThat(m.value("ensemble_import_events_total", java.util.Map.of())).isPositive();
            assertThat(m.value("ensemble_import_lag_seconds", java.util.Map.of())).isNotNaN().isGreaterThanOrEqualTo(0.0);

            // a session choice: the decisions by band and note move
            String claim = "{\"eventId\":\"c0000000-0000-4000-8000-0000000000c1\",\"type\":\"RunClaimed\",\"account\":\"acct-up\","
                    + "\"space\":\"local:pc\",\"occurredAt\":\"2026-11-02T12:00:00Z\",\"source\":\"computer:pc\",\"payload\":{"
                    + "\"runId\":\"job-metrics\",\"taskId\":\"task-metrics\",\"computerId\":\"pc\",\"agent\":\"claude-code\","
                    + "\"kind\":\"TASK_RUN\",\"project\":{\"id\":\"proj\",\"name\":\"Proj\"},"
                    + "\"task\":{\"title\":\"Count the requests\",\"labels\":[],\"linkedTaskIds\":[]}}}";
            java.net.http.HttpResponse<String> decided = null;
            until = System.currentTimeMillis() + 60_000;
            while (System.currentTimeMillis() < until) {
                decided = http.send(java.net.http.HttpRequest.newBuilder(java.net.URI.create(url + "/api/session-choice"))
                        .header("Authorization", "Bearer " + token).header("Content-Type", "application/json")
                        .POST(java.net.http.HttpRequest.BodyPublishers.ofString(claim)).build(), java.net.http.HttpResponse.BodyHandlers.ofString());
                if (decided.statusCode() != 503) break;
                Thread.sleep(500);
            }
            assertThat(decided.statusCode()).as(decided.body()).isEqualTo(200);
            com.fasterxml.jackson.databind.JsonNode d = DataDir.JSON.readTree(decided.body());
            dev.ensemble.sessions.schema.testing.PrometheusText afterChoice = scrape.get();
            assertThat(afterChoice.value("ensemble_choice_decisions_total", java.util.Map.of("band", d.path("band").asText(),
                    "note", d.path("note").isTextual() ? d.path("note").asText() : "none"))).isEqualTo(1.0);

            // a deletion: the projector's guard decides, and its outcome is counted
            String id = sessions.get(0).path("id").asText();
            java.net.http.HttpResponse<String> deleted = http.send(java.net.http.HttpRequest.newBuilder(
                            java.net.URI.create(url + "/api/agent/sessions/" + id)).header("Authorization", "Bearer " + token)
                    .DELETE().build(), java.net.http.HttpResponse.BodyHandlers.ofString());
            assertThat(deleted.statusCode()).as(deleted.body()).isEqualTo(202);
            double outcomes = 0;
            until = System.currentTimeMillis() + 60_000;
            while (outcomes == 0 && System.currentTimeMillis() < until) {
                outcomes = scrape.get().series("ensemble_deletions_total").stream().mapToDouble(x -> x.value()).sum();
                if (outcomes == 0) Thread.sleep(500);
            }
            assertThat(outcomes).as("deletion outcomes counted").isPositive();
        });
        assertThat(out).contains("/metrics with the scrape token in " + data.resolve("metrics-token"));
    }

    /** The lines of {@code log} at level ERROR (the console layout's level column), with the line after each. */
    private static java.util.List<String> errorLines(String log) {
        String[] lines = log.split("\\R");
        java.util.List<String> out = new java.util.ArrayList<>();
        for (int i = 0; i < lines.length; i++) {
            if (lines[i].matches("^\\d\\d:\\d\\d:\\d\\d\\.\\d{3} ERROR .*")) out.add(lines[i] + (i + 1 < lines.length ? " / " + lines[i + 1] : ""));
        }
        return out;
    }

    /** What must be checked while {@code up} runs. */
    private interface WhileRunning {
        void check() throws Exception;
    }

    /** Starts {@code up --data-dir data --port 0 --kafka-port 0 extra...} in a JVM of its own, its output to {@code log}. */
    private static Process startUp(Path data, Path log, java.util.List<String> extra) throws IOException {
        java.util.List<String> command = new java.util.ArrayList<>(java.util.List.of(
                Path.of(System.getProperty("java.home"), "bin", "java").toString(), "-Xmx1g", "-cp",
                System.getProperty("java.class.path"), EnsembleSessions.class.getName(), "up", "--data-dir", data.toString(),
                "--port", "0", "--kafka-port", "0"));
        command.addAll(extra);
        return new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(log.toFile()).start();
    }

    /** Waits (up to 4 minutes) until {@code up}'s output holds {@code line}; fails when it ends before. */
    private static void awaitLine(Process up, Path log, String line) throws Exception {
        long until = System.currentTimeMillis() + 240_000;
        while (!Files.readString(log).contains(line)) {
            assertThat(up.isAlive()).as("up ended before '%s':%n%s", line, Files.readString(log)).isTrue();
            assertThat(System.currentTimeMillis()).as("no '%s' in time:%n%s", line, Files.readString(log)).isLessThan(until);
            Thread.sleep(50);
        }
    }

    /** Runs {@code up} in a JVM of its own until ready, runs {@code whileRunning}, stops it (SIGTERM) and returns what it printed. */
    private static String runUp(Path dir, Path data, String name, java.util.List<String> extra, WhileRunning whileRunning) throws Exception {
        Path log = dir.resolve(name + ".log");
        Process up = startUp(data, log, extra);
        try {
            awaitLine(up, log, "Press Ctrl-C to stop");
            whileRunning.check();
            up.destroy(); // SIGTERM
            assertThat(up.waitFor(120, java.util.concurrent.TimeUnit.SECONDS)).as("stopped in time").isTrue();
            return Files.readString(log);
        } finally {
            up.destroyForcibly();
        }
    }

    /**
     * SIGTERM while the services start (the projector running, the others starting): the start stops at its next step,
     * what started stops newest first and the broker last, so no client is left trying to reach it, and up ends with 143.
     */
    @Test
    void stoppedWhileStartingItStopsWhatStartedBeforeTheBrokerAndEndsWith143(@TempDir Path dir) throws Exception {
        Path log = dir.resolve("early.log");
        Process up = startUp(dir.resolve("data"), log, java.util.List.of("--no-import"));
        try {
            awaitLine(up, log, "projector g1 started");
            up.destroy(); // SIGTERM
            while (up.isAlive() && !Files.readString(log).contains("stopping…")) {
                Thread.sleep(20);
            }
            up.destroy(); // a second SIGTERM while it stops: it still stops everything, the broker included
            assertThat(up.waitFor(120, java.util.concurrent.TimeUnit.SECONDS)).as("stopped in time").isTrue();
            String out = Files.readString(log);
            assertThat(out).as(out).doesNotContain("Press Ctrl-C to stop").contains("stopping…");
            assertThat(out.split("stopping…", -1)).as("said once").hasSize(2);
            assertThat(up.exitValue()).as(out).isEqualTo(143);
            String afterStop = out.substring(out.indexOf("stopping…"));
            assertThat(afterStop.lines().filter(l -> l.contains("NetworkClient") || l.contains(" ERROR ")))
                    .as("no client left reaching the stopped broker, no error:%n%s", out).isEmpty();
            int projectorStopped = afterStop.indexOf("projector stopped");
            int brokerStopped = afterStop.indexOf("Local Kafka broker on ");
            assertThat(projectorStopped).as(out).isNotNegative();
            assertThat(brokerStopped).as("the broker stops last:%n%s", out).isGreaterThan(projectorStopped);
        } finally {
            up.destroyForcibly();
        }
    }

    @Test
    void aPortTakenWhileStartingIsReportedTheSameWayFromTheGatewaysFailure() {
        // the gateway's failure as Javalin reports it: its own exception over Jetty's, over the socket's
        RuntimeException javalin = new RuntimeException("Port already in use. Make sure no other process is using port 8080",
                new IOException("Failed to bind to /127.0.0.1:8080", new BindException("Address already in use")));
        assertThat(UpCommand.bindFailure(javalin)).hasValueSatisfying(b -> assertThat(UpCommand.cannotListen(8080, b))
                .hasMessage("port 8080 is in use (by another program, or an 'up' already running); stop it or choose another HTTP port with --port"));
        assertThat(UpCommand.bindFailure(new IllegalStateException("something else"))).isEmpty();
        assertThat(UpCommand.cannotListen(80, new BindException("Permission denied")))
                .hasMessage("cannot listen on port 80 (Permission denied); choose another HTTP port with --port");
    }
}
