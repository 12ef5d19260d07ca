package dev.ensemble.sessions.agent;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class ImportConfigTest {
    @TempDir
    Path tmp;

    @Test
    void computerIdIsHostnameAndEightRandomHexDigitsCreatedOnceAndKept() throws Exception {
        Path file = tmp.resolve("state/computer-id");

        String id = ComputerId.readOrCreate(file);

        assertThat(id).matches("[a-z0-9.-]+-[0-9a-f]{8}");
        assertThat(Files.readString(file).trim()).isEqualTo(id);
        assertThat(ComputerId.readOrCreate(file)).isEqualTo(id);
    }

    @Test
    void computerIdReadsAnExistingFile() throws Exception {
        Path file = tmp.resolve("computer-id");
        Files.writeString(file, "desk-0123abcd\n");

        assertThat(ComputerId.readOrCreate(file)).isEqualTo("desk-0123abcd");
    }

    @Test
    void hostnameIsMadeSafe() {
        assertThat(ComputerId.create("Ana's MacBook Pro.local")).matches("ana-s-macbook-pro\\.local-[0-9a-f]{8}");
        assertThat(ComputerId.create(null)).matches("computer-[0-9a-f]{8}");
        assertThat(ComputerId.create("x")).isNotEqualTo(ComputerId.create("x"));
    }

    @Test
    void defaultsAreTheLocalPersonAndTheKeptComputerId() {
        Path idFile = tmp.resolve("computer-id");
        ImportConfig config = ImportConfig.defaults(idFile, tmp.resolve("state.json"));

        assertThat(config.account()).isEqualTo(System.getProperty("user.name"));
        assertThat(config.computerId()).isEqualTo(ComputerId.readOrCreate(idFile));
        assertThat(config.stateFile()).isEqualTo(tmp.resolve("state.json"));
        assertThat(ImportConfig.defaults(idFile, tmp.resolve("state.json")).computerId()).isEqualTo(config.computerId());
    }

    @Test
    void blankAccountOrComputerIsRefused() {
        assertThatThrownBy(() -> new ImportConfig(" ", "c", Clock.systemUTC(), tmp)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> new ImportConfig("a", "", Clock.systemUTC(), tmp)).isInstanceOf(IllegalArgumentException.class);
    }
}
