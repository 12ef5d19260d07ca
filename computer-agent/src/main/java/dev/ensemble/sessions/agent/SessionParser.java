package dev.ensemble.sessions.agent;

import com.fasterxml.jackson.databind.JsonNode;
import dev.ensemble.sessions.agent.ImportState.SessionState;
import dev.ensemble.sessions.agent.ImportState.Turn;
import dev.ensemble.sessions.events.EngineEvent;
import dev.ensemble.sessions.events.Event;
import dev.ensemble.sessions.events.FolderKind;
import dev.ensemble.sessions.events.RunClaimed;
import dev.ensemble.sessions.events.RunKind;
import dev.ensemble.sessions.events.RunStatus;
import dev.ensemble.sessions.events.RunStatusChanged;
import dev.ensemble.sessions.events.TaskFacts;

import java.time.Instant;
import java.time.format.DateTimeParseException;
import java.util.ArrayList;
import java.util.List;

/**
 * Turns the lines of one agent session's transcript into events (guide section 1: one agent session is one
 * coding session; each real prompt is a run continuing the one before; each reply with usage is an engine
 * event). The agent-specific subclasses decide what a line means; this class holds the rules they share:
 *
 * <ul>
 *   <li>run ids: the first run is {@code <agent>:<session>}, later ones {@code <agent>:<session>:<key>} where
 *       the key is the prompt line's uuid (Claude Code) or the prompt's 1-based ordinal (Codex);</li>
 *   <li>a claim is {@code RunClaimed} then {@code RunStatusChanged WORKING} at the prompt's time; it waits for
 *       the turn's model (from the first reply, or the turn context) until the next line that needs the run,
 *       at the latest the end of what was read;</li>
 *   <li>a turn closes with {@code RunStatusChanged DONE} when the next prompt starts, when the last line read
 *       ended the turn, or when the file has been idle for 30 minutes ({@link #finish});</li>
 *   <li>a session whose first turn ends without any reply with usage gets one {@code EngineEvent} of unknown
 *       fill for its first run.</li>
 * </ul>
 *
 * Event ids are name-based UUIDs of {@code <agent>/<session>/<key>/<kind>}, so reading a transcript again
 * (from the saved state or from scratch) gives the same ids. State lives in {@link SessionState} and is saved
 * between imports; a pending claim never is (it is flushed by {@link #finish}).
 */
abstract class SessionParser {
    static final int TITLE_MAX = 120;
    static final int DESCRIPTION_MAX = 4_000;
    static final int SUMMARY_MAX = 200;

    final String agent;
    final SessionState s;
    final EventFactory events;
    private final String fallbackSessionId;
    private final long fallbackAt;
    private final List<Event> out = new ArrayList<>();
    private Pending pending;

    /**
     * @param fallbackSessionId the session id when no line names one (from the file name)
     * @param fallbackAt        the time (epoch ms) of lines before the first line with a time (the file's mtime)
     */
    SessionParser(String agent, SessionState state, EventFactory events, String fallbackSessionId, long fallbackAt) {
        this.agent = agent;
        this.s = state;
        this.events = events;
        this.fallbackSessionId = fallbackSessionId;
        this.fallbackAt = fallbackAt;
    }

    /** Reads one JSON object line ({@code lineNo} counted from 1). Unknown kinds of lines are ignored. */
    abstract void line(JsonNode line, long lineNo);

    /** The context window (tokens) a claim of a run on {@code model} records, or null if unknown. */
    abstract Long windowForClaim(String model);

    /** The session this session's first run continues ({@code RunClaimed.continuesSessionOf}), or null. */
    String continuesSessionOf() {
        return null;
    }

    /** The events made so far, in order. */
    List<Event> events() {
        return out;
    }

    /** The agent session id: the one the lines name, else the file's. */
    String sessionId() {
        return s.sessionId != null ? s.sessionId : fallbackSessionId;
    }

    /** A working folder named by a line: the newest, and one of the session's folders. */
    void cwd(String cwd) {
        if (cwd == null || cwd.isBlank()) {
            return;
        }
        s.cwd = cwd;
        if (!s.folders.contains(cwd)) {
            s.folders.add(cwd);
        }
    }

    /** A line's time (epoch ms) from its ISO-8601 {@code timestamp}; a line without one has the previous line's. */
    long time(JsonNode line) {
        return time(text(line, "timestamp"));
    }

    /** The time (epoch ms) of a line whose {@code timestamp} is {@code ts} (null: none; see {@link #time(JsonNode)}). */
    long time(String ts) {
        if (ts != null) {
            try {
                long at = epochMillis(ts);
                s.lastAt = at;
                return at;
            } catch (DateTimeParseException e) {
                // a line with a bad time has the time of the line before it, like a line without one
            }
        }
        return s.lastAt != null ? s.lastAt : fallbackAt;
    }

    /**
     * The epoch ms of an ISO-8601 instant ({@link Instant#parse}); the form transcripts use,
     * {@code yyyy-MM-ddTHH:mm:ss[.fraction]Z}, read without a formatter (the fraction truncated to ms).
     *
     * @throws DateTimeParseException when it is not an instant
     */
    static long epochMillis(String t) {
        int n = t.length();
        if (n >= 20 && n <= 30 && t.charAt(4) == '-' && t.charAt(7) == '-' && t.charAt(10) == 'T'
                && t.charAt(13) == ':' && t.charAt(16) == ':' && t.charAt(n - 1) == 'Z') {
            int year = digits(t, 0, 4);
            int month = digits(t, 5, 2);
            int day = digits(t, 8, 2);
            int hour = digits(t, 11, 2);
            int minute = digits(t, 14, 2);
            int second = digits(t, 17, 2);
            int millis = 0;
            boolean ok = n == 20;
            if (n > 21 && t.charAt(19) == '.' && n - 21 <= 9) {
                ok = digits(t, 20, n - 21) >= 0;
                for (int i = 20; i < 23; i++) {
                    millis = millis * 10 + (i < n - 1 ? t.charAt(i) - '0' : 0);
                }
            }
            if (ok && year >= 1 && month >= 1 && month <= 12 && day >= 1
                    && day <= java.time.YearMonth.of(year, month).lengthOfMonth()
                    && hour >= 0 && hour <= 23 && minute >= 0 && minute <= 59 && second >= 0 && second <= 59) {
                long days = java.time.LocalDate.of(year, month, day).toEpochDay();
                return ((days * 24 + hour) * 60 + minute) * 60_000L + second * 1_000L + millis;
            }
        }
        return Instant.parse(t).toEpochMilli();
    }

    /** The {@code count} ASCII digits of {@code t} from {@code at} as a number, or -1 when one is not a digit. */
    private static int digits(String t, int at, int count) {
        int v = 0;
        for (int i = at; i < at + count; i++) {
            char c = t.charAt(i);
            if (c < '0' || c > '9') {
                return -1;
            }
            v = count > 9 ? 0 : v * 10 + (c - '0');
        }
        return v;
    }

    private String idName(String key, String kind) {
        return agent + "/" + sessionId() + "/" + key + "/" + kind;
    }

    /**
     * A real prompt: closes the open turn, and starts a run.
     *
     * @param key    the prompt line's uuid, or the prompt's ordinal
     * @param at     the prompt's time (epoch ms)
     * @param text   the prompt's text (may be blank when it is only an image)
     * @param folder the working folder the prompt was given in
     */
    void prompt(String key, long at, String text, boolean image, String folder) {
        flushPending();
        closeTurn();
        if (s.sessionId == null) {
            s.sessionId = fallbackSessionId;
        }
        s.prompts++;
        String runId = s.prompts == 1 ? agent + ":" + sessionId() : agent + ":" + sessionId() + ":" + key;
        Pending p = new Pending();
        p.runId = runId;
        p.key = key;
        p.previousRunId = s.currentRunId;
        p.at = at;
        p.text = text;
        p.image = image;
        p.folder = folder != null ? folder : s.cwd;
        cwd(p.folder);
        p.folders = List.copyOf(s.folders);
        if (s.prompts == 1) {
            s.firstRunId = runId;
            s.firstPromptAt = at;
        }
        s.currentRunId = runId;
        Turn t = new Turn();
        t.runId = runId;
        t.key = key;
        t.promptAt = at;
        t.lastAt = at;
        s.turn = t;
        pending = p;
        if (modelKnownAtPrompt()) {
            flushPending();
        }
    }

    /** Whether the model of a new prompt's run is already known from the session's context (Codex turn_context). */
    boolean modelKnownAtPrompt() {
        return false;
    }

    /** The turn's model became known (the first reply, or a turn context): a waiting claim takes it and is sent. */
    void model(String model) {
        if (model == null || model.isBlank()) {
            return;
        }
        s.model = model;
        if (pending != null) {
            flushPending();
        }
    }

    /** Sends the waiting claim, if any: RunClaimed, then WORKING at the same time. */
    void flushPending() {
        Pending p = pending;
        if (p == null) {
            return;
        }
        pending = null;
        String model = s.model;
        String title = Text.firstLine(p.text);
        if (title.isEmpty()) {
            title = p.image ? "(image)" : "(empty prompt)";
        }
        String description = Text.trimTo(p.text, DESCRIPTION_MAX);
        RunClaimed claim = RunClaimed.newBuilder()
                .setRunId(p.runId)
                .setTaskId(null)
                .setComputerId(events.computerId())
                .setAgent(agent)
                .setModel(model)
                .setContextWindow(windowForClaim(model))
                .setFolder(p.folder)
                .setFolders(p.folders)
                .setFolderKind(FolderKind.LOCAL)
                .setKind(RunKind.TERMINAL_CHAT)
                .setContinueFromJobId(p.previousRunId)
                .setContinuesSessionOf(p.previousRunId == null ? continuesSessionOf() : null)
                .setAgentSessionId(sessionId())
                .setTask(TaskFacts.newBuilder()
                        .setTitle(Text.shorten(title, TITLE_MAX))
                        .setDescription(description == null || description.isEmpty() ? null : description)
                        .build())
                .build();
        Instant at = Instant.ofEpochMilli(p.at);
        out.add(events.event(idName(p.key, "claimed"), at, claim));
        out.add(events.event(idName(p.key, "working"), at,
                RunStatusChanged.newBuilder().setRunId(p.runId).setStatus(RunStatus.WORKING).build()));
    }

    /** A main-conversation line of the open turn at {@code at}: it is the turn's last line so far. */
    void touch(long at) {
        if (s.turn != null) {
            s.turn.lastAt = Math.max(s.turn.lastAt, at);
        }
    }

    /** Whether the last line read ended the turn (end_turn, task_complete). */
    void ended(boolean ended) {
        if (s.turn != null) {
            s.turn.ended = ended;
        }
    }

    void assistantText(String text) {
        if (s.turn != null && text != null && !text.isBlank()) {
            s.turn.lastText = text;
        }
    }

    void fileChanged(String path) {
        if (s.turn != null && path != null && !path.isBlank() && !s.turn.files.contains(path)) {
            s.turn.files.add(path);
        }
    }

    /**
     * A reply with usage in the main conversation. The first time {@code replyKey} is seen in the turn it gives
     * an engine event; later lines of the same reply only update its output tokens (the last line has the
     * final count). Before the first prompt there is no run to report it for, and it is left out.
     *
     * @param replyKey     the reply's id (Claude Code message.id) or its line (Codex token_count)
     * @param input        input tokens, for the run's token total
     * @param output       output tokens, for the run's token total
     * @param contextUsed  tokens of the context the reply was computed over, or null if unknown
     * @param contextSize  the model's context window (tokens), or null if unknown
     */
    void reply(String replyKey, long at, long input, long output, Long contextUsed, Long contextSize, String model) {
        if (s.turn == null) {
            return;
        }
        flushPending();
        long[] seen = s.turn.replies.get(replyKey);
        if (seen != null) {
            seen[1] = Math.max(seen[1], output);
            return;
        }
        s.turn.replies.put(replyKey, new long[] {input, output});
        s.usageSeen = true;
        out.add(events.event(idName(replyKey, "engine"), Instant.ofEpochMilli(at), EngineEvent.newBuilder()
                .setRunId(s.currentRunId)
                .setAgentSessionId(sessionId())
                .setContextUsed(contextUsed)
                .setContextSize(contextSize)
                .setModel(model)
                .build()));
    }

    /** Closes the open turn, if any: DONE with the report summary, files changed, tokens and duration. */
    void closeTurn() {
        Turn t = s.turn;
        if (t == null || t.closed) {
            return;
        }
        flushPending();
        t.closed = true;
        Long tokens = null;
        if (!t.replies.isEmpty()) {
            long sum = 0;
            for (long[] r : t.replies.values()) {
                sum += r[0] + r[1];
            }
            tokens = sum;
        }
        out.add(events.event(idName(t.key, "done"), Instant.ofEpochMilli(t.lastAt), RunStatusChanged.newBuilder()
                .setRunId(t.runId)
                .setStatus(RunStatus.DONE)
                .setReportSummary(Text.oneLineShortened(t.lastText, SUMMARY_MAX))
                .setFilesChanged(List.copyOf(t.files))
                .setTokens(tokens)
                .setDurationMs(Math.max(0L, t.lastAt - t.promptAt))
                .build()));
        if (t.runId.equals(s.firstRunId) && !s.usageSeen && !s.noUsageSent) {
            // a transcript without usage: one engine event of unknown fill, so the agent session id is known
            // and the fill stays unknown (not 0); sent once the first turn is over, so that an import in the
            // middle of the first reply and one of the whole file send the same events
            s.noUsageSent = true;
            out.add(events.event(idName("no-usage", "engine"), Instant.ofEpochMilli(t.lastAt),
                    EngineEvent.newBuilder().setRunId(s.firstRunId).setAgentSessionId(sessionId())
                            .setContextUsed(null).setContextSize(null).setModel(s.model).build()));
        }
    }

    /**
     * The end of what was read (or a look at an unchanged file): sends a waiting claim, and closes the open turn
     * when its last line ended it or when {@code idle} (the file not modified for 30 minutes).
     */
    void finish(boolean idle) {
        flushPending();
        Turn t = s.turn;
        if (t != null && !t.closed && (t.ended || idle)) {
            closeTurn();
        }
    }

    /** Whether {@code path} begins with a Windows drive: {@code C:\...} or {@code C:/...} (a session run on Windows). */
    static boolean hasDrive(String path) {
        return path.length() > 2 && path.charAt(1) == ':' && (path.charAt(2) == '\\' || path.charAt(2) == '/')
                && (path.charAt(0) >= 'A' && path.charAt(0) <= 'Z' || path.charAt(0) >= 'a' && path.charAt(0) <= 'z');
    }

    static String text(JsonNode node, String field) {
        JsonNode v = node == null ? null : node.get(field);
        return v != null && v.isTextual() ? v.asText() : null;
    }

    static Long number(JsonNode node, String field) {
        JsonNode v = node == null ? null : node.get(field);
        return v != null && v.isNumber() ? v.asLong() : null;
    }

    static long count(JsonNode node, String field) {
        Long v = number(node, field);
        return v == null ? 0L : v;
    }

    /** A claim waiting for its model. */
    private static final class Pending {
        String runId;
        String key;
        String previousRunId;
        long at;
        String text;
        boolean image;
        String folder;
        List<String> folders;
    }
}
