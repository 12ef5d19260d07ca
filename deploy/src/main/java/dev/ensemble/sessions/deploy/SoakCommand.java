package dev.ensemble.sessions.deploy;

import picocli.CommandLine.Command;
import picocli.CommandLine.Model.OptionSpec;
import picocli.CommandLine.Option;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.ZoneOffset;
import java.time.ZonedDateTime;
import java.time.format.DateTimeFormatter;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.Callable;

import static dev.ensemble.sessions.deploy.CommandChecks.require;

/**
 * {@code ensemble-sessions soak}: {@link Soak} against a real {@code up} started in a process of its own on a fresh data
 * folder, killed with SIGKILL halfway and started again; prints its table and appends it, with the date and the commit,
 * under "Soak" in docs/reliability.md. Exits 0 when every check held, 1 otherwise.
 */
@Command(name = "soak", mixinStandardHelpOptions = true,
        description = "Posts events with bad ones mixed in to a real 'up' over HTTP, kills it with kill -9 halfway and starts it "
                + "again, then checks that every accepted event shows in its account's views, nothing of a refused one does, "
                + "the views kept flowing and the log holds no duplicate; prints a table and appends it to docs/reliability.md.")
final class SoakCommand implements Callable<Integer> {
    @Option(names = "--events", defaultValue = "50000", description = "events to post (default ${DEFAULT-VALUE})")
    int events;

    @Option(names = "--accounts", defaultValue = "2000", description = "accounts they spread over, one person token each (default ${DEFAULT-VALUE})")
    int accounts;

    @Option(names = "--bad-share", defaultValue = "0.01", description = "the share of malformed, oversized or out-of-range events (default ${DEFAULT-VALUE})")
    double badShare;

    @Option(names = "--repost-share", defaultValue = "0.03", description = "the share of batches posted a second time, a third of them by two clients at once (default ${DEFAULT-VALUE})")
    double repostShare;

    @Option(names = "--kill-at", defaultValue = "0.5", description = "kill up (kill -9) when this share of the events is answered, then start it again (default ${DEFAULT-VALUE})")
    double killAt;

    @Option(names = "--no-kill", description = "do not kill up")
    boolean noKill;

    @Option(names = "--clients", defaultValue = "16", description = "concurrent HTTP clients (default ${DEFAULT-VALUE})")
    int clients;

    @Option(names = "--probe-share", defaultValue = "0.25", description = "the share of accepted runs whose view delay is measured; each account's first always (default ${DEFAULT-VALUE})")
    double probeShare;

    @Option(names = "--settle-seconds", defaultValue = "180", description = "how long the views may take to settle after the last answer (default ${DEFAULT-VALUE})")
    int settleSeconds;

    @Option(names = "--timeout-minutes", defaultValue = "30", description = "the longest the posting may take (default ${DEFAULT-VALUE})")
    int timeoutMinutes;

    @Option(names = "--up-java-options", defaultValue = "-Xmx2g", description = "options of up's JVM, space-separated (default ${DEFAULT-VALUE})")
    String upJavaOptions;

    @Option(names = "--seed", defaultValue = "14", description = "of the traffic's random choices (default ${DEFAULT-VALUE})")
    long seed;

    @Option(names = "--work-dir", description = "where up's data folder and logs go (default: a new temporary folder, removed afterwards when every check held)")
    Path workDir;

    @Option(names = "--report", description = "the file the table is appended to (default: docs/reliability.md of this checkout, when found)")
    Path report;

    @Option(names = "--no-report", description = "print the table only")
    boolean noReport;

    @picocli.CommandLine.Spec
    picocli.CommandLine.Model.CommandSpec spec;

    @Override
    public Integer call() throws Exception {
        CommandChecks.requireAtLeast(spec, "--events", events, 1);
        require(spec, accounts >= 1 && accounts <= events, "--accounts must be from 1 to --events, not " + accounts);
        CommandChecks.requireShare(spec, "--bad-share", badShare, 0.5);
        CommandChecks.requireShare(spec, "--repost-share", repostShare);
        require(spec, killAt > 0 && killAt < 1, "--kill-at must be above 0 and below 1, not " + killAt);
        require(spec, clients >= 1 && clients <= 256, "--clients must be from 1 to 256, not " + clients);
        CommandChecks.requireShare(spec, "--probe-share", probeShare);
        CommandChecks.requireAtLeast(spec, "--settle-seconds", settleSeconds, 1);
        CommandChecks.requireAtLeast(spec, "--timeout-minutes", timeoutMinutes, 1);
        boolean temporary = workDir == null;
        Path dir = temporary ? Files.createTempDirectory("ensemble-soak") : workDir.toAbsolutePath();
        Files.createDirectories(dir);
        Soak.Settings settings = new Soak.Settings(events, accounts, badShare, repostShare, noKill ? -1 : killAt, clients, probeShare,
                dir, Arrays.stream(upJavaOptions.trim().split("\\s+")).filter(o -> !o.isEmpty()).toList(),
                Duration.ofSeconds(settleSeconds), Duration.ofMinutes(timeoutMinutes), seed);
        Soak.Result r = Soak.run(settings, System.out);
        Path root = projectRoot();
        String block = block(r, commandLine(), ZonedDateTime.now(ZoneOffset.UTC), commit(root));
        System.out.println();
        System.out.println(block);
        Path file = noReport ? null : report != null ? report : root == null ? null : root.resolve("docs/reliability.md");
        if (file != null) {
            appendUnderSoak(file, block);
            System.out.println("appended to " + file);
        }
        if (temporary && r.passed()) {
            BenchCommand.deleteQuietly(dir);
        } else {
            System.out.println("up's data folder and logs are in " + dir);
        }
        return r.passed() ? 0 : 1;
    }

    /**
     * The command that repeats this run: every option with its value (the defaults too, so the entry says what ran even
     * when a default changes later); a flag only when set, an option without a value (e.g. {@code --work-dir}) left out.
     */
    String commandLine() {
        StringBuilder b = new StringBuilder("ensemble-sessions soak");
        for (OptionSpec o : spec.options()) {
            Object value = o.getValue();
            if (o.usageHelp() || o.versionHelp() || value == null) {
                continue;
            }
            if (o.typeInfo().isBoolean()) {
                if (Boolean.TRUE.equals(value)) {
                    b.append(' ').append(o.longestName());
                }
                continue;
            }
            b.append(' ').append(o.longestName()).append(' ').append(shellWord(value.toString()));
        }
        return b.toString();
    }

    /** {@code word} as a shell reads it back: in single quotes when it holds anything but plain characters. */
    static String shellWord(String word) {
        return !word.isEmpty() && word.matches("[A-Za-z0-9_.,:/=+@%-]+") ? word : "'" + word.replace("'", "'\\''") + "'";
    }

    /** One run's entry: a heading with the date and commit, the command, the table and its findings. */
    static String block(Soak.Result r, String command, ZonedDateTime when, String commit) {
        return "### " + when.format(DateTimeFormatter.ofPattern("yyyy-MM-dd HH:mm 'UTC'")) + ", commit " + commit + "\n\n`"
                + command + "` (" + String.format("%.0f s", r.seconds()) + ", " + cores(Runtime.getRuntime().availableProcessors())
                + ")\n\n" + Soak.table(r);
    }

    /** "1 core", "4 cores": the processors this JVM had (shared with whatever else ran on the machine). */
    static String cores(int n) {
        return n + (n == 1 ? " core" : " cores");
    }

    /**
     * Appends {@code block} at the end of the "## Soak" section of {@code file} (before the next "## " heading), creating
     * the file (titled "Reliability") or the section when missing; other sections are kept as they are.
     */
    static void appendUnderSoak(Path file, String block) throws IOException {
        String text = Files.exists(file) ? Files.readString(file, StandardCharsets.UTF_8) : "# Reliability\n";
        List<String> lines = new java.util.ArrayList<>(text.lines().toList());
        int soak = lines.indexOf("## Soak");
        if (soak < 0) {
            while (!lines.isEmpty() && lines.get(lines.size() - 1).isBlank()) {
                lines.remove(lines.size() - 1);
            }
            lines.add("");
            lines.add("## Soak");
            lines.add("");
            lines.add("`ensemble-sessions soak` (deploy/src/main/java/dev/ensemble/sessions/deploy/Soak.java) starts a real `up` in a process"
                    + " of its own, posts events over HTTP from concurrent clients, one person token per account, with bad ones mixed in"
                    + " and some batches posted twice (also by two clients at once), kills `up` with `kill -9` halfway and starts it"
                    + " again on the same data folder while the clients keep posting (the same batch again after a refused connection"
                    + " or a 503). Then it checks, per account, every event answered `accepted` against that account's views, looks"
                    + " for anything of a refused event in the views and the log, measures how long sampled accepted runs took to"
                    + " show in their sessions, and reads the whole log for duplicates. Each run appends its table here.");
            soak = lines.size() - 3;
        }
        int end = lines.size();
        for (int i = soak + 1; i < lines.size(); i++) {
            if (lines.get(i).startsWith("## ")) {
                end = i;
                break;
            }
        }
        while (end > soak + 1 && lines.get(end - 1).isBlank()) {
            end--;
        }
        List<String> insert = new java.util.ArrayList<>();
        insert.add("");
        insert.addAll(block.strip().lines().toList());
        if (end < lines.size()) {
            insert.add("");
        }
        lines.addAll(end, insert);
        Files.createDirectories(file.toAbsolutePath().getParent());
        Files.writeString(file, String.join("\n", lines) + "\n", StandardCharsets.UTF_8);
    }

    /** The checkout this runs from (the launcher jar's or the classes' folder is {@code <root>/deploy/target/…}), or null. */
    static Path projectRoot() {
        try {
            Path here = Path.of(SoakCommand.class.getProtectionDomain().getCodeSource().getLocation().toURI()).toAbsolutePath();
            for (Path p = here; p != null; p = p.getParent()) {
                if (Files.isDirectory(p.resolve("deploy")) && Files.isRegularFile(p.resolve("pom.xml")) && Files.isDirectory(p.resolve("docs"))) {
                    return p;
                }
            }
        } catch (Exception e) {
            // not from a checkout
        }
        return null;
    }

    /** The checkout's commit (short, with "+ changes" when the work tree differs), or "unknown". */
    static String commit(Path root) {
        if (root == null) {
            return "unknown";
        }
        try {
            String head = run(root, "git", "rev-parse", "--short", "HEAD");
            String changes = run(root, "git", "status", "--porcelain", "--untracked-files=no");
            return head.isEmpty() ? "unknown" : head + (changes.isEmpty() ? "" : " + changes");
        } catch (IOException e) {
            return "unknown";
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return "unknown";
        }
    }

    private static String run(Path dir, String... command) throws IOException, InterruptedException {
        Process p = new ProcessBuilder(command).directory(dir.toFile()).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8).strip();
        return p.waitFor() == 0 ? out : "";
    }
}
