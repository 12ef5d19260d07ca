package dev.ensemble.sessions.choice;

import dev.ensemble.sessions.schema.testing.SharedData;
import org.junit.jupiter.api.Test;

import java.nio.file.Path;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/** evaluate-choice on the first 1,500 tasks of the real Kafka history (skipped when the shared data is absent). */
class ChoiceEvaluationSmokeTest {
    @Test
    void replayOfTheFirst1500TasksGivesSensibleFigures() throws Exception {
        Path history = SharedData.require("data/kafka-history/tasks.jsonl");
        List<ChoiceEvaluation.HistoryTask> tasks = ChoiceEvaluation.read(history, 1500);
        assertThat(tasks).hasSize(1500);
        ChoiceEvaluation.Replay r = ChoiceEvaluation.replay(tasks, SessionChoiceConfig.defaults(), false);
        ChoiceEvaluation.Summary s = r.summary(0, 1500);
        assertThat(s.tasks()).isEqualTo(1500);
        assertThat(s.followUps()).isGreaterThan(100);
        assertThat(s.scorer().continues()).isPositive();
        assertThat(s.scorer().precision()).isGreaterThan(0.5);
        assertThat(s.scorer().precision()).isGreaterThan(s.recent().precision());
        int bands = s.bands().values().stream().mapToInt(Integer::intValue).sum();
        assertThat(bands).isEqualTo(1500);
        // deterministic
        assertThat(ChoiceEvaluation.replay(tasks.subList(0, 300), SessionChoiceConfig.defaults(), false).steps())
                .isEqualTo(ChoiceEvaluation.replay(tasks.subList(0, 300), SessionChoiceConfig.defaults(), false).steps());
        // the MoreLikeThis baseline runs
        ChoiceEvaluation.Summary withBaselines = ChoiceEvaluation.replay(tasks.subList(0, 300), SessionChoiceConfig.defaults(), true).summary(0, 300);
        assertThat(withBaselines.mlt().continues()).isPositive();
        String table = EvaluateChoice.run(tasks.subList(0, 200), SessionChoiceConfig.defaults(), false);
        assertThat(table).contains("| defaults (" + SessionChoiceConfig.DEFAULT_VERSION + ") | all | scorer: confident continues |");
    }
}
