package dev.ensemble.sessions.gateway;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/** The token file: only hashes, readable by its owner only. */
class TokensTest {
    @Test
    void theTokenFileIsWrittenOwnerOnlyAndHoldsNoToken(@TempDir Path dir) throws Exception {
        assumeTrue(dir.getFileSystem().supportedFileAttributeViews().contains("posix"), "no POSIX permissions here");
        Path file = dir.resolve("tokens.json");
        String token = Tokens.load(file).issue(new Principal("ana", "admin", "ana"));
        assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(file))).isEqualTo("rw-------");
        assertThat(Files.readString(file)).doesNotContain(token).contains(Tokens.hash(token));
        try (var files = Files.list(dir)) {
            assertThat(files.map(f -> f.getFileName().toString())).as("no temporary file left").containsExactly("tokens.json");
        }
        assertThat(Tokens.load(file).authenticate(token)).hasValueSatisfying(p -> assertThat(p.account()).isEqualTo("ana"));
    }

    @Test
    void aTokenFileLeftReadableByOthersIsMadeOwnerOnlyWhenLoaded(@TempDir Path dir) throws Exception {
        assumeTrue(dir.getFileSystem().supportedFileAttributeViews().contains("posix"), "no POSIX permissions here");
        Path file = dir.resolve("tokens.json");
        String token = Tokens.load(file).issue(new Principal("ana", "admin", "ana"));
        Files.setPosixFilePermissions(file, PosixFilePermissions.fromString("rw-r--r--")); // as earlier versions wrote it
        assertThat(Tokens.load(file).authenticate(token)).isPresent();
        assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(file))).isEqualTo("rw-------");
    }

    @Test
    void manyTokensRegisteredAtOnceAreKeptForTheNextLoadBesideTheOnesThere(@TempDir Path dir) {
        Path file = dir.resolve("tokens.json");
        String admin = Tokens.load(file).issue(new Principal("ana", "admin", "ana"));
        java.util.Map<String, Principal> people = new java.util.HashMap<>();
        for (int i = 0; i < 3; i++) {
            people.put("token-" + i, new Principal("acct-" + i, "person", "person-" + i));
        }
        Tokens.load(file).registerAll(people);
        Tokens loaded = Tokens.load(file);
        assertThat(loaded.authenticate("token-2")).contains(new Principal("acct-2", "person", "person-2"));
        assertThat(loaded.authenticate(admin)).hasValueSatisfying(p -> assertThat(p.role()).isEqualTo("admin"));
        assertThat(loaded.authenticate("token-3")).isEmpty();
    }
}
