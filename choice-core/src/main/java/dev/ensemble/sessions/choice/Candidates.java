package dev.ensemble.sessions.choice;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * The candidate filters of the guide's §4 "Candidates": this computer's sessions of the same agent that are idle,
 * resumable, not chats, not being deleted, active in the last {@code limits.maxAgeDays}, at most
 * {@code limits.candidates}, newest first, and whose every task is of the same space and account as the new task and
 * in its project, or all in none. A session with a task that has no facts (claimed by an older runtime) is never a
 * candidate. Pure; time is passed in.
 */
public final class Candidates {
    /** Exclusion rules, as recorded in {@link Filtered#excluded}. */
    public static final String OTHER_COMPUTER = "other-computer", OTHER_AGENT = "other-agent", NOT_IDLE = "not-idle",
            NOT_RESUMABLE = "not-resumable", CHAT = "chat", NOT_TASK_SESSION = "not-a-task-session",
            DELETING = "being-deleted", TOO_OLD = "inactive-beyond-max-age", NO_FACTS = "no-task-facts",
            OTHER_SPACE = "other-space-or-account", OTHER_PROJECT = "other-project", OVER_LIMIT = "beyond-candidate-limit";

    /** Newest first: last active descending, then session id ascending (so ties are deterministic). */
    public static final Comparator<CandidateSession> NEWEST_FIRST =
            Comparator.comparing(CandidateSession::lastActiveAt).reversed().thenComparing(CandidateSession::sessionId);

    private Candidates() {
    }

    /**
     * The filter's result.
     *
     * @param kept     the candidates, newest first, at most {@code limits.candidates}
     * @param excluded session id → the rule that excluded it (in input order)
     */
    public record Filtered(List<CandidateSession> kept, Map<String, String> excluded) {
    }

    /** Applies every candidate rule to {@code sessions} for {@code run} at time {@code now}. */
    public static Filtered filter(NewRun run, List<CandidateSession> sessions, SessionChoiceConfig.Limits limits, Instant now) {
        Map<String, String> excluded = new LinkedHashMap<>();
        List<CandidateSession> ok = new ArrayList<>();
        Instant oldest = now.minus(Duration.ofDays(limits.maxAgeDays()));
        for (CandidateSession s : sessions) {
            String why = why(run, s, oldest);
            if (why == null) ok.add(s);
            else excluded.put(s.sessionId(), why);
        }
        ok.sort(NEWEST_FIRST);
        if (ok.size() > limits.candidates()) {
            for (CandidateSession s : ok.subList(limits.candidates(), ok.size())) excluded.put(s.sessionId(), OVER_LIMIT);
            ok = new ArrayList<>(ok.subList(0, limits.candidates()));
        }
        return new Filtered(List.copyOf(ok), excluded);
    }

    /**
     * What left every session out, for a person: {@code " (of 3 sessions: 2 inactive for more than limits.maxAgeDays (60
     * days), 1 not idle)"}, each rule with its count in the order of the guide's rules; {@code " (no session to
     * consider)"} when there was none at all.
     */
    public static String explain(Map<String, String> excluded, SessionChoiceConfig.Limits limits) {
        if (excluded.isEmpty()) {
            return " (no session to consider)";
        }
        Map<String, Integer> counts = new LinkedHashMap<>();
        for (String rule : List.of(OTHER_COMPUTER, OTHER_AGENT, CHAT, NOT_TASK_SESSION, NOT_IDLE, NOT_RESUMABLE, DELETING, TOO_OLD,
                NO_FACTS, OTHER_SPACE, OTHER_PROJECT, OVER_LIMIT)) {
            int n = java.util.Collections.frequency(excluded.values(), rule);
            if (n > 0) {
                counts.put(rule, n);
            }
        }
        StringBuilder b = new StringBuilder(" (of ").append(excluded.size()).append(excluded.size() == 1 ? " session: " : " sessions: ");
        String sep = "";
        for (Map.Entry<String, Integer> c : counts.entrySet()) {
            b.append(sep).append(c.getValue()).append(' ').append(switch (c.getKey()) {
                case OTHER_COMPUTER -> "on another computer";
                case OTHER_AGENT -> "of another agent";
                case CHAT -> "chats";
                case NOT_TASK_SESSION -> "not of task runs";
                case NOT_IDLE -> "not idle";
                case NOT_RESUMABLE -> "not resumable";
                case DELETING -> "being deleted";
                case TOO_OLD -> "inactive for more than limits.maxAgeDays (" + limits.maxAgeDays() + " days)";
                case NO_FACTS -> "without task facts";
                case OTHER_SPACE -> "of another space or account";
                case OTHER_PROJECT -> "of another project";
                default -> "beyond limits.candidates";
            });
            sep = ", ";
        }
        return b.append(')').toString();
    }

    private static String why(NewRun run, CandidateSession s, Instant oldest) {
        if (!Objects.equals(s.computerId(), run.computerId())) return OTHER_COMPUTER;
        if (!Objects.equals(s.agent(), run.agent())) return OTHER_AGENT;
        if (s.kind() == NewRun.RunKind.TERMINAL_CHAT || s.kind() == NewRun.RunKind.ASSISTANT_CHAT) return CHAT;
        if (s.kind() != NewRun.RunKind.TASK_RUN) return NOT_TASK_SESSION;
        if (s.status() != CandidateSession.Status.IDLE) return NOT_IDLE;
        if (!s.resumable()) return NOT_RESUMABLE;
        if (s.deleting()) return DELETING;
        if (s.lastActiveAt().isBefore(oldest)) return TOO_OLD;
        if (s.tasks().isEmpty()) return NO_FACTS;
        for (SessionTask t : s.tasks()) {
            if (t.facts() == null) return NO_FACTS;
            if (!Objects.equals(t.space(), run.space()) || !Objects.equals(t.account(), run.account())) return OTHER_SPACE;
            if (!Objects.equals(t.projectId(), run.projectId())) return OTHER_PROJECT;
        }
        return null;
    }
}
