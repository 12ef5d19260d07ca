package dev.ensemble.sessions.deploy;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;

import static org.assertj.core.api.Assertions.assertThat;

/** {@code import}'s refusals, said before it looks for a running system (its import itself: {@code ActivityRateTest}). */
class ImportCommandTest {
    @Test
    void aFolderOfAnotherAgentIsRefusedSayingWhichFoldersImportReadsAndThatUpReadsTheRest(@TempDir Path dir) throws Exception {
        Path gemini = Files.createDirectories(dir.resolve("home/.gemini/tmp"));
        ChooseCommandTest.Run run = ChooseCommandTest.cli("import", gemini.getParent().toString(), "--data-dir", dir.resolve("data").toString());
        assertThat(run.code()).isNotZero();
        assertThat(run.err()).contains(gemini.getParent() + " is neither a Claude Code folder (.claude or its projects/) nor a Codex one")
                .contains("'up' imports every agent's store under your home itself")
                .doesNotContain("no running system"); // the folder is said first, whether or not a system runs
        assertThat(run.err().lines().count()).as(run.err()).isLessThanOrEqualTo(2);

        ChooseCommandTest.Run missing = ChooseCommandTest.cli("import", dir.resolve("nothing-here").toString(), "--data-dir", dir.resolve("data").toString());
        assertThat(missing.code()).isNotZero();
        assertThat(missing.err()).contains(dir.resolve("nothing-here") + " is not a folder");
    }

    /** An account its events could not carry is a usage error before anything starts, for up and import alike. */
    @Test
    void anAccountEventsCannotCarryIsRefusedBeforeAnythingStarts(@TempDir Path dir) {
        Path data = dir.resolve("data");
        ChooseCommandTest.Run blank = ChooseCommandTest.cli("up", "--account", "", "--data-dir", data.toString(), "--no-import");
        assertThat(blank.code()).as(blank.err()).isEqualTo(2);
        assertThat(blank.err()).startsWith("--account '' cannot be an account: must not be blank");
        assertThat(data).as("nothing made").doesNotExist();
        ChooseCommandTest.Run slash = ChooseCommandTest.cli("import", dir.toString(), "--account", "ana/bo", "--data-dir", data.toString());
        assertThat(slash.code()).as(slash.err()).isEqualTo(2);
        assertThat(slash.err()).startsWith("--account 'ana/bo' cannot be an account: must not contain '/'");
        ChooseCommandTest.Run spaced = ChooseCommandTest.cli("import", dir.toString(), "--account", " bo ", "--data-dir", data.toString());
        assertThat(spaced.code()).as(spaced.err()).isEqualTo(2);
        assertThat(spaced.err()).startsWith("--account ' bo ' cannot be an account: it begins or ends with a space");
    }

    /** Empty arguments and an over-long task are usage errors, not a silent "no folder" or "the current folder". */
    @Test
    void emptyFoldersAndAnOverLongTaskAreUsageErrors(@TempDir Path dir) {
        String data = dir.resolve("data").toString();
        ChooseCommandTest.Run emptyDir = ChooseCommandTest.cli("import", "", "--data-dir", data);
        assertThat(emptyDir.code()).as(emptyDir.err()).isEqualTo(2);
        assertThat(emptyDir.err()).startsWith("DIR is empty: name an agent store's folder");
        ChooseCommandTest.Run emptyFolder = ChooseCommandTest.cli("choose", "fix hello.py", "--folder", "", "--data-dir", data);
        assertThat(emptyFolder.code()).as(emptyFolder.err()).isEqualTo(2);
        assertThat(emptyFolder.err()).startsWith("--folder is empty");
        ChooseCommandTest.Run longTask = ChooseCommandTest.cli("choose", "x".repeat(5000), "--data-dir", data);
        assertThat(longTask.code()).as(longTask.err()).isEqualTo(2);
        assertThat(longTask.err()).startsWith("TASK TITLE is 5000 characters; a task's title is at most 4096");
    }

    /** up's admin token: kept while it is the person's, a new one when --account names another person. */
    @Test
    void upsAdminTokenIsThePersonsAndANewOneForAnotherAccount(@TempDir Path dir) throws Exception {
        dev.ensemble.sessions.gateway.Tokens tokens = dev.ensemble.sessions.gateway.Tokens.inMemory();
        Path file = dir.resolve("token");
        String ana = UpCommand.adminToken(tokens, file, "ana");
        assertThat(UpCommand.adminToken(tokens, file, "ana")).as("kept").isEqualTo(ana);
        String bo = UpCommand.adminToken(tokens, file, "bo");
        assertThat(bo).isNotEqualTo(ana);
        assertThat(tokens.authenticate(bo)).hasValueSatisfying(p -> assertThat(p.account()).isEqualTo("bo"));
        assertThat(Files.readString(file).strip()).isEqualTo(bo);
    }
}
