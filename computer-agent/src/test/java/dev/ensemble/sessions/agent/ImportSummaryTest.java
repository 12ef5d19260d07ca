package dev.ensemble.sessions.agent;

import dev.ensemble.sessions.agent.ImportSummary.Skip;
import org.junit.jupiter.api.Test;

import java.nio.file.Path;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

class ImportSummaryTest {
    @Test
    void toStringIsOneLine() {
        ImportSummary s = new ImportSummary(6, 57, 310, 500, 6, List.of(
                new Skip(Path.of("a.jsonl"), "unchanged"),
                new Skip(Path.of("b.jsonl"), "not a transcript"),
                new Skip(Path.of("c.jsonl"), "unreadable: java.nio.file.AccessDeniedException: c.jsonl"),
                new Skip(Path.of("d.jsonl"), "malformed line 3: Unexpected end-of-input")));

        assertThat(s.toString()).isEqualTo("imported 6 sessions, 57 runs, 310 engine events from 6 files; "
                + "3 files skipped (1 not a transcript, 1 unchanged, 1 unreadable); 1 malformed line skipped");
        assertThat(s.skippedLines()).extracting(Skip::kind).containsExactly("malformed line");
    }

    @Test
    void singularAndNothingSkipped() {
        assertThat(new ImportSummary(1, 1, 1, 3, 1, List.of()).toString())
                .isEqualTo("imported 1 session, 1 run, 1 engine event from 1 file");
    }
}
