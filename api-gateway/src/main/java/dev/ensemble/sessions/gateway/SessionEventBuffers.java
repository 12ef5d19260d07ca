package dev.ensemble.sessions.gateway;

import dev.ensemble.sessions.events.EngineEvent;
import dev.ensemble.sessions.events.Event;
import dev.ensemble.sessions.events.RunClaimed;
import dev.ensemble.sessions.events.RunStatusChanged;
import dev.ensemble.sessions.events.SessionChoiceOutcome;
import dev.ensemble.sessions.events.SessionChoiceRecorded;
import dev.ensemble.sessions.events.SessionDeleted;
import dev.ensemble.sessions.events.SessionDeletedOnComputer;
import dev.ensemble.sessions.events.SessionDeletionAccepted;
import dev.ensemble.sessions.events.SessionDeletionRequested;
import dev.ensemble.sessions.events.SessionDeletionSkipped;
import dev.ensemble.sessions.events.TaskChanged;
import dev.ensemble.sessions.events.ChoiceDecision;
import dev.ensemble.sessions.schema.EventContent;
import dev.ensemble.sessions.schema.Keys;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Per session, a rolling window of its events (the persistent-sessions guide, "The output buffer": new events are
 * appended; once the window is full the oldest are dropped; a reader asks for everything since a cursor and gets the
 * events, the cursor to resume from, and a truncated flag when its cursor fell outside the window). Pure; fed in log
 * order by {@link SessionEventsFeed}, so the same log always gives the same cursors.
 * <p>
 * Key {@code <account>/<sessionId>}. A session's cursor is the sequence number of its events (1, 2, ...; 0 = before
 * the first). The window holds at most {@code windowBytes} of encoded (Avro single-object) events, and always the
 * newest one. An event belongs to a session by the chain rule of guide §1 (a run with no continueFromJobId starts a
 * session whose id is its run id; a run continuing a run joins that run's session unless it was deleted); a run's
 * status and engine events and its choice outcome follow its run, a NEW choice record goes to the session its run
 * starts, a CONTINUE one to the session continued, deletion events to their session, a task change to every session
 * holding the task. An event of a run not claimed yet waits (at most {@value #MAX_PARKED} such events) for its claim.
 * Thread-safe.
 */
public final class SessionEventBuffers {
    /** The default window per session: 1 MiB (persistent-sessions guide, "Limits"). */
    public static final long DEFAULT_WINDOW_BYTES = 1024 * 1024;
    static final int MAX_PARKED = 10_000;

    /** One event in a session's window: its sequence number, encoded size in bytes, and JSON form. */
    public record Entry(long seq, int bytes, String json) {
    }

    /**
     * One read: the events after the cursor (at most limit), the cursor to resume from, and whether events after the
     * cursor were dropped from the window before they could be read.
     */
    public record Page(List<Entry> events, long next, boolean truncated, long oldest, long latest) {
    }

    private static final class Buffer {
        final ArrayDeque<Entry> entries = new ArrayDeque<>();
        long bytes, latest;
    }

    private final long windowBytes;
    private final Map<String, Buffer> buffers = new HashMap<>();
    private final Map<String, String> runSession = new HashMap<>();
    private final Map<String, Set<String>> taskSessions = new HashMap<>();
    private final Set<String> deleted = new java.util.HashSet<>();
    private final Map<String, List<Object[]>> parked = new HashMap<>();
    private int parkedCount;
    /** Where an eventId's first copy is in the log ({@link #position}) and what it says ({@link EventContent#fingerprint}). */
    private record FirstCopy(long position, long content) {
    }

    /** {@code <account>/<eventId>} → its first copy: a later copy of an eventId is not shown again. */
    private final Map<String, FirstCopy> firstCopies = new HashMap<>();

    /** @param windowBytes the retained window per session, in bytes of encoded events (≥ 1) */
    public SessionEventBuffers(long windowBytes) {
        if (windowBytes < 1) throw new IllegalArgumentException("the window must be at least 1 byte, not " + windowBytes);
        this.windowBytes = windowBytes;
    }

    /**
     * Adds one event of the log, in log order; {@code position} is where it is in the log ({@link #position}),
     * {@code json} its JSON form, {@code bytes} its encoded size. A second copy of an eventId (a client that posted it
     * again) is not added: a reader sees each event once.
     */
    public void add(Event e, long position, int bytes, String json) {
        add(e, EventContent.fingerprint(e), position, bytes, json); // its content's fingerprint taken outside the lock
    }

    private synchronized void add(Event e, long content, long position, int bytes, String json) {
        String acct = e.getAccount();
        if (firstCopies.putIfAbsent(Keys.of(acct, e.getEventId()), new FirstCopy(position, content)) != null) {
            return;
        }
        Object p = e.getPayload();
        if (p instanceof RunClaimed r) {
            String from = r.getContinueFromJobId() == null ? null : runSession.get(Keys.of(acct, r.getContinueFromJobId()));
            String sid = from != null && !deleted.contains(Keys.of(acct, from)) ? from : r.getRunId();
            runSession.put(Keys.of(acct, r.getRunId()), sid);
            if (r.getTaskId() != null) taskSessions.computeIfAbsent(Keys.of(acct, r.getTaskId()), k -> new LinkedHashSet<>()).add(sid);
            append(acct, sid, bytes, json);
            List<Object[]> waiting = parked.remove(Keys.of(acct, r.getRunId()));
            if (waiting != null) {
                parkedCount -= waiting.size();
                for (Object[] w : waiting) append(acct, sid, (Integer) w[0], (String) w[1]);
            }
            return;
        }
        String run = null, session = null;
        if (p instanceof RunStatusChanged s) run = s.getRunId();
        else if (p instanceof EngineEvent s) run = s.getRunId();
        else if (p instanceof SessionChoiceOutcome s) {
            run = s.getRunId();
            session = s.getSessionId();
        } else if (p instanceof SessionChoiceRecorded s) {
            session = s.getDecision() == ChoiceDecision.CONTINUE && s.getSessionId() != null ? s.getSessionId() : s.getRunId();
        } else if (p instanceof SessionDeletionRequested s) session = s.getSessionId();
        else if (p instanceof SessionDeletionAccepted s) session = s.getSessionId();
        else if (p instanceof SessionDeletionSkipped s) session = s.getSessionId();
        else if (p instanceof SessionDeletedOnComputer s) session = s.getSessionId();
        else if (p instanceof SessionDeleted s) {
            session = s.getSessionId();
            deleted.add(Keys.of(acct, session));
        } else if (p instanceof TaskChanged t) {
            for (String sid : taskSessions.getOrDefault(Keys.of(acct, t.getTaskId()), Set.of())) append(acct, sid, bytes, json);
            return;
        }
        if (run != null) {
            String sid = runSession.get(Keys.of(acct, run));
            if (sid != null) session = sid;
            else if (session == null) {
                if (parkedCount < MAX_PARKED) {
                    parked.computeIfAbsent(Keys.of(acct, run), k -> new ArrayList<>()).add(new Object[]{bytes, json});
                    parkedCount++;
                }
                return;
            }
        }
        if (session != null) append(acct, session, bytes, json);
    }

    /** A record's log position: its partition and offset in one number. */
    public static long position(int partition, long offset) {
        return ((long) partition << 40) | offset;
    }

    /** Where the first copy of the account's eventId is in the log, or null when it has not been read (yet). */
    public synchronized Long firstPosition(String account, String eventId) {
        FirstCopy first = firstCopies.get(Keys.of(account, eventId));
        return first == null ? null : first.position();
    }

    /**
     * The fingerprint of what the first copy of the account's eventId says ({@link EventContent#fingerprint}), or null
     * when it has not been read (yet).
     */
    public synchronized Long firstContent(String account, String eventId) {
        FirstCopy first = firstCopies.get(Keys.of(account, eventId));
        return first == null ? null : first.content();
    }

    private void append(String account, String sessionId, int bytes, String json) {
        Buffer b = buffers.computeIfAbsent(Keys.of(account, sessionId), k -> new Buffer());
        b.latest++;
        b.entries.addLast(new Entry(b.latest, bytes, json));
        b.bytes += bytes;
        while (b.bytes > windowBytes && b.entries.size() > 1) b.bytes -= b.entries.removeFirst().bytes();
    }

    /**
     * The session's events after {@code after}, at most {@code limit}; null when the account has no such session.
     * {@code truncated}: events with sequence numbers in (after, oldest) were dropped from the window; the page then
     * starts at the oldest retained event. {@code next} is the last returned event's cursor (or {@code after} when
     * there is none; {@code latest} when {@code after} is beyond it).
     */
    public synchronized Page read(String account, String sessionId, long after, int limit) {
        Buffer b = buffers.get(Keys.of(account, sessionId));
        if (b == null) return null;
        long oldest = b.entries.isEmpty() ? b.latest + 1 : b.entries.peekFirst().seq();
        boolean truncated = after < oldest - 1;
        List<Entry> out = new ArrayList<>();
        for (Entry x : b.entries) {
            if (x.seq() <= after) continue;
            if (out.size() == limit) break;
            out.add(x);
        }
        long next = out.isEmpty() ? Math.min(after, b.latest) : out.get(out.size() - 1).seq();
        return new Page(out, next, truncated, oldest, b.latest);
    }
}
