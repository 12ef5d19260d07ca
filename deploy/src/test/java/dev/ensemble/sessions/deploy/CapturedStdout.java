package dev.ensemble.sessions.deploy;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.function.IntSupplier;

/**
 * What a command printed to {@code System.out}, for the tests that read a command's printed tables. Logging is set up
 * before {@code System.out} is swapped: Log4j's console appender takes the stream it finds when it is made, so the
 * services' log lines stay on the real one instead of falling between the lines a test reads (they did when such a test
 * was the first of its JVM to log).
 */
final class CapturedStdout {
    static {
        org.slf4j.LoggerFactory.getLogger(CapturedStdout.class);
    }

    /** A command's exit code and what it printed. */
    record Printed(int code, String out) {
    }

    private CapturedStdout() {
    }

    /** Runs {@code command} with {@code System.out} captured (restored after, also when it throws). */
    static Printed run(IntSupplier command) {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        PrintStream before = System.out;
        int code;
        System.setOut(new PrintStream(bytes, true, StandardCharsets.UTF_8));
        try {
            code = command.getAsInt();
        } finally {
            System.setOut(before);
        }
        return new Printed(code, bytes.toString(StandardCharsets.UTF_8));
    }
}
