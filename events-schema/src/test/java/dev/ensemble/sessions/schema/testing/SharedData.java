package dev.ensemble.sessions.schema.testing;

import org.junit.jupiter.api.Assumptions;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;

/**
 * Locates {@code ../shared} (the specification, the event contract and the real data) beside the project
 * root. Tests that need it call {@link #require} and are skipped, with a message saying what is missing,
 * when it is absent.
 */
public final class SharedData {
    private SharedData() {
    }

    /** The project root: the {@code project.root} system property Maven sets, else the working folder's nearest parent with a pom.xml and .git or README. */
    public static Path projectRoot() {
        String prop = System.getProperty("project.root");
        if (prop != null && !prop.isBlank()) {
            return Paths.get(prop).toAbsolutePath().normalize();
        }
        Path p = Paths.get("").toAbsolutePath();
        while (p != null && !(Files.exists(p.resolve("pom.xml")) && Files.exists(p.resolve("events-schema")))) {
            p = p.getParent();
        }
        return p == null ? Paths.get("").toAbsolutePath() : p;
    }

    /**
     * {@code <project root>/../shared/<relative>}, which may not exist; for a checkout one folder deeper (a git
     * worktree such as {@code /work/wt/<branch>} beside {@code /work/main}), {@code <project root>/../../shared}
     * when only that one exists.
     */
    public static Path path(String relative) {
        Path beside = projectRoot().resolve("../shared").normalize();
        Path above = projectRoot().resolve("../../shared").normalize();
        Path shared = !Files.isDirectory(beside) && Files.isDirectory(above) ? above : beside;
        return shared.resolve(relative).normalize();
    }

    /** The path, or the test is skipped with a message naming what is missing. */
    public static Path require(String relative) {
        Path p = path(relative);
        Assumptions.assumeTrue(Files.exists(p),
                () -> "skipped: " + p + " is absent (the shared data folder ../shared/" + relative
                        + " is read in place and never copied into the project)");
        return p;
    }
}
