package dev.ensemble.sessions.choice;

import dev.ensemble.sessions.events.CandidateScore;
import dev.ensemble.sessions.events.CandidateSignals;
import dev.ensemble.sessions.events.ChoiceBand;
import dev.ensemble.sessions.events.ChoiceDecision;
import dev.ensemble.sessions.events.SessionChoiceRecorded;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Maps a {@link Decision} to the event schema's SessionChoiceRecorded (guide §4 "Records") and stored candidates back
 * to {@link Scorer.StoredCandidate}s for {@link Scorer#rescore}. Pure.
 * <p>
 * Not carried by the schema (v1): {@link Decision#briefReport()} (the report text itself; the record keeps
 * briefFromSessionId), {@link Decision#wordMatchingCut()} and {@link Signals#issueKeys()} (read again from the shown
 * anchors by {@link #storedCandidates}).
 */
public final class ChoiceRecords {
    private ChoiceRecords() {
    }

    /** The SessionChoiceRecorded payload of {@code d}: every candidate's signals, parts and score, best first. */
    public static SessionChoiceRecorded toEvent(Decision d) {
        List<CandidateScore> cands = new ArrayList<>(d.candidates().size());
        for (ScoredCandidate c : d.candidates()) {
            Signals s = c.signals();
            CandidateSignals sig = CandidateSignals.newBuilder()
                    .setLink(s.link()).setDeliverable(s.deliverable()).setMeeting(s.meeting()).setParentPage(s.parentPage())
                    .setAnchors(s.anchors()).setAnchorsShared(new ArrayList<>(s.anchorsShared()))
                    .setTopic(s.topic()).setTopicTerms(new ArrayList<>(s.topicTerms()))
                    .setFollowUp(s.followUp()).setNewWork(s.newWork()).setWarm(s.warm()).setFill(s.fill())
                    .setTasks(s.tasks()).setLinkedTitle(s.linkedTitle())
                    .build();
            cands.add(CandidateScore.newBuilder()
                    .setSessionId(c.sessionId()).setLastActiveAt(c.lastActiveAt()).setSignals(sig)
                    .setParts(new LinkedHashMap<>(c.parts())).setScore(c.score()).setTooFull(c.tooFull())
                    .build());
        }
        return SessionChoiceRecorded.newBuilder()
                .setRunId(d.runId()).setTaskId(d.taskId()).setAgent(d.agent()).setComputerId(d.computerId())
                .setProjectId(d.projectId())
                .setDecision(ChoiceDecision.valueOf(d.decision().name()))
                .setBand(ChoiceBand.valueOf(d.band().name()))
                .setSessionId(d.sessionId()).setScore(d.score()).setReason(d.reason()).setNote(d.note())
                .setBriefFromSessionId(d.briefFromSessionId())
                .setConfigVersion(d.configVersion()).setConfigHash(d.configHash())
                .setCandidates(cands)
                .build();
    }

    /**
     * The stored candidates of a recorded decision, ready for {@link Scorer#rescore} under a config with the word lists
     * {@code text}: the record keeps anchors as shown, so which of them are issue or pull-request keys is read again
     * with the anchor rules of {@code text} (a prefix in its {@code notIssueKeys} is no key).
     */
    public static List<Scorer.StoredCandidate> storedCandidates(SessionChoiceRecorded r, SessionChoiceConfig.Text text) {
        Anchors anchors = TextAnalysis.forConfig(text).anchors();
        List<Scorer.StoredCandidate> out = new ArrayList<>(r.getCandidates().size());
        for (CandidateScore c : r.getCandidates()) {
            CandidateSignals s = c.getSignals();
            List<String> shown = List.copyOf(s.getAnchorsShared());
            int keys = 0;
            for (String a : shown) if (anchors.isIssueKey(a)) keys++;
            out.add(new Scorer.StoredCandidate(c.getSessionId(), c.getLastActiveAt(), new Signals(
                    s.getLink(), s.getDeliverable(), s.getMeeting(), s.getParentPage(), s.getAnchors(),
                    shown, keys, s.getTopic(), List.copyOf(s.getTopicTerms()), s.getFollowUp(),
                    s.getNewWork(), s.getWarm(), s.getFill(), s.getTasks(), s.getLinkedTitle())));
        }
        return out;
    }

    /** The parts of a recorded candidate, in its stored order. */
    public static Map<String, Double> parts(CandidateScore c) {
        return new LinkedHashMap<>(c.getParts());
    }
}
