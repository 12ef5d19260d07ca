package dev.ensemble.sessions.deploy;

import dev.ensemble.sessions.choice.SessionChoiceConfig;
import dev.ensemble.sessions.choice.recalibration.Recalibration;
import dev.ensemble.sessions.choice.recalibration.RecalibrationReport;
import me.tongfei.progressbar.ConsoleProgressBarConsumer;
import me.tongfei.progressbar.ProgressBar;
import me.tongfei.progressbar.ProgressBarBuilder;
import me.tongfei.progressbar.ProgressBarStyle;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.time.format.DateTimeParseException;
import java.util.concurrent.Callable;

/**
 * {@code ensemble-sessions recalibrate --config CANDIDATE.json [--since TIME] [--data-dir DIR | --bootstrap-servers
 * HOSTS] [--report FILE.html]} (DESIGN.md §5, guide §4 "Records"): reads every recorded decision and outcome from the
 * log, scores the stored signals again under the candidate config (merged over the defaults, as the choice service
 * does) and prints what changes; optionally writes a self-contained HTML report. Reads only; changes nothing.
 */
@Command(name = "recalibrate", mixinStandardHelpOptions = true,
        description = "Re-score every recorded session choice under a candidate config and report what changes.")
final class RecalibrateCommand implements Callable<Integer> {
    /** Logs with at least this many records get a progress bar. */
    static final long PROGRESS_MIN_RECORDS = 50_000;

    @Option(names = "--config", required = true, description = "the candidate SessionChoiceConfig JSON (only the fields to change)")
    Path config;

    @Option(names = "--since", description = "only decisions that occurred at or after this time (ISO-8601, e.g. 2026-11-01T00:00:00Z)")
    String since;

    @Option(names = "--data-dir", description = "the running system's data folder (default ~/.ensemble-sessions); its endpoints.json names the brokers")
    Path dataDir;

    @picocli.CommandLine.Mixin
    ClusterOptions cluster = new ClusterOptions();

    @Option(names = "--report", description = "also write an HTML report with plots here")
    Path report;

    @picocli.CommandLine.Spec
    picocli.CommandLine.Model.CommandSpec spec;

    PrintStream out = System.out;

    /** The parts of a config a recalibration applies: it scores the recorded signals again and ranks them in bands. */
    static final java.util.Set<String> APPLIED = java.util.Set.of("version", "weights", "bands", "size",
            "text"); // text.notIssueKeys counts the stored candidates' issue keys again

    /**
     * A line naming the parts the candidate (its JSON, read already) sets that a recalibration cannot apply, or null when
     * it sets none: the candidates, their texts and signals stay as they were recorded.
     */
    static String unapplied(String candidateJson) throws java.io.IOException {
        java.util.List<String> named = new java.util.ArrayList<>();
        DataDir.JSON.readTree(candidateJson).fieldNames().forEachRemaining(f -> {
            if (!APPLIED.contains(f)) {
                named.add(f);
            }
        });
        if (named.isEmpty()) {
            return null;
        }
        return "Note: a recalibration does not apply the candidate's " + String.join(", ", named)
                + ": it scores each decision's recorded candidates and signals again under"
                + " the candidate's weights, bands, size and text (its issue keys); which sessions were candidates, and their"
                + " signals, stay as recorded.";
    }

    @Override
    public Integer call() throws Exception {
        if (report != null) { // before the log is read: a report that cannot be written is known now
            CommandChecks.requireWritableFile(spec, "--report", "report", report);
        }
        SessionChoiceConfig cfg = CommandChecks.readConfig(config);
        String unapplied = unapplied(Files.readString(config, StandardCharsets.UTF_8));
        if (unapplied != null) {
            out.println(unapplied);
        }
        Instant from = null;
        if (since != null) {
            try {
                from = Instant.parse(since);
            } catch (DateTimeParseException e) {
                throw new IllegalArgumentException("--since must be an ISO-8601 instant such as 2026-11-01T00:00:00Z, not '" + since + "'");
            }
        }
        if (cluster.given()) {
            cluster.requireReachable(cluster.clientProperties());
        }
        DataDir.Cluster kafka = cluster.given()
                ? new DataDir.Cluster(cluster.bootstrapServers, cluster.clientProperties())
                : DataDir.of(dataDir).runningCluster(); // the running system's (the embedded broker's credentials)
        ProgressBar[] bar = new ProgressBar[1];
        ChoiceLogReader.Read read;
        try {
            read = ChoiceLogReader.read(kafka.bootstrapServers(), kafka.clientProperties(), from, total -> {
                if (total >= PROGRESS_MIN_RECORDS) {
                    bar[0] = new ProgressBarBuilder().setTaskName("Reading the log").setInitialMax(total).setUnit(" events", 1)
                            .setStyle(ProgressBarStyle.ASCII).setConsumer(new ConsoleProgressBarConsumer(System.err)).build();
                }
            }, n -> {
                if (bar[0] != null) bar[0].stepBy(n);
            });
        } finally {
            if (bar[0] != null) bar[0].close();
        }
        Recalibration.Comparison c = Recalibration.compare(read.records(), read.outcomes(), cfg);
        out.printf("Read %d events (%d recorded decisions, %d outcomes%s)%n%n", read.events(), read.records().size(),
                read.outcomes().size(), read.undecodable() > 0 ? ", " + read.undecodable() + " undecodable skipped" : "");
        out.println(RecalibrationReport.markdown(c));
        if (report != null) {
            try {
                Files.writeString(report, RecalibrationReport.html(c), StandardCharsets.UTF_8);
            } catch (java.io.IOException e) { // e.g. its folder was removed meanwhile
                throw new IllegalStateException("cannot write the report to " + report + ": " + DataDir.reason(e, report), e);
            }
            out.println("Report: " + report.toAbsolutePath());
        }
        return 0;
    }
}
