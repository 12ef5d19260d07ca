package dev.ensemble.sessions.deploy;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * {@code ensemble-sessions up} in a JVM of its own, as the launcher runs it (the same Java and class path as this one: the
 * launcher jar, whose manifest names its libraries), on a given data folder and HTTP port, with the embedded broker on
 * any free port and no import. Its output goes to a log file per start. It can be killed with SIGKILL ({@link #kill()},
 * as {@code kill -9}) and started again on the same folder.
 */
final class UpProcess implements AutoCloseable {
    /** The line {@code up} prints once it is ready. */
    static final String READY = "Press Ctrl-C to stop";

    private final Path dataDir;
    private final int port;
    private final List<String> javaOptions;
    private final Path logDir;
    private int starts;
    private Process process;
    private Path log;

    /**
     * @param dataDir     the data folder ({@code --data-dir})
     * @param port        the HTTP port ({@code --port}), the same at every start
     * @param javaOptions options of its JVM (e.g. {@code -Xmx2g})
     * @param logDir      where each start's output goes ({@code up-1.log}, {@code up-2.log}, …)
     */
    UpProcess(Path dataDir, int port, List<String> javaOptions, Path logDir) {
        this.dataDir = dataDir;
        this.port = port;
        this.javaOptions = List.copyOf(javaOptions);
        this.logDir = logDir;
    }

    /** The command line of one start. */
    List<String> command() {
        List<String> cmd = new ArrayList<>();
        cmd.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        cmd.addAll(javaOptions);
        cmd.add("-cp");
        cmd.add(System.getProperty("java.class.path"));
        cmd.add(EnsembleSessions.class.getName());
        cmd.addAll(List.of("up", "--data-dir", dataDir.toString(), "--port", Integer.toString(port), "--kafka-port", "0", "--no-import"));
        return cmd;
    }

    /** Starts it (not waiting for it to be ready). */
    synchronized void start() throws IOException {
        if (process != null && process.isAlive()) {
            throw new IllegalStateException("up runs already (process " + process.pid() + ")");
        }
        log = logDir.resolve("up-" + ++starts + ".log");
        process = new ProcessBuilder(command()).redirectErrorStream(true).redirectOutput(log.toFile()).start();
    }

    /**
     * Waits until it printed {@link #READY}, looking at what it wrote since the last look every 100 ms.
     *
     * @throws IllegalStateException when it ended or was not ready in time (with the end of its output)
     */
    void awaitReady(Duration timeout) throws IOException, InterruptedException {
        long until = System.nanoTime() + timeout.toNanos();
        Process p;
        Path l;
        synchronized (this) {
            p = process;
            l = log;
        }
        try (Watch output = new Watch(l, READY)) {
            while (!output.found()) {
                if (!p.isAlive()) {
                    throw new IllegalStateException("up ended (exit code " + p.exitValue() + ") before it was ready; its output ("
                            + l + ") ends with:\n" + tail(l));
                }
                if (System.nanoTime() > until) {
                    throw new IllegalStateException("up was not ready within " + timeout.toSeconds() + " s; its output (" + l
                            + ") ends with:\n" + tail(l));
                }
                Thread.sleep(100);
            }
        }
    }

    /**
     * Looks for a text in a file that grows (a process's output), reading only the bytes appended since the last look; the
     * text is found also when it spans two looks.
     */
    static final class Watch implements AutoCloseable {
        private final FileChannel channel;
        private final byte[] text;
        private final ByteBuffer buffer = ByteBuffer.allocate(64 * 1024);
        private byte[] carry = new byte[0]; // the end of what was read, shorter than the text: its start may be there
        private long read;
        private boolean found;

        Watch(Path file, String text) throws IOException {
            this.channel = FileChannel.open(file, StandardOpenOption.READ);
            this.text = text.getBytes(StandardCharsets.UTF_8);
        }

        /** Whether the file holds the text by now. */
        boolean found() throws IOException {
            int n;
            while (!found && (n = channel.read(buffer.clear())) > 0) {
                read += n;
                byte[] window = new byte[carry.length + n];
                System.arraycopy(carry, 0, window, 0, carry.length);
                System.arraycopy(buffer.array(), 0, window, carry.length, n);
                found = indexOf(window, text) >= 0;
                carry = Arrays.copyOfRange(window, Math.max(0, window.length - (text.length - 1)), window.length);
            }
            return found;
        }

        /** The bytes read so far. */
        long bytesRead() {
            return read;
        }

        private static int indexOf(byte[] in, byte[] what) {
            outer:
            for (int i = 0; i + what.length <= in.length; i++) {
                for (int j = 0; j < what.length; j++) {
                    if (in[i + j] != what[j]) {
                        continue outer;
                    }
                }
                return i;
            }
            return -1;
        }

        @Override
        public void close() throws IOException {
            channel.close();
        }
    }

    /** Kills it with SIGKILL ({@code kill -9}: nothing of it runs after this) and waits until it is gone. */
    void kill() throws InterruptedException {
        Process p;
        synchronized (this) {
            p = process;
        }
        p.destroyForcibly();
        p.waitFor();
    }

    /** Its process id. */
    synchronized long pid() {
        return process.pid();
    }

    /** The output of its latest start. */
    synchronized Path log() {
        return log;
    }

    /** Stops it as Ctrl-C does (SIGTERM, waiting up to two minutes), then forcibly if it has not ended. */
    @Override
    public void close() throws InterruptedException {
        Process p;
        synchronized (this) {
            p = process;
        }
        if (p == null || !p.isAlive()) {
            return;
        }
        p.destroy();
        if (!p.waitFor(120, TimeUnit.SECONDS)) {
            p.destroyForcibly();
            p.waitFor();
        }
    }

    /** Kills it at once, for a shutdown hook: a soak that is stopped leaves no {@code up} behind. */
    synchronized void killNow() {
        if (process != null) {
            process.destroyForcibly();
        }
    }

    static String tail(Path file) {
        try {
            List<String> lines = Files.readAllLines(file, StandardCharsets.UTF_8);
            return String.join("\n", lines.subList(Math.max(0, lines.size() - 30), lines.size()));
        } catch (IOException | java.io.UncheckedIOException e) {
            return "(unreadable: " + e.getMessage() + ")";
        }
    }
}
