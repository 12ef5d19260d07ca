package dev.ensemble.sessions.projector;

import dev.ensemble.sessions.events.Event;
import dev.ensemble.sessions.events.RunClaimed;
import dev.ensemble.sessions.events.RunStatusChanged;
import dev.ensemble.sessions.schema.AvroSerde;
import dev.ensemble.sessions.schema.InvalidEventException;
import dev.ensemble.sessions.views.DeletionAudit;
import dev.ensemble.sessions.views.DeletionGuardView;
import dev.ensemble.sessions.views.RetirementView;
import dev.ensemble.sessions.views.RunView;
import dev.ensemble.sessions.views.SessionTaskView;
import dev.ensemble.sessions.views.SessionView;
import dev.ensemble.sessions.views.TaskFactsView;
import org.junit.jupiter.api.Test;

import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.IntStream;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** {@link ViewBounds}: texts shortened with an ellipsis, lists capped to their newest with a count, views never changed in place. */
class ViewBoundsTest {

    @Test
    void aTextWithinItsBoundIsKeptAndALongerOneEndsWithAnEllipsisAtExactlyTheBound() {
        assertThat(ViewBounds.text("short", 10)).isEqualTo("short");
        assertThat(ViewBounds.text("0123456789", 10)).isEqualTo("0123456789");
        assertThat(ViewBounds.text("0123456789A", 10)).isEqualTo("012345678…").hasSize(10);
        assertThat(ViewBounds.text(null, 10)).isNull();
        String emoji = "12345678\uD83D\uDE00xyz"; // a surrogate pair where the cut falls
        assertThat(ViewBounds.text(emoji, 10)).isEqualTo("12345678…");
    }

    @Test
    void anEventsTextsAndContentListsAreBoundedInPlaceAndItsIdsKept() {
        Event e = ChainFixture.claimed("run-1", null, "t".repeat(300_000), 0);
        RunClaimed c = (RunClaimed) e.getPayload();
        c.getTask().setDescription("d".repeat(10_000));
        c.getTask().setLabels(IntStream.range(0, 1_000).mapToObj(i -> "label-" + i).toList());
        c.setFolder("/" + "f".repeat(5_000));
        ViewBounds.event(e);
        assertThat(c.getTask().getTitle()).hasSize(ViewBounds.TITLE_CHARS).endsWith(ViewBounds.ELLIPSIS).startsWith("ttt");
        assertThat(c.getTask().getDescription()).hasSize(ViewBounds.LONG_TEXT_CHARS);
        assertThat(c.getFolder()).hasSize(ViewBounds.PATH_CHARS);
        int cut = ViewBounds.LABELS * ViewBounds.EVENT_LIST_FACTOR;
        assertThat(c.getTask().getLabels()).as("cut loosely as it arrives").hasSize(cut).endsWith("label-999")
                .startsWith("label-" + (1_000 - cut));
        assertThat(c.getRunId()).isEqualTo("run-1");

        Event done = ChainFixture.done("run-1", "s".repeat(50_000),
                IntStream.range(0, 5_000).mapToObj(i -> "src/f" + i + ".ts").toList(), 1);
        ViewBounds.event(done);
        RunStatusChanged d = (RunStatusChanged) done.getPayload();
        assertThat(d.getReportSummary()).hasSize(ViewBounds.SUMMARY_CHARS);
        assertThat(d.getFilesChanged()).hasSize(ViewBounds.FILES * ViewBounds.EVENT_LIST_FACTOR).endsWith("src/f4999.ts");
    }

    @Test
    void anEventWithAnOverLongIdIsRefusedNamingTheField() {
        Event e = ChainFixture.claimed("r".repeat(ViewBounds.ID_CHARS + 1), null, "title", 0);
        assertThatThrownBy(() -> ViewBounds.event(e)).isInstanceOf(InvalidEventException.class)
                .hasMessageContaining("payload.runId").hasMessageContaining("at most " + ViewBounds.ID_CHARS);
        Event ok = ChainFixture.claimed("r".repeat(ViewBounds.ID_CHARS - "task-".length()), null, "title", 0); // task-<runId>
        ViewBounds.event(ok);
        assertThat(((RunClaimed) ok.getPayload()).getTaskId()).hasSize(ViewBounds.ID_CHARS);
    }

    @Test
    void aViewWithinItsBoundsIsReturnedAsItIs() {
        SessionView v = session(3, 2, "title");
        assertThat(ViewBounds.session(v)).isSameAs(v);
    }

    @Test
    void aLongSessionKeepsItsNewestRunsAndTasksWithCountsAndTheStoreValueIsUntouched() {
        SessionView v = session(150, 80, "x".repeat(2_000));
        byte[] before = AvroSerde.of(SessionView.class).encode(v);
        SessionView b = ViewBounds.session(v);
        assertThat(AvroSerde.of(SessionView.class).encode(v)).as("the store's object is unchanged").isEqualTo(before);
        assertThat(b.getRuns()).hasSize(ViewBounds.RUNS);
        assertThat(b.getRuns().get(ViewBounds.RUNS - 1).getRunId()).isEqualTo("run-149");
        assertThat(b.getRuns().get(0).getRunId()).isEqualTo("run-50");
        assertThat(b.getTasks()).hasSize(ViewBounds.TASKS);
        assertThat(b.getTasks().get(ViewBounds.TASKS - 1).getTaskId()).isEqualTo("task-79");
        assertThat(b.getLatestTaskTitle()).hasSize(ViewBounds.TITLE_CHARS);
        assertThat(b.getRuns().get(0).getTitle()).hasSize(ViewBounds.TITLE_CHARS);
        assertThat(b.getOmitted()).containsEntry("runs", 50).containsEntry("tasks", 30);
    }

    @Test
    void aSessionOverTheTextBudgetLeavesOutItsOldestTasksUntilItFits() {
        SessionView v = session(10, ViewBounds.TASKS, "title");
        for (SessionTaskView t : v.getTasks()) {
            TaskFactsView f = t.getFacts();
            f.setDescription("d".repeat(ViewBounds.LONG_TEXT_CHARS));
            f.setInstructions("i".repeat(ViewBounds.LONG_TEXT_CHARS));
            f.setPage("p".repeat(ViewBounds.LONG_TEXT_CHARS));
            f.setDeliverable("v".repeat(ViewBounds.LONG_TEXT_CHARS));
            f.setMeeting("m".repeat(ViewBounds.LONG_TEXT_CHARS));
            t.setFilesChanged(IntStream.range(0, ViewBounds.FILES).mapToObj(i -> "src/" + "a".repeat(100) + i).toList());
        }
        SessionView b = ViewBounds.session(v);
        long chars = AvroSerde.of(SessionView.class).encode(b).length;
        assertThat(chars).isLessThan(ViewBounds.VIEW_CHARS + 10_000L);
        assertThat(b.getTasks()).isNotEmpty().last().extracting(SessionTaskView::getTaskId).isEqualTo("task-" + (ViewBounds.TASKS - 1));
        assertThat(b.getOmitted().get("tasks")).isPositive().isEqualTo(ViewBounds.TASKS - b.getTasks().size());
    }

    @Test
    void theStoredChainKeepsItsNewestFilesAndEveryRun() {
        SessionView v = session(300, 2, "t");
        v.setFilesChanged(new ArrayList<>(IntStream.range(0, 500).mapToObj(i -> "f" + i).toList()));
        v.getTasks().get(1).getFacts().setLabels(new ArrayList<>(IntStream.range(0, 30).mapToObj(i -> "l" + i).toList()));
        assertThat(ViewBounds.stored(v)).isSameAs(v);
        assertThat(v.getFilesChanged()).hasSize(ViewBounds.FILES).endsWith("f499");
        assertThat(v.getTasks().get(1).getFacts().getLabels()).hasSize(ViewBounds.LABELS).endsWith("l29");
        assertThat(v.getOmitted()).containsEntry("tasks.facts.labels", 30 - ViewBounds.LABELS);
        assertThat(v.getRuns()).hasSize(300);
        assertThat(v.getOmitted()).containsEntry("filesChanged", 300);
        assertThat(ViewBounds.session(v).getOmitted()).as("counted again nowhere").containsEntry("filesChanged", 300).containsEntry("runs", 200);
    }

    @Test
    void aRetirementViewKeepsEveryRunIdAndCapsItsOtherLists() {
        List<String> runs = IntStream.range(0, 1_000).mapToObj(i -> "run-" + i).toList();
        RetirementView v = RetirementView.newBuilder().setSessionId("s").setAccount("a").setSpace("web").setSequence(1)
                .setEvaluatedAt(Instant.EPOCH).setKind("TASK_RUN").setAgent("codex").setState("READY").setReason("r".repeat(9_000))
                .setLastActivityAt(Instant.EPOCH)
                .build();
        v.setRunIds(new ArrayList<>(runs));
        v.setAgentSessionIds(new ArrayList<>(runs));
        RetirementView b = ViewBounds.retirement(v);
        assertThat(b.getRunIds()).hasSize(1_000);
        assertThat(b.getAgentSessionIds()).hasSize(ViewBounds.IDS).endsWith("run-999");
        assertThat(b.getReason()).hasSize(ViewBounds.SUMMARY_CHARS);
        assertThat(b.getOmitted()).containsEntry("agentSessionIds", 1_000 - ViewBounds.IDS).doesNotContainKey("runIds");
        assertThat(v.getAgentSessionIds()).hasSize(1_000);
    }

    @Test
    void anAuditCapsWhatTheRequesterSawAndTheComputersAnswered() {
        List<String> runs = IntStream.range(0, 500).mapToObj(i -> "run-" + i).toList();
        DeletionAudit a = DeletionAudit.newBuilder().setRequestId("q").setAccount("a").setSessionId("s").setSequence(1)
                .setRequestedAt(Instant.EPOCH).setRecordedAt(Instant.EPOCH).setSource("person:p").setRequestedBy("person")
                .setReason("idle").setSawRunIds(new ArrayList<>(runs)).setDecision("SKIPPED").setDecidedAt(Instant.EPOCH)
                .setDetail("x".repeat(100_000)).setGuard(DeletionGuardView.newBuilder().setSessionRunIds(new ArrayList<>(runs)).build())
                .setStatus("SKIPPED").setDecisionEventId("d").build();
        DeletionAudit b = ViewBounds.audit(a);
        assertThat(b.getSawRunIds()).hasSize(ViewBounds.IDS).endsWith("run-499");
        assertThat(b.getGuard().getSessionRunIds()).hasSize(ViewBounds.IDS);
        assertThat(b.getDetail()).hasSize(ViewBounds.SUMMARY_CHARS);
        assertThat(b.getOmitted()).containsEntry("sawRunIds", 300).containsEntry("guard.sessionRunIds", 300);
    }

    /** A session of {@code runs} runs and {@code tasks} tasks, titles {@code title}. */
    private static SessionView session(int runs, int tasks, String title) {
        List<RunView> rs = new ArrayList<>();
        for (int i = 0; i < runs; i++) {
            rs.add(RunView.newBuilder().setRunId("run-" + i).setTaskId("task-" + i).setTitle(title).setComputerId("laptop")
                    .setStatus("DONE").setClaimedAt(Instant.EPOCH).build());
        }
        List<SessionTaskView> ts = new ArrayList<>();
        for (int i = 0; i < tasks; i++) {
            ts.add(SessionTaskView.newBuilder().setTaskId("task-" + i).setRunIds(new ArrayList<>(List.of("run-" + i))).setSpace("web")
                    .setFacts(TaskFactsView.newBuilder().setTitle(title).build()).build());
        }
        return SessionView.newBuilder().setSessionId("run-0").setAccount("acct").setSpace("web").setSequence(1).setAgent("codex")
                .setComputerId("laptop").setStatus(dev.ensemble.sessions.views.SessionStatus.IDLE).setLatestTaskTitle(title)
                .setCreatedAt(Instant.EPOCH).setLastActiveAt(Instant.EPOCH).setRuns(rs).setTasks(ts).build();
    }
}
