package dev.ensemble.sessions.projector;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;
import java.util.Objects;
import java.util.Set;

/**
 * When a session may go from its agents (guide §6 "Cleaning up sessions", §5 for the idle kinds), as pure
 * functions of plain records and an instant. Nothing here reads a clock: the projector passes the time of the
 * newest fact (for the view) or of the request (for the guard, {@link DeletionGuard}), the tests pass exact
 * boundaries.
 *
 * <p><b>Coding sessions</b> (task runs, terminal chats) retire once every task in them is retired
 * ({@link #taskRetiredAt}): deleted at least 10 minutes ago (so Undo still finds it), or done or dropped
 * longer than the completed window and not pinned. A task whose status is not known, or a run without a task,
 * is in use. <b>A node's own coding session</b> (sourceRef {@code node:<id>}) also goes once none of its runs
 * started or finished in 7 days (guide §6, NODE_SESSION_IDLE_DAYS), unless a person's own open task in it
 * keeps it.
 *
 * <p><b>Idle kinds</b> (guide §5 and the table at the top of the guide): an ask goes 30 minutes after its last
 * answer (fixed); an assistant chat unused for 30 days; a node's conversation unused for 7 days; a routine
 * unused for twice the gap to its next run, kept within 30 to 90 days (90 when the next run is not known); a
 * one-off completion once its turn ended.
 *
 * <p><b>keepDays</b> (RunClaimed.keepDays, the newest run's that sets one): 0 means never (the persistent
 * sessions guide's idle TTL 0), for every kind; a positive value replaces the idle time-to-live of chats,
 * node conversations, routines and node sessions. It does not lengthen an ask's fixed 30 minutes (the
 * {@code keepDays: 1} sent with an ask is the computer's own fallback, guide §5) and does not apply to the
 * task rule.
 *
 * <p><b>When to look again</b> (guide §6): at once when ready; at the next sweep while a run is queued or
 * going; at the instant it becomes ready when that is known (every task deleted, or done or dropped and not
 * pinned: the last of their {@link #taskRetiredAt}; an idle kind when it goes idle; a node session when it goes
 * idle); 6 hours while a task is still in use (open, pinned and done, status unknown, or a run without a task);
 * 1 hour while a computer is offline, unknown or too old to delete (capabilities.sessionDelete below 1); a day
 * after a failed deletion, or after an attempt a computer has not answered. The view is evaluated as of its
 * newest fact, not as of a sweep, so a session whose last task was deleted a minute before that fact is due ten
 * minutes after the deletion, not six hours after the fact.
 */
public final class RetirementRules {
    private RetirementRules() {
    }

    /** Reasons a system deletion request gives. */
    public static final String RETIRED = "retired";
    public static final String IDLE = "idle";
    public static final String NODE_IDLE = "node-idle";
    public static final String RETRY = "retry";

    /**
     * Every number of the rules. {@link #defaults()} holds the guide's; the completed window is not fixed by
     * the guide and defaults to 7 days.
     *
     * @param completedWindow       a done or dropped task retires after this long (default 7 days)
     * @param deletedGrace          a deleted task retires after this long (10 minutes: Undo still finds it)
     * @param inUseRecheck          look again after this long while a task is in use (6 hours)
     * @param computerRecheck       look again after this long while a computer is offline or too old (1 hour)
     * @param failedRetry           retry a failed or unanswered deletion after this long (1 day)
     * @param nodeSessionIdle       a node's own coding session goes after this long without a run starting or finishing (7 days)
     * @param askIdle               an ask goes this long after its last answer (30 minutes)
     * @param chatIdle              an assistant chat goes after this long unused (30 days)
     * @param nodeConversationIdle  a node's conversation goes after this long unused (7 days)
     * @param routineMin            a routine is kept at least this long unused (30 days)
     * @param routineMax            and at most this long (90 days)
     */
    public record Config(Duration completedWindow, Duration deletedGrace, Duration inUseRecheck, Duration computerRecheck,
                         Duration failedRetry, Duration nodeSessionIdle, Duration askIdle, Duration chatIdle,
                         Duration nodeConversationIdle, Duration routineMin, Duration routineMax) {
        public Config {
            Objects.requireNonNull(completedWindow, "completedWindow");
            if (completedWindow.isNegative()) {
                throw new IllegalArgumentException("the completed window must not be negative: " + completedWindow);
            }
        }

        /** The guide's numbers, and a completed window of 7 days. */
        public static Config defaults() {
            return new Config(Duration.ofDays(7), Duration.ofMinutes(10), Duration.ofHours(6), Duration.ofHours(1),
                    Duration.ofDays(1), Duration.ofDays(7), Duration.ofMinutes(30), Duration.ofDays(30), Duration.ofDays(7),
                    Duration.ofDays(30), Duration.ofDays(90));
        }

        /** These numbers with another completed window. */
        public Config withCompletedWindow(Duration window) {
            return new Config(window, deletedGrace, inUseRecheck, computerRecheck, failedRetry, nodeSessionIdle, askIdle,
                    chatIdle, nodeConversationIdle, routineMin, routineMax);
        }
    }

    /**
     * One run: its id, RunStatus symbol and times.
     */
    public record Run(String runId, String status, Instant claimedAt, Instant startedAt, Instant endedAt) {
        boolean going() {
            return "WORKING".equals(status) || "WAITING".equals(status);
        }

        boolean queued() {
            return "QUEUED".equals(status);
        }

        Instant lastActivity() {
            return latest(latest(claimedAt, startedAt), endedAt);
        }
    }

    /**
     * One task of the session.
     *
     * @param taskId      null for a run without a task (never retired)
     * @param status      TaskStatus symbol (OPEN, DONE, DROPPED, DELETED), null while unknown
     * @param personOwned a person's own task (its sourceRef is not {@code node:…}, or not known)
     * @param changedAt   when its newest TaskChanged occurred: stands in for a missing completedAt or deletedAt
     */
    public record Task(String taskId, String status, boolean pinned, boolean personOwned, Instant completedAt,
                       Instant deletedAt, Instant changedAt) {
    }

    /**
     * One computer the session ran on, as its newest ComputerStatus says.
     *
     * @param known         a status was seen
     * @param sessionDelete capabilities.sessionDelete (0 when not reported)
     */
    public record Computer(String computerId, boolean known, boolean online, int sessionDelete, Instant reportedAt) {
        /** Online and able to delete sessions on request. */
        public boolean ready() {
            return known && online && sessionDelete >= 1;
        }

        /** Why it is not ready, for people, naming the computer and what to do; null when ready. */
        public String problem() {
            if (!known) {
                return "computer " + computerId + " has not reported its status: connect it";
            }
            if (!online) {
                return "computer " + computerId + " is offline: connect it";
            }
            if (sessionDelete < 1) {
                return "computer " + computerId + " is too old to delete sessions (sessionDelete " + sessionDelete + "): update it";
            }
            return null;
        }

        /** The guard's code for {@link #problem()}. */
        public String code() {
            return !known ? "computer-unknown" : !online ? "computer-offline" : sessionDelete < 1 ? "computer-cannot-delete" : null;
        }
    }

    /**
     * A deletion accepted and not yet confirmed by every computer.
     *
     * @param owedComputerIds computers asked that have not confirmed
     * @param lastAttemptAt   when the newest attempt was accepted
     * @param failedAt        the newest failure answer, or null
     */
    public record Pending(Set<String> owedComputerIds, Instant lastAttemptAt, Instant failedAt) {
    }

    /**
     * What the rules know of one session.
     *
     * @param kind           RunKind symbol of its first run
     * @param sourceRef      {@code node:<id>} for a node's own session
     * @param lastActivityAt its newest claim, start, end or engine event
     * @param keepDays       the newest keepDays its runs set, or null
     * @param nextRunAt      routines: the next scheduled run, or null
     * @param pending        the deletion in progress, or null
     */
    public record Facts(String sessionId, String kind, String sourceRef, boolean deleted, boolean deleting, List<Run> runs,
                        List<Task> tasks, List<Computer> computers, Integer keepDays, Instant nextRunAt,
                        Instant lastActivityAt, Pending pending) {
        public Facts {
            runs = List.copyOf(runs);
            tasks = List.copyOf(tasks);
            computers = List.copyOf(computers);
        }

        /** A node's own session (sourceRef {@code node:…}). */
        public boolean nodeSession() {
            return sourceRef != null && sourceRef.startsWith("node:");
        }

        /** The newest end of a run, or null. */
        public Instant lastAnswerAt() {
            Instant t = null;
            for (Run r : runs) {
                t = latest(t, r.endedAt());
            }
            return t;
        }

        /** Runs working or waiting. */
        public List<String> goingRunIds() {
            return runs.stream().filter(Run::going).map(Run::runId).toList();
        }

        /** Runs queued. */
        public List<String> queuedRunIds() {
            return runs.stream().filter(Run::queued).map(Run::runId).toList();
        }

        /** Every run id, in order. */
        public List<String> runIds() {
            return runs.stream().map(Run::runId).toList();
        }
    }

    /**
     * The time-free part of the rules: when the session becomes ready for each reason, and what blocks it
     * whatever the time.
     *
     * @param retiredAt      every task retired from then (null: not without a change)
     * @param nodeIdleAt     a node session idle from then (null: not a node session, or kept by a person's open task)
     * @param idleAt         an idle kind unused long enough from then (null: not an idle kind, or never)
     * @param reason         the reason it becomes ready first ({@link #RETIRED}, {@link #IDLE}, {@link #NODE_IDLE}, {@link #RETRY}), or null
     * @param readyAt        the instant for {@code reason}, or null
     * @param kept           keepDays 0: never by the system
     * @param runsIdle       no run queued or going
     * @param computersReady every computer (while deleting: every computer still owing an answer) online and able to delete
     * @param taskRetiredAt  each task's {@link #taskRetiredAt}, in the order of the facts' tasks
     */
    public record Readiness(Instant retiredAt, Instant nodeIdleAt, Instant idleAt, String reason, Instant readyAt,
                            boolean kept, boolean runsIdle, boolean computersReady, List<String> computerProblems,
                            List<Instant> taskRetiredAt) {
        /** Whether the session may be deleted at {@code at} for its reason. */
        public boolean readyAt(Instant at) {
            return !kept && runsIdle && computersReady && readyAt != null && !at.isBefore(readyAt);
        }

        /** The instant the session becomes ready for {@code reason}, or null when the rule does not apply. */
        public Instant readyAtFor(String reason) {
            return switch (reason) {
                case RETIRED -> retiredAt;
                case IDLE -> idleAt;
                case NODE_IDLE -> nodeIdleAt;
                default -> null;
            };
        }
    }

    /** The view's states; see the RetirementView record. */
    public enum State { READY, RUN_GOING, IN_USE, KEPT, COMPUTER_UNAVAILABLE, DELETING, DELETED }

    /**
     * The rules applied at one instant.
     *
     * @param nextDueAt when the cleanup looks at it next; null: never without a change
     * @param recheck   when looked at and not ready, look again no sooner than this (zero: at the next sweep)
     * @param blockers  why it is not ready, one line each, for people
     */
    public record Verdict(State state, Readiness readiness, Instant nextDueAt, Duration recheck, List<String> blockers) {
    }

    /** The kinds reaped when unused rather than by their tasks (guide §5). */
    public static boolean idleKind(String kind) {
        return switch (kind == null ? "" : kind) {
            case "ASK", "ASSISTANT_CHAT", "NODE_RUN", "ROUTINE", "ONE_OFF" -> true;
            default -> false;
        };
    }

    /**
     * The first instant a task counts as retired, or null when it does not without a change: DELETED → its
     * deletedAt (else changedAt) plus 10 minutes, inclusive ("deleted at least 10 minutes ago"); DONE or
     * DROPPED and not pinned → its completedAt (else changedAt) plus the completed window plus one millisecond
     * ("longer than the completed window"); OPEN, pinned and done, unknown → null.
     */
    public static Instant taskRetiredAt(Task t, Config c) {
        if (t.status() == null) {
            return null;
        }
        switch (t.status()) {
            case "DELETED": {
                Instant at = t.deletedAt() != null ? t.deletedAt() : t.changedAt();
                return at == null ? null : at.plus(c.deletedGrace());
            }
            case "DONE":
            case "DROPPED": {
                if (t.pinned()) {
                    return null;
                }
                Instant at = t.completedAt() != null ? t.completedAt() : t.changedAt();
                return at == null ? null : at.plus(c.completedWindow()).plusMillis(1);
            }
            default:
                return null;
        }
    }

    /** The time-free part of the rules for {@code f}. */
    public static Readiness readiness(Facts f, Config c) {
        boolean runsIdle = f.runs().stream().noneMatch(r -> r.going() || r.queued());
        List<String> problems = new ArrayList<>();
        for (Computer computer : f.computers()) {
            if (f.deleting() && f.pending() != null && !f.pending().owedComputerIds().contains(computer.computerId())) {
                continue; // it confirmed already
            }
            if (!computer.ready()) {
                problems.add(computer.problem());
            }
        }
        List<Instant> taskRetired = new ArrayList<>();
        Instant retiredAt = f.tasks().isEmpty() ? null : Instant.MIN;
        for (Task t : f.tasks()) {
            Instant r = taskRetiredAt(t, c);
            taskRetired.add(r);
            retiredAt = retiredAt == null || r == null ? null : latest(retiredAt, r);
        }
        if (f.deleting()) {
            Instant retryAt = null;
            if (f.pending() != null) {
                retryAt = latest(f.pending().lastAttemptAt(), f.pending().failedAt());
                retryAt = retryAt == null ? null : retryAt.plus(c.failedRetry());
            }
            return new Readiness(retiredAt, null, null, RETRY, retryAt, false, runsIdle, problems.isEmpty(), problems, taskRetired);
        }
        boolean kept = f.keepDays() != null && f.keepDays() == 0;
        Instant idleAt = null;
        Instant nodeIdleAt = null;
        if (idleKind(f.kind())) {
            idleAt = idleAt(f, c);
            retiredAt = null;
        } else if (f.nodeSession()) {
            boolean keptByPerson = f.tasks().stream().anyMatch(t -> t.personOwned() && (t.status() == null || "OPEN".equals(t.status())));
            Instant last = null;
            for (Run r : f.runs()) {
                last = latest(last, r.lastActivity());
            }
            Duration ttl = f.keepDays() != null && f.keepDays() > 0 ? Duration.ofDays(f.keepDays()) : c.nodeSessionIdle();
            nodeIdleAt = keptByPerson || last == null ? null : last.plus(ttl);
        }
        String reason = null;
        Instant readyAt = null;
        for (String r : List.of(RETIRED, NODE_IDLE, IDLE)) {
            Instant at = r.equals(RETIRED) ? retiredAt : r.equals(NODE_IDLE) ? nodeIdleAt : idleAt;
            if (at != null && (readyAt == null || at.isBefore(readyAt))) {
                readyAt = at;
                reason = r;
            }
        }
        if (reason == null) {
            reason = idleKind(f.kind()) ? IDLE : f.nodeSession() ? NODE_IDLE : RETIRED;
        }
        return new Readiness(retiredAt, nodeIdleAt, idleAt, reason, readyAt, kept, runsIdle, problems.isEmpty(), problems, taskRetired);
    }

    private static Instant idleAt(Facts f, Config c) {
        Integer keep = f.keepDays();
        if (keep != null && keep == 0) {
            return null;
        }
        Instant lastUse = f.lastActivityAt();
        switch (f.kind()) {
            case "ASK": {
                Instant answer = f.lastAnswerAt();
                return answer == null ? null : answer.plus(c.askIdle());
            }
            case "ONE_OFF":
                return f.lastAnswerAt();
            case "ASSISTANT_CHAT":
                return lastUse.plus(keep != null ? Duration.ofDays(keep) : c.chatIdle());
            case "NODE_RUN":
                return lastUse.plus(keep != null ? Duration.ofDays(keep) : c.nodeConversationIdle());
            case "ROUTINE":
                return lastUse.plus(keep != null ? Duration.ofDays(keep) : routineTtl(lastUse, f.nextRunAt(), c));
            default:
                return null;
        }
    }

    /**
     * A routine's idle time-to-live: twice the gap from its last use to its next run, kept within
     * [routineMin, routineMax]; routineMax when the next run is not known.
     */
    public static Duration routineTtl(Instant lastUse, Instant nextRunAt, Config c) {
        if (nextRunAt == null) {
            return c.routineMax();
        }
        Duration twice = Duration.between(lastUse, nextRunAt).multipliedBy(2);
        if (twice.compareTo(c.routineMin()) < 0) {
            return c.routineMin();
        }
        return twice.compareTo(c.routineMax()) > 0 ? c.routineMax() : twice;
    }

    /** The rules at {@code at}: the state, when to look again, and why it is not ready. */
    public static Verdict evaluate(Facts f, Instant at, Config c) {
        Readiness r = readiness(f, c);
        List<String> blockers = new ArrayList<>();
        if (f.deleted()) {
            return new Verdict(State.DELETED, r, null, Duration.ZERO, List.of());
        }
        if (f.deleting()) {
            if (r.readyAt() != null && at.isBefore(r.readyAt())) {
                blockers.add("deletion in progress: waiting for " + String.join(", ", sorted(f.pending() == null ? Set.of() : f.pending().owedComputerIds()))
                        + "; tried again at " + r.readyAt());
                return new Verdict(State.DELETING, r, r.readyAt(), Duration.ZERO, blockers);
            }
            if (!r.computersReady()) {
                blockers.addAll(r.computerProblems());
                return new Verdict(State.COMPUTER_UNAVAILABLE, r, at.plus(c.computerRecheck()), c.computerRecheck(), blockers);
            }
            return new Verdict(State.READY, r, at, Duration.ZERO, blockers);
        }
        if (r.kept()) {
            blockers.add("kept: keepDays is 0");
            return new Verdict(State.KEPT, r, null, Duration.ZERO, blockers);
        }
        if (!r.runsIdle()) {
            for (Run run : f.runs()) {
                if (run.going() || run.queued()) {
                    blockers.add("run " + run.runId() + " is " + run.status().toLowerCase(Locale.ROOT));
                }
            }
            return new Verdict(State.RUN_GOING, r, at, Duration.ZERO, blockers);
        }
        if (r.readyAt() == null || at.isBefore(r.readyAt())) {
            blockers.addAll(notReadyLines(f, r, at));
            if (r.readyAt() != null) {
                // every task retires at a known instant (deleted, or done or dropped and not pinned): due then, however
                // soon; "6 hours" would put a task deleted 9 minutes before the newest fact 6 hours after that fact
                return new Verdict(State.IN_USE, r, r.readyAt(), Duration.ZERO, blockers);
            }
            return new Verdict(State.IN_USE, r, at.plus(c.inUseRecheck()), c.inUseRecheck(), blockers);
        }
        if (!r.computersReady()) {
            blockers.addAll(r.computerProblems());
            return new Verdict(State.COMPUTER_UNAVAILABLE, r, at.plus(c.computerRecheck()), c.computerRecheck(), blockers);
        }
        return new Verdict(State.READY, r, at, Duration.ZERO, blockers);
    }

    private static List<String> notReadyLines(Facts f, Readiness r, Instant at) {
        List<String> out = new ArrayList<>();
        if (idleKind(f.kind())) {
            out.add(r.idleAt() == null ? "in use: no answer yet" : "in use until " + r.idleAt());
            return out;
        }
        for (int i = 0; i < f.tasks().size(); i++) {
            Task t = f.tasks().get(i);
            Instant ra = r.taskRetiredAt().get(i);
            if (ra != null && !at.isBefore(ra)) {
                continue;
            }
            String name = t.taskId() == null ? "a run without a task" : "task " + t.taskId();
            if (t.status() == null) {
                out.add(name + " has no known status");
            } else if (t.pinned() && !"DELETED".equals(t.status()) && !"OPEN".equals(t.status())) {
                out.add(name + " is pinned");
            } else if (ra == null) {
                out.add(name + " is " + t.status().toLowerCase(Locale.ROOT));
            } else {
                out.add(name + " is " + t.status().toLowerCase(Locale.ROOT) + " and retires at " + ra);
            }
        }
        if (f.nodeSession()) {
            out.add(r.nodeIdleAt() == null ? "a person's open task keeps this node session" : "node session in use until " + r.nodeIdleAt());
        }
        return out;
    }

    static Instant latest(Instant a, Instant b) {
        if (a == null) {
            return b;
        }
        return b == null || !b.isAfter(a) ? a : b;
    }

    private static List<String> sorted(Set<String> s) {
        return s.stream().sorted(Comparator.naturalOrder()).toList();
    }
}
