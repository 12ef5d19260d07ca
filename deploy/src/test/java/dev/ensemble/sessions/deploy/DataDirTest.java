package dev.ensemble.sessions.deploy;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/** The data folder's private files (the token, the endpoints) are readable by their owner only. */
class DataDirTest {
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
}
