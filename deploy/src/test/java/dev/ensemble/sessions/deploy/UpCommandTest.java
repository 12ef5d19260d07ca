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
    void upMakesAnExistingDataFolderOwnerOnlyFirst(@TempDir Path dir) throws Exception {
        Path data = dir.resolve("data");
        Files.createDirectories(data);
        org.junit.jupiter.api.Assumptions.assumeTrue(data.getFileSystem().supportedFileAttributeViews().contains("posix"));
        Files.setPosixFilePermissions(data, java.nio.file.attribute.PosixFilePermissions.fromString("rwxr-xr-x"));
        Files.writeString(data.resolve("kafka"), "not a folder"); // ends this 'up' right after it prepared the folder
        CommandLine cli = EnsembleSessions.commandLine();
        cli.setErr(new PrintWriter(new StringWriter(), true));
        assertThat(cli.execute("up", "--data-dir", data.toString(), "--port", "0", "--kafka-port", "0", "--no-import")).isEqualTo(1);
        assertThat(java.nio.file.attribute.PosixFilePermissions.toString(Files.getPosixFilePermissions(data))).isEqualTo("rwx------");
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
        Path javaBin = Path.of(System.getProperty("java.home"), "bin", "java");
        Path log = dir.resolve("up.log");
        Process up = new ProcessBuilder(javaBin.toString(), "-Xmx1g", "-cp", System.getProperty("java.class.path"),
                EnsembleSessions.class.getName(), "up", "--data-dir", dir.resolve("data").toString(), "--port", "0",
                "--kafka-port", "0", "--no-import")
                .redirectErrorStream(true).redirectOutput(log.toFile()).start();
        try {
            long until = System.currentTimeMillis() + 240_000;
            while (!Files.readString(log).contains("Press Ctrl-C to stop")) {
                assertThat(up.isAlive()).as("up ended before it was ready:%n%s", Files.readString(log)).isTrue();
                assertThat(System.currentTimeMillis()).as("up was not ready in time:%n%s", Files.readString(log)).isLessThan(until);
                Thread.sleep(200);
            }
            up.destroy(); // SIGTERM
            assertThat(up.waitFor(120, java.util.concurrent.TimeUnit.SECONDS)).as("stopped in time").isTrue();
            String out = Files.readString(log);
            assertThat(up.exitValue()).as(out).isZero();
            assertThat(out).containsOnlyOnce("stopping…");
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
