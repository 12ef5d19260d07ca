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
        Files.createDirectories(data.root().resolve("kafka/metadata"));
        Files.writeString(data.root().resolve("kafka/metadata/meta.properties"), "cluster.id=x\n");
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
    void aFolderOfSomethingElseOrASharedOneIsNotTakenOver(@TempDir Path dir) throws Exception {
        assumeTrue(dir.getFileSystem().supportedFileAttributeViews().contains("posix"), "no POSIX permissions here");
        // a mistyped --data-dir naming a project: refused, its permissions and files as they were
        Path project = Files.createDirectories(dir.resolve("project"));
        Files.writeString(project.resolve("pom.xml"), "<project/>");
        Files.createDirectories(project.resolve("src"));
        Files.setPosixFilePermissions(project, PosixFilePermissions.fromString("rwxr-xr-x"));
        org.assertj.core.api.Assertions.assertThatThrownBy(() -> new DataDir(project).createPrivate())
                .isInstanceOf(java.io.IOException.class).hasMessage("the data folder " + project + " already holds other files (pom.xml, src)"
                        + " and is not a data folder of ensemble-sessions: give an empty or new folder as --data-dir, e.g. "
                        + project.resolve("ensemble-sessions"));
        assertThat(permissions(project)).isEqualTo("rwxr-xr-x");
        // a folder shared by everyone (sticky, world-writable, as /tmp), even empty
        Path shared = Files.createDirectories(dir.resolve("shared"));
        Files.setAttribute(shared, "unix:mode", 01777);
        org.assertj.core.api.Assertions.assertThatThrownBy(() -> new DataDir(shared).createPrivate())
                .isInstanceOf(java.io.IOException.class).hasMessageStartingWith("the data folder " + shared + " is a shared folder");
        assertThat(permissions(shared)).isEqualTo("rwxrwxrwx");
        // an empty folder of one's own, and a data folder of an earlier start, are taken
        Path empty = Files.createDirectories(dir.resolve("empty"));
        new DataDir(empty).createPrivate();
        assertThat(permissions(empty)).isEqualTo("rwx------");
        Path earlier = Files.createDirectories(dir.resolve("earlier"));
        Files.writeString(earlier.resolve("token"), "t");
        Files.writeString(earlier.resolve("notes.txt"), "the person's own");
        new DataDir(earlier).createPrivate();
        assertThat(permissions(earlier)).isEqualTo("rwx------");
        // what only a service run alone wrote (run projector's default state folder), what an up on a cluster of one's
        // own wrote before it failed, and a volume's or a file browser's own files: each a folder to take
        Path runAlone = Files.createDirectories(dir.resolve("run-alone/state/projector"));
        new DataDir(runAlone.getParent().getParent()).createPrivate();
        Path failedUp = Files.createDirectories(dir.resolve("failed-up"));
        Files.writeString(failedUp.resolve("metrics-token"), "m");
        new DataDir(failedUp).createPrivate();
        Path volume = Files.createDirectories(dir.resolve("volume/lost+found"));
        Files.writeString(volume.getParent().resolve(".DS_Store"), "");
        new DataDir(volume.getParent()).createPrivate();
        assertThat(permissions(volume.getParent())).isEqualTo("rwx------");
        // a first start that ended before its broker started left an empty kafka folder: taken
        Path early = Files.createDirectories(dir.resolve("early/kafka"));
        new DataDir(early.getParent()).createPrivate();
        // a project with a kafka folder of its own, and a folder named like a file of ours, are not data folders
        Path kafkaProject = Files.createDirectories(dir.resolve("kafka-project/kafka/config"));
        org.assertj.core.api.Assertions.assertThatThrownBy(() -> new DataDir(kafkaProject.getParent().getParent()).createPrivate())
                .isInstanceOf(java.io.IOException.class).hasMessageContaining("already holds other files (kafka)");
        Path tokenFolder = Files.createDirectories(dir.resolve("web/token"));
        org.assertj.core.api.Assertions.assertThatThrownBy(() -> new DataDir(tokenFolder.getParent()).createPrivate())
                .isInstanceOf(java.io.IOException.class).hasMessageContaining("already holds other files (token)");
        // a project's own state folder is not a service's
        Path withState = Files.createDirectories(dir.resolve("app/state/cache"));
        org.assertj.core.api.Assertions.assertThatThrownBy(() -> new DataDir(withState.getParent().getParent()).createPrivate())
                .isInstanceOf(java.io.IOException.class).hasMessageContaining("already holds other files (state)");
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
