package dev.ensemble.sessions.deploy;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;

import static org.assertj.core.api.Assertions.assertThat;

/** Waiting for {@code up}'s ready line reads only what its output gained since the last look. */
class UpProcessTest {
    @Test
    void theReadyLineIsFoundWhenItArrivesInPiecesAndEachLookReadsOnlyWhatWasAppended(@TempDir Path dir) throws Exception {
        Path log = Files.writeString(dir.resolve("up-1.log"), "starting …\n".repeat(10_000)); // more than one buffer
        String ready = UpProcess.READY;
        int split = ready.length() / 2;
        try (UpProcess.Watch w = new UpProcess.Watch(log, ready)) {
            assertThat(w.found()).isFalse();
            append(log, "Ready: http://localhost:8080\n" + ready.substring(0, split));
            assertThat(w.found()).isFalse();
            append(log, ready.substring(split) + "; starting again keeps everything.\n");
            assertThat(w.found()).isTrue();
            assertThat(w.bytesRead()).as("each byte read once").isEqualTo(Files.size(log));
            append(log, "later output\n");
            assertThat(w.found()).as("found stays found").isTrue();
        }
    }

    @Test
    void aTextNotThereIsNotFound(@TempDir Path dir) throws Exception {
        Path log = Files.writeString(dir.resolve("up-1.log"), "Press Ctrl-C\n to stop");
        try (UpProcess.Watch w = new UpProcess.Watch(log, UpProcess.READY)) {
            assertThat(w.found()).isFalse();
            assertThat(w.found()).isFalse();
        }
    }

    private static void append(Path file, String text) throws Exception {
        Files.writeString(file, text, StandardCharsets.UTF_8, StandardOpenOption.APPEND);
    }
}
