package dev.ensemble.sessions.choice;

import java.util.List;

/**
 * One session-choice decision (guide §4 "Records"): continue a session or start a new one, with its band, reason,
 * note and every candidate scored, best first. {@link ChoiceRecords#toEvent} turns it into SessionChoiceRecorded.
 *
 * @param sessionId          the session continued, or the best candidate (null when none)
 * @param score              that session's score, or null
 * @param note               null, or one of {@link #NEW_SESSION}, {@link #TOO_FULL}, {@link #UNAVAILABLE},
 *                           {@link #NOT_LINKED}, {@link #DISABLED}, {@link #NOT_ELIGIBLE}, {@link #AUTOMATED}
 *                           (beyond the guide: the title matched {@code text.automated})
 * @param briefFromSessionId too full: the new session gets this session's last report ({@code briefReport})
 * @param wordMatchingCut    the time budget ran out: some candidates were scored on links and structure alone
 */
public record Decision(String runId, String taskId, String agent, String computerId, String projectId, Choice decision,
                       Band band, String sessionId, Double score, String reason, String note, String briefFromSessionId,
                       String briefReport, String configVersion, String configHash, List<ScoredCandidate> candidates,
                       boolean wordMatchingCut) {
    /** Notes (guide §4 "Records"). */
    public static final String NEW_SESSION = "new-session", TOO_FULL = "too-full", UNAVAILABLE = "unavailable",
            NOT_LINKED = "not-linked", DISABLED = "disabled", NOT_ELIGIBLE = "not-eligible", AUTOMATED = "automated";

    public Decision {
        candidates = candidates == null ? List.of() : List.copyOf(candidates);
    }

    /** Continue a session, or start a new one. */
    public enum Choice { CONTINUE, NEW }

    /** Bands (guide §4 "Bands"); NONE when no candidate was scored (not eligible, disabled, asked, or none left). */
    public enum Band { CONFIDENT, UNSURE, BELOW, NONE }

    /** The same decision turned into a new session because the session could not take the run (note unavailable). */
    public Decision unavailable(String why) {
        return new Decision(runId, taskId, agent, computerId, projectId, Choice.NEW, band, sessionId, score,
                "Started a new session: the chosen session could not take the run (" + why + ")", UNAVAILABLE,
                briefFromSessionId, briefReport, configVersion, configHash, candidates, wordMatchingCut);
    }

    /** The same decision turned into a new session because the web refused the session named (note not-linked). */
    public Decision notLinked(String why) {
        return new Decision(runId, taskId, agent, computerId, projectId, Choice.NEW, band, sessionId, score,
                "Started a new session: the web refused the session (" + why + ")", NOT_LINKED,
                briefFromSessionId, briefReport, configVersion, configHash, candidates, wordMatchingCut);
    }
}
