package dev.ensemble.sessions.deploy;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/** The data folder and its private files (the token, the endpoints) are reachable by their owner only. */
class DataDirTest {
    static String permissions(Path p) throws java.io.IOException {
        return PosixFilePermissions.toString(Files.getPosixFilePermissions(p));
    }

    @Test
    void aNewDataFolderIsOwnerOnlyWhateverTheUmask(@TempDir Path dir) throws Exception {
        assumeTrue(dir.getFileSystem().supportedFileAttributeViews().contains("posix"), "no POSIX permissions here");
        DataDir data = new DataDir(dir.resolve("home/.ensemble-sessions")); // its parent is missing too
        data.createPrivate();
        assertThat(data.root()).isDirectory();
        assertThat(permissions(data.root())).isEqualTo("rwx------");
    }

    @Test
    void anExistingDataFolderIsMadeOwnerOnlySoTheWorldReadableFilesKafkaWroteInItAreOutOfReach(@TempDir Path dir)
            throws Exception {
        assumeTrue(dir.getFileSystem().supportedFileAttributeViews().contains("posix"), "no POSIX permissions here");
        DataDir data = new DataDir(dir.resolve("data"));
        Files.createDirectories(data.root().resolve("kafka/logs/sessions.events-0"));
        Files.setPosixFilePermissions(data.root(), PosixFilePermissions.fromString("rwxr-xr-x"));
        Path segment = Files.writeString(data.root().resolve("kafka/logs/sessions.events-0/00000000000000000000.log"), "a prompt");
        Files.setPosixFilePermissions(segment, PosixFilePermissions.fromString("rw-r--r--"));
        data.createPrivate();
        assertThat(permissions(data.root())).isEqualTo("rwx------");
        assertThat(Files.readString(segment)).as("the data in it is kept").isEqualTo("a prompt");
        data.createPrivate(); // again, already owner-only
        assertThat(permissions(data.root())).isEqualTo("rwx------");
    }

    @Test
    void aFileWhereTheDataFolderShouldBeIsAnError(@TempDir Path dir) throws Exception {
        Path file = Files.writeString(dir.resolve("data"), "not a folder");
        org.assertj.core.api.Assertions.assertThatThrownBy(() -> new DataDir(file).createPrivate())
                .isInstanceOf(java.io.IOException.class).hasMessageContaining("is a file, not a folder");
    }

    @Test
    void aDataFolderThatCannotBeCreatedIsNamedWithTheReasonAndTheOption(@TempDir Path dir) throws Exception {
        Path file = Files.writeString(dir.resolve("notes.txt"), "x");
        org.assertj.core.api.Assertions.assertThatThrownBy(() -> new DataDir(file.resolve("data")).createPrivate())
                .isInstanceOf(java.io.IOException.class).hasMessage("cannot create the data folder " + file.resolve("data")
                        + ": a file is in the way: " + file + "; give another --data-dir");
        assertThat(DataDir.reason(new java.nio.file.AccessDeniedException("/a/b"))).isEqualTo("permission denied");
        assertThat(DataDir.reason(new java.nio.file.NoSuchFileException("/a/b"), Path.of("/a/b"))).isEqualTo("no such file or folder");
        assertThat(DataDir.reason(new java.nio.file.FileSystemException("/p", null, "Read-only file system")))
                .isEqualTo("read-only file system: /p");
    }

    @Test
    void aPrivateFileIsOwnerOnlyWhetherNewOrRewritten(@TempDir Path dir) throws Exception {
        assumeTrue(dir.getFileSystem().supportedFileAttributeViews().contains("posix"), "no POSIX permissions here");
        DataDir data = new DataDir(dir.resolve("data"));
        DataDir.writePrivate(data.token(), "es_first\n");
        assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(data.token()))).isEqualTo("rw-------");
        Files.setPosixFilePermissions(data.token(), PosixFilePermissions.fromString("rw-r--r--"));
        DataDir.writePrivate(data.token(), "es_second\n");
        assertThat(Files.readString(data.token())).isEqualTo("es_second\n");
        assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(data.token()))).isEqualTo("rw-------");
    }

    @org.junit.jupiter.api.Test
    void anEmptyDataDirOptionIsRefusedInsteadOfMeaningTheWorkingFolder() {
        org.assertj.core.api.Assertions.assertThatThrownBy(() -> DataDir.of(Path.of("")))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("--data-dir is empty");
    }

    @Test
    void theRunningClusterIsTheBootstrapServersAndTheClientPropertiesNamedInTheEndpoints(@TempDir Path dir) throws Exception {
        DataDir data = new DataDir(dir.resolve("data"));
        data.createPrivate();
        Path file = Files.writeString(dir.resolve("client.properties"), "security.protocol=SASL_PLAINTEXT\nbootstrap.servers=elsewhere:1\n");
        data.writeEndpoints("http://localhost:8080", "127.0.0.1:9092", file);
        DataDir.Cluster c = data.runningCluster();
        assertThat(c.bootstrapServers()).isEqualTo("127.0.0.1:9092");
        assertThat(c.clientProperties()).containsExactly(java.util.Map.entry("security.protocol", "SASL_PLAINTEXT"));
        assertThat(c.clientConfig()).containsOnly(java.util.Map.entry("security.protocol", "SASL_PLAINTEXT"),
                java.util.Map.entry("bootstrap.servers", "127.0.0.1:9092"));

        data.writeEndpoints("http://localhost:8080", "127.0.0.1:9093"); // a cluster without security
        assertThat(data.runningCluster().clientConfig()).containsOnly(java.util.Map.entry("bootstrap.servers", "127.0.0.1:9093"));
    }
}
