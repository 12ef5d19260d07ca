package dev.ensemble.sessions.deploy;

import dev.ensemble.sessions.choice.ChoiceEvaluation;
import dev.ensemble.sessions.choice.EvaluateChoice;
import dev.ensemble.sessions.choice.SessionChoiceConfig;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.Callable;

/**
 * {@code ensemble-sessions evaluate-choice --history FILE}: replays a real task history (the format of
 * {@code ../shared/data/kafka-history/tasks.jsonl}) as one person's work on one computer through the session
 * choice and prints precision and recall of confident continues against the ground truth (a task sharing an
 * issue key with an earlier task is its follow-up), the two baselines, and the band counts.
 */
@Command(name = "evaluate-choice", mixinStandardHelpOptions = true,
        description = "Replay a task history through the session choice and score it against its follow-ups.")
final class EvaluateChoiceCommand implements Callable<Integer> {
    @Option(names = "--history", required = true, description = "tasks.jsonl (id, at, title, description, labels, issueKeys, files)")
    Path history;

    @Option(names = "--config", description = "a SessionChoiceConfig JSON with the fields to change (default: the guide's defaults)")
    Path config;

    @Option(names = "--limit", defaultValue = "0", description = "only the first N tasks (0: all)")
    int limit;

    @Option(names = "--calibrate", description = "also grid-search weights and thresholds on the first half and report them on both halves")
    boolean calibrate;

    @Option(names = "--out", description = "also write the report (Markdown) here")
    Path out;

    @picocli.CommandLine.Spec
    picocli.CommandLine.Model.CommandSpec spec;

    @Override
    public Integer call() throws Exception {
        if (out != null) { // before the replay: a report that cannot be written is known now
            CommandChecks.requireWritableFile(spec, "--out", "report", out);
        }
        SessionChoiceConfig cfg = config == null ? SessionChoiceConfig.defaults() : CommandChecks.readConfig(config);
        // a history that is missing, a folder or not JSON lines: one line naming it (and the line) and why
        String report = EvaluateChoice.run(ChoiceEvaluation.read(history, limit), cfg, calibrate);
        System.out.println(report);
        if (out != null) {
            try {
                Files.writeString(out, report, StandardCharsets.UTF_8);
            } catch (java.io.IOException e) {
                throw new IllegalStateException("cannot write the report to " + out + ": " + DataDir.reason(e, out), e);
            }
        }
        return 0;
    }
}
