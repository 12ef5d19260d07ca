package dev.ensemble.sessions.assistant;

import dev.ensemble.sessions.assistant.TurnRules.Message;
import dev.ensemble.sessions.assistant.TurnRules.Role;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Objects;

/**
 * Ask Ensemble: one short session per person and page (guide §5 "Ask Ensemble: one short session per page"), as
 * pure functions. The ask's turn itself is decided by {@link TurnRules#decide} with {@link TurnRules.Kind#ASK}
 * (sent without position, with {@code keepDays: 1}).
 *
 * <ul>
 *   <li>{@link #sessionKey}: {@code ask-<kind>-<hash of person, kind and id>}; a surface's
 *       ({@code POST /api/ensemble/invoke}) uses the surface as kind and its anchorKey as id.</li>
 *   <li>{@link #inLine}: asks on one page by one person are answered one after another in the order they were made
 *       (askInLine, taken when the request arrives), never two at once and never one ahead of an earlier one.</li>
 *   <li>{@link #askHistory}: a page session gone → the new one gets that session's earlier asks and answers, at
 *       most {@link #ASK_HISTORY} (the newest).</li>
 *   <li>{@link #sweep}: the session is deleted {@link #ASK_IDLE} after the last answer ("Thirty minutes after the
 *       last answer (fixed, not a setting)"), and an ask that never reported back is cleared {@link #ASK_STALE}
 *       after it began. Both boundaries are inclusive: at exactly 30 minutes the session goes (as
 *       RetirementRules' idle asks), at exactly 2 hours the ask is cleared.</li>
 * </ul>
 */
public final class AskRules {
    private AskRules() {
    }

    /** "askHistory, at most 8". */
    public static final int ASK_HISTORY = 8;
    /** "The session is sent with keepDays: 1". */
    public static final int ASK_KEEP_DAYS = 1;
    /** "Thirty minutes after the last answer (fixed, not a setting)". */
    public static final Duration ASK_IDLE = Duration.ofMinutes(30);
    /** "an ask that never reported back is cleared two hours after it began". */
    public static final Duration ASK_STALE = Duration.ofHours(2);
    /** What a waiting ask shows. */
    public static final String WAITING = "Waiting for the answer before this one…";

    /**
     * {@code ask-<kind>-<hash>}: the hash is the first 16 bytes of SHA-256 over person, kind and id (UTF-8, each
     * followed by a NUL so no two triples give the same input), in lowercase hex (32 characters). The same
     * triple always gives the same key; another person, kind or id gives another.
     */
    public static String sessionKey(String person, String kind, String id) {
        Objects.requireNonNull(person, "person");
        Objects.requireNonNull(kind, "kind");
        Objects.requireNonNull(id, "id");
        try {
            MessageDigest sha = MessageDigest.getInstance("SHA-256");
            for (String part : List.of(person, kind, id)) {
                sha.update(part.getBytes(StandardCharsets.UTF_8));
                sha.update((byte) 0);
            }
            byte[] d = sha.digest();
            return "ask-" + kind + "-" + HexFormat.of().formatHex(d, 0, 16);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 is part of every Java runtime", e);
        }
    }

    public enum AskState { WAITING, RUNNING, ANSWERED, FAILED, CLEARED }

    /**
     * One ask by one person on one page.
     *
     * @param inLine    its place in line (askInLine), taken when the request arrived
     * @param startedAt when it began running, or null while waiting
     */
    public record Ask(String askId, long inLine, AskState state, Instant startedAt) {
        public Ask {
            Objects.requireNonNull(state, "state");
            if (state == AskState.RUNNING && startedAt == null) {
                throw new IllegalArgumentException("a running ask needs startedAt: " + askId);
            }
        }
    }

    /** What the line says of one ask. */
    public record Place(String askId, boolean runNow, String shows) {
    }

    /**
     * The line of one person's asks on one page, in order: while an ask runs, none other starts; otherwise the
     * earliest waiting ask runs now ({@link Line}). Every other waiting ask shows {@link #WAITING}. An ask that
     * ended (answered, failed, cleared) holds nothing up.
     */
    public static List<Place> inLine(List<Ask> asks) {
        List<Line.Entry> entries = asks.stream().map(a -> new Line.Entry(a.askId(), a.inLine(), switch (a.state()) {
            case WAITING -> Line.State.WAITING;
            case RUNNING -> Line.State.RUNNING;
            default -> Line.State.ENDED;
        })).toList();
        String next = Line.next(entries);
        List<Place> out = new ArrayList<>();
        for (String id : Line.waiting(entries)) {
            boolean now = id.equals(next);
            out.add(new Place(id, now, now ? null : WAITING));
        }
        return out;
    }

    /**
     * The earlier asks and answers of {@code sessionId} (a USER message followed by its ASSISTANT answer from that
     * session), the newest {@link #ASK_HISTORY} pairs, oldest first; null {@code sessionId}: none.
     */
    public static List<Message> askHistory(List<Message> messages, String sessionId) {
        if (sessionId == null) {
            return List.of();
        }
        List<Message> pairs = new ArrayList<>();
        for (int i = 0; i + 1 < messages.size(); i++) {
            Message ask = messages.get(i);
            Message answer = messages.get(i + 1);
            if (ask.role() == Role.USER && answer.role() == Role.ASSISTANT && sessionId.equals(answer.sessionId())) {
                pairs.add(ask);
                pairs.add(answer);
            }
        }
        return List.copyOf(pairs.subList(Math.max(0, pairs.size() - 2 * ASK_HISTORY), pairs.size()));
    }

    /**
     * A pending ask session (the preference assistant.ask-sessions).
     *
     * @param lastAnswerAt the newest answer, or null
     * @param asks         its asks still waiting or running
     */
    public record Pending(String key, Instant lastAnswerAt, List<Ask> asks) {
        public Pending {
            asks = List.copyOf(asks);
        }
    }

    /**
     * What a sweep at one instant does with a pending ask session.
     *
     * @param cleared      asks that never reported back, cleared now
     * @param deleteNow    delete the session from the person's computers now (and forget the entry)
     * @param nextAt       when to look again, or null when deleted
     */
    public record Sweep(List<String> cleared, boolean deleteNow, Instant nextAt) {
    }

    /**
     * The minute tick's sweep of one pending ask session at {@code now}: a running ask that began
     * {@link #ASK_STALE} or more ago is cleared; while an ask still runs or waits, the session stays (looked at again
     * when the oldest running one would be cleared, or at the next tick while only waiting ones remain); else it is
     * deleted once {@link #ASK_IDLE} passed since the last answer. A session none of whose asks was ever answered
     * goes as soon as its last ask is cleared (there is no answer to wait 30 minutes after).
     */
    public static Sweep sweep(Pending p, Instant now) {
        List<String> cleared = new ArrayList<>();
        Instant staleAt = null;
        boolean waiting = false;
        for (Ask a : p.asks()) {
            if (a.state() == AskState.RUNNING) {
                Instant at = a.startedAt().plus(ASK_STALE);
                if (!now.isBefore(at)) {
                    cleared.add(a.askId());
                } else if (staleAt == null || at.isBefore(staleAt)) {
                    staleAt = at;
                }
            } else if (a.state() == AskState.WAITING) {
                waiting = true;
            }
        }
        if (staleAt != null) {
            return new Sweep(cleared, false, staleAt);
        }
        if (waiting) {
            return new Sweep(cleared, false, now);
        }
        if (p.lastAnswerAt() == null) {
            return new Sweep(cleared, true, null);
        }
        Instant deleteAt = p.lastAnswerAt().plus(ASK_IDLE);
        return now.isBefore(deleteAt) ? new Sweep(cleared, false, deleteAt) : new Sweep(cleared, true, null);
    }
}
