package dev.ensemble.sessions.projector;

import dev.ensemble.sessions.assistant.AskRules;
import dev.ensemble.sessions.assistant.IdleRules;
import dev.ensemble.sessions.assistant.TurnRules;
import dev.ensemble.sessions.events.AskRequested;
import dev.ensemble.sessions.events.ConversationDeletionRequested;
import dev.ensemble.sessions.events.ConversationDroppedOnComputer;
import dev.ensemble.sessions.events.ConversationKind;
import dev.ensemble.sessions.events.Requester;
import dev.ensemble.sessions.events.TurnAction;
import dev.ensemble.sessions.events.TurnDecided;
import dev.ensemble.sessions.events.TurnEnded;
import dev.ensemble.sessions.views.AskState;
import dev.ensemble.sessions.views.AskStatus;
import dev.ensemble.sessions.views.ConversationDeletion;
import dev.ensemble.sessions.views.ConversationDrop;
import dev.ensemble.sessions.views.ConversationSession;
import dev.ensemble.sessions.views.ConversationView;
import dev.ensemble.sessions.views.RunningTurn;

import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;

/**
 * The assistant conversations' fold and the guard of their deletions (guide §5, §6), as pure functions: each takes the
 * conversation as it stands (a {@link ConversationView}, or null when none) and one event's payload at the event's time,
 * and returns the conversation after it, a new object (the one given is never changed). Every change raises
 * {@code sequence} by one. No Kafka, no clock: {@link ConversationProcessor} runs it in the topology.
 *
 * <p>Bounds (as report summaries, {@link ViewBounds#SUMMARY_CHARS}): an ask's prompt and answer 2,000 chars with
 * {@code …}; an ask line {@value #ASKS} asks (its oldest finished ones left out first, a waiting or running one never), a session entry its newest {@value #REPLACED} replaced
 * session ids and its newest {@value #REPLACED} retired ones.
 */
final class ConversationFold {
    private ConversationFold() {
    }

    /** The asks an ask line keeps (newest). */
    static final int ASKS = 50;
    /** The replaced session ids an entry keeps (newest), and the retired ones. */
    static final int REPLACED = 50;
    /** An answer's or prompt's longest text, chars. */
    static final int TEXT_CHARS = ViewBounds.SUMMARY_CHARS;

    // ---- turns and asks ------------------------------------------------------------------------------

    /**
     * A turn decided: the conversation's running turn, its group, keepDays and next run, its turn count and last use;
     * the computer's session entry (agent, model, folder; RESUME keeps the resumed session id, NEW clears it until the
     * turn ends and moves a replaced session to {@code replacedSessionIds}, a touched one to {@code retiredSessionIds});
     * a NONE (one-off) keeps no entry. An ask's turn (turnId = askId) moves the ask WAITING → RUNNING. A negative keepDays
     * (the gateway refuses it; a producer with access to the log may write it) is folded as unset, the kind's default.
     */
    static ConversationView turnDecided(ConversationView held, String account, TurnDecided t, Instant at) {
        ConversationView v = held == null ? fresh(account, t.getConversationKey(), t.getConversationKind()) : copy(held);
        v.setTurns(v.getTurns() + 1);
        v.setRunningTurn(new RunningTurn(t.getTurnId(), t.getComputerId(), at));
        if (v.getFirstTurnAt() == null) {
            v.setFirstTurnAt(at);
        }
        v.setLastUsedAt(latest(v.getLastUsedAt(), at));
        v.setGroupId(t.getGroupId());
        v.setGroupName(t.getGroupName());
        v.setKeepDays(keepDays(t.getKeepDays()));
        v.setNextRunAt(t.getNextRunAt());
        if (t.getAction() != TurnAction.NONE) {
            List<ConversationSession> sessions = new ArrayList<>(v.getSessions());
            int i = indexOf(sessions, t.getComputerId());
            ConversationSession s = i >= 0 ? sessions.get(i) : ConversationSession.newBuilder().setComputerId(t.getComputerId())
                    .setAgent(t.getAgent()).setUpdatedAt(at).build();
            s.setAgent(t.getAgent());
            s.setModel(t.getModel());
            s.setFolder(ViewBounds.text(t.getFolder(), ViewBounds.PATH_CHARS));
            s.setUpdatedAt(at);
            if (t.getAction() == TurnAction.RESUME) {
                s.setSessionId(t.getSessionId());
            } else {
                if (t.getReplacedSessionId() != null) {
                    s.setReplacedSessionIds(newest(added(s.getReplacedSessionIds(), t.getReplacedSessionId()), REPLACED));
                }
                if (t.getRetiredSessionId() != null) {
                    s.setRetiredSessionIds(newest(added(s.getRetiredSessionIds(), t.getRetiredSessionId()), REPLACED));
                }
                s.setSessionId(null);
                s.setMessages(0);
                s.setPromptsNoted(null);
            }
            if (i >= 0) {
                sessions.set(i, s);
            } else {
                sessions.add(s);
            }
            v.setSessions(sessions);
        }
        List<AskState> asks = new ArrayList<>(v.getAsks());
        for (AskState a : asks) {
            if (a.getAskId().equals(t.getTurnId()) && a.getStatus() == AskStatus.WAITING) {
                a.setStatus(AskStatus.RUNNING);
                a.setComputerId(t.getComputerId());
                a.setStartedAt(at);
            }
        }
        v.setAsks(asks);
        return bump(v);
    }

    /**
     * A turn ended: the running turn cleared (when it is this one); the computer's entry takes the agent session id,
     * messages and prompt count; last use, and last answer when answered. An ask's turn: ANSWERED with its answer,
     * FAILED, or CLEARED when {@code cleared} (the cleanup's report for an ask that never reported back). Null when no
     * turn of the conversation was ever decided or asked (nothing to fold into), and when the cleanup clears a turn that
     * is no longer running or waiting (its real end came first): that changes nothing, not the last use either, or a
     * chat the cleanup looked at while its turn seemed to run would be kept 30 days longer.
     */
    static ConversationView turnEnded(ConversationView held, TurnEnded t, Instant at, boolean cleared) {
        if (held == null) {
            return null;
        }
        if (cleared && !isOpen(held, t.getTurnId())) {
            return null;
        }
        ConversationView v = copy(held);
        if (v.getRunningTurn() != null && v.getRunningTurn().getTurnId().equals(t.getTurnId())) {
            v.setRunningTurn(null);
        }
        v.setLastUsedAt(latest(v.getLastUsedAt(), at));
        if (t.getAnswered()) {
            v.setLastAnswerAt(latest(v.getLastAnswerAt(), at));
        }
        List<ConversationSession> sessions = new ArrayList<>(v.getSessions());
        int i = indexOf(sessions, t.getComputerId());
        if (i >= 0 && t.getAgentSessionId() != null) {
            ConversationSession s = sessions.get(i);
            s.setSessionId(t.getAgentSessionId());
            s.setMessages(t.getMessages());
            s.setPromptsNoted(t.getPromptsNoted());
            s.setUpdatedAt(at);
            v.setSessions(sessions);
        }
        List<AskState> asks = new ArrayList<>(v.getAsks());
        for (AskState a : asks) {
            if (a.getAskId().equals(t.getTurnId()) && (a.getStatus() == AskStatus.WAITING || a.getStatus() == AskStatus.RUNNING)) {
                a.setStatus(cleared ? AskStatus.CLEARED : t.getAnswered() ? AskStatus.ANSWERED : AskStatus.FAILED);
                a.setEndedAt(at);
                a.setAnswer(ViewBounds.text(t.getAnswered() ? t.getAnswer() : t.getError(), TEXT_CHARS));
                if (a.getComputerId() == null) {
                    a.setComputerId(t.getComputerId());
                }
            }
        }
        v.setAsks(asks);
        return bump(v);
    }

    /**
     * An ask made: the line's person and page, the ask WAITING at the end of the line, its prompt bounded. The line keeps
     * {@value #ASKS} asks: over that its oldest finished (answered, failed, cleared) ask is left out; a waiting or running
     * one never is (it is the line's head, which a computer runs or is about to), so when {@value #ASKS} are waiting or
     * running the new ask is not kept (the view is unchanged). An ask on a deleted line starts it anew (the same person and page give the same key): the asks,
     * sessions and deletion of the deleted one are gone, the sequence goes on.
     */
    static ConversationView askRequested(ConversationView held, String account, String askId, AskRequested a, Instant at) {
        ConversationView v;
        if (held == null || held.getDeleted()) {
            v = fresh(account, a.getConversationKey(), ConversationKind.ASK);
            if (held != null) {
                v.setSequence(held.getSequence());
            }
        } else {
            v = copy(held);
        }
        if (v.getAsks().stream().anyMatch(x -> x.getAskId().equals(askId))) {
            return held; // asked already
        }
        v.setPersonId(a.getPersonId());
        v.setPageKind(a.getPageKind());
        v.setPageId(a.getPageId());
        v.setLastUsedAt(latest(v.getLastUsedAt(), at));
        List<AskState> asks = new ArrayList<>(v.getAsks());
        asks.add(AskState.newBuilder().setAskId(askId).setPrompt(ViewBounds.text(a.getPrompt(), TEXT_CHARS)).setRequestedAt(at)
                .setStatus(AskStatus.WAITING).build());
        while (asks.size() > ASKS) { // the oldest finished ask goes; a waiting or running one is the line's head, never dropped
            int finished = -1;
            for (int i = 0; i < asks.size() && finished < 0; i++) {
                AskStatus s = asks.get(i).getStatus();
                if (s != AskStatus.WAITING && s != AskStatus.RUNNING) {
                    finished = i;
                }
            }
            if (finished < 0) {
                return held; // the line holds ASKS asks waiting or running: this one is not kept
            }
            asks.remove(finished);
        }
        v.setAsks(asks);
        return bump(v);
    }

    // ---- deletions -------------------------------------------------------------------------------------

    /**
     * The guard's decision on a conversation deletion request.
     *
     * @param code            null when accepted; else unknown-conversation, already-deleted, not-deleted, nothing-pending,
     *                        not-owner, kept, not-idle, unknown-reason
     * @param computers       accepted: the computers asked to drop their session
     * @param agentSessionIds accepted: every agent session the conversation ran in (retired ones too)
     */
    record Decision(boolean accepted, String code, String detail, List<String> computers, List<String> agentSessionIds) {
        static Decision skip(String code, String detail) {
            return new Decision(false, code, detail, List.of(), List.of());
        }
    }

    /**
     * Decides a deletion request at {@code at} (the earlier of its occurredAt and recordedAt):
     * <ul>
     *   <li>no conversation: skipped {@code unknown-conversation};</li>
     *   <li>reason {@code retry} (the cleanup asking again, {@code DropRules}): accepted naming the computers whose drop is
     *       still pending (not confirmed ok, not expired) of a deleted conversation; else {@code not-deleted} or
     *       {@code nothing-pending};</li>
     *   <li>deleted already: {@code already-deleted};</li>
     *   <li>a person: accepted (an ask line only by its own person: else {@code not-owner}); a node only its own node
     *       conversation;</li>
     *   <li>the system, {@code ask-answered}, {@code ask-cleared}, or {@code idle} of an ask line: {@link AskRules#sweep}
     *       deletes now (30 minutes after the last answer, nothing waiting or running); else {@code not-idle};</li>
     *   <li>the system, {@code idle}: no turn running, and {@link IdleRules#dropped} at {@code at} (keepDays 0 and a one-off:
     *       {@code kept}); else {@code not-idle}.</li>
     * </ul>
     * Accepted names every computer holding an entry and every session id of them (retired ones too).
     */
    static Decision guard(ConversationView v, ConversationDeletionRequested r, Instant at, IdleRules.Config c) {
        if (v == null) {
            return Decision.skip("unknown-conversation", "no conversation '" + r.getConversationKey() + "' in this account");
        }
        if ("retry".equals(r.getReason())) {
            if (!v.getDeleted() || v.getDeletion() == null) {
                return Decision.skip("not-deleted", "the conversation is not being deleted; nothing to ask again");
            }
            List<String> pending = pendingComputers(v);
            if (pending.isEmpty()) {
                return Decision.skip("nothing-pending", "every computer asked has confirmed its drop");
            }
            return new Decision(true, null, "asked again: " + String.join(", ", pending), pending, agentSessionIds(v));
        }
        if (v.getDeleted()) {
            return Decision.skip("already-deleted", "deleted by request " + (v.getDeletion() == null ? "?" : v.getDeletion().getRequestId()));
        }
        Requester by = r.getRequestedBy();
        if (by == Requester.person) {
            if (v.getPersonId() != null && r.getRequesterId() != null && !v.getPersonId().equals(r.getRequesterId())) {
                return Decision.skip("not-owner", "the ask line is " + v.getPersonId() + "'s, not " + r.getRequesterId() + "'s");
            }
            return accept(v, "asked by a person");
        }
        if (by == Requester.node) {
            if (v.getKind() != ConversationKind.NODE_CONVERSATION) {
                return Decision.skip("not-owner", "a node deletes only its own node conversation, not a " + v.getKind());
            }
            return accept(v, "asked by its node");
        }
        String reason = r.getReason();
        boolean askRule = "ask-answered".equals(reason) || "ask-cleared".equals(reason) || ("idle".equals(reason) && v.getKind() == ConversationKind.ASK);
        if (askRule) {
            List<AskRules.Ask> open = new ArrayList<>();
            for (int i = 0; i < v.getAsks().size(); i++) {
                AskState a = v.getAsks().get(i);
                if (a.getStatus() == AskStatus.WAITING) {
                    open.add(new AskRules.Ask(a.getAskId(), i, AskRules.AskState.WAITING, null));
                } else if (a.getStatus() == AskStatus.RUNNING) {
                    open.add(new AskRules.Ask(a.getAskId(), i, AskRules.AskState.RUNNING, a.getStartedAt() == null ? at : a.getStartedAt()));
                }
            }
            if (!open.isEmpty()) {
                // a running ask that never reported back is cleared by the cleanup's TurnEnded first (AskRules.sweep)
                return Decision.skip("not-idle", open.size() + " ask(s) waiting or running");
            }
            AskRules.Sweep s = AskRules.sweep(new AskRules.Pending(v.getConversationKey(), v.getLastAnswerAt(), open), at);
            if (!s.deleteNow()) {
                return Decision.skip("not-idle", "the last answer was at " + v.getLastAnswerAt() + "; due at " + s.nextAt());
            }
            return accept(v, "30 minutes after the last answer (" + v.getLastAnswerAt() + ")");
        }
        if (!"idle".equals(reason)) {
            return Decision.skip("unknown-reason", "the system deletes a conversation only for idle, ask-answered or ask-cleared, not '" + reason + "'");
        }
        if (v.getRunningTurn() != null) {
            return Decision.skip("not-idle", "turn " + v.getRunningTurn().getTurnId() + " is running");
        }
        TurnRules.Kind kind = TurnRules.Kind.valueOf(v.getKind().name());
        if (v.getLastUsedAt() == null) {
            return Decision.skip("not-idle", "never used");
        }
        Instant dropAt = IdleRules.dropAt(kind, v.getLastUsedAt(), v.getLastAnswerAt(), keepDays(v.getKeepDays()), v.getNextRunAt(), c);
        if (dropAt == null) {
            return Decision.skip("kept", v.getKind() == ConversationKind.ONE_OFF ? "a one-off keeps no session" : "keepDays 0: never dropped");
        }
        if (at.isBefore(dropAt)) {
            return Decision.skip("not-idle", "last used " + v.getLastUsedAt() + "; due at " + dropAt);
        }
        return accept(v, "unused since " + v.getLastUsedAt() + " (due at " + dropAt + ")");
    }

    private static Decision accept(ConversationView v, String detail) {
        List<String> computers = v.getSessions().stream().map(ConversationSession::getComputerId).toList();
        return new Decision(true, null, detail, computers, agentSessionIds(v));
    }

    /** Every agent session id of the conversation's entries: each computer's current one and its retired ones. */
    static List<String> agentSessionIds(ConversationView v) {
        LinkedHashSet<String> ids = new LinkedHashSet<>();
        for (ConversationSession s : v.getSessions()) {
            if (s.getSessionId() != null) {
                ids.add(s.getSessionId());
            }
            ids.addAll(s.getRetiredSessionIds());
        }
        return List.copyOf(ids);
    }

    /** The computers whose drop of the deleted conversation is still pending: asked, not confirmed ok, not expired. */
    static List<String> pendingComputers(ConversationView v) {
        if (v == null || v.getDeletion() == null) {
            return List.of();
        }
        return v.getDeletion().getComputers().stream().filter(d -> !Boolean.TRUE.equals(d.getOk()) && !d.getExpired())
                .map(ConversationDrop::getComputerId).toList();
    }

    /** An accepted first deletion: the conversation deleted, each computer asked at {@code at}. */
    static ConversationView accepted(ConversationView held, String requestId, Requester by, String reason, List<String> computers,
                                     Instant at) {
        ConversationView v = copy(held);
        List<ConversationDrop> drops = new ArrayList<>();
        for (String c : computers) {
            drops.add(ConversationDrop.newBuilder().setComputerId(c).setAskedAt(at).build());
        }
        v.setDeletion(ConversationDeletion.newBuilder().setRequestId(requestId).setRequestedBy(by).setReason(reason)
                .setAcceptedAt(at).setComputers(drops).build());
        v.setDeleted(true);
        return bump(v);
    }

    /** Computers asked again at {@code at} (a retry, or a computer that came online): their drops' askedAt. */
    static ConversationView askedAgain(ConversationView held, List<String> computers, Instant at) {
        ConversationView v = copy(held);
        for (ConversationDrop d : v.getDeletion().getComputers()) {
            if (computers.contains(d.getComputerId())) {
                d.setAskedAt(at);
            }
        }
        return bump(v);
    }

    /**
     * A turn decided on the deleted conversation by {@code computerId} at {@code at}: that computer's drop is pending again
     * (added when the deletion did not ask it; an earlier answer of it forgotten), asked at {@code at}.
     */
    static ConversationView askedAfterLateTurn(ConversationView held, String computerId, Instant at) {
        ConversationView v = copy(held);
        List<ConversationDrop> drops = new ArrayList<>(v.getDeletion().getComputers());
        ConversationDrop d = drops.stream().filter(x -> x.getComputerId().equals(computerId)).findFirst().orElse(null);
        if (d == null) {
            drops.add(ConversationDrop.newBuilder().setComputerId(computerId).setAskedAt(at).build());
        } else {
            d.setAskedAt(at);
            d.setConfirmedAt(null);
            d.setOk(null);
            d.setError(null);
        }
        v.getDeletion().setComputers(drops);
        return bump(v);
    }

    /**
     * A computer's answer: its drop confirmed (ok, or the error, and the sessions it kept in an agent it never deletes
     * from). Null when the conversation's deletion never asked that computer (nothing to fold).
     */
    static ConversationView dropped(ConversationView held, ConversationDroppedOnComputer a, Instant at) {
        if (held == null || held.getDeletion() == null
                || held.getDeletion().getComputers().stream().noneMatch(d -> d.getComputerId().equals(a.getComputerId()))) {
            return null;
        }
        ConversationView v = copy(held);
        for (ConversationDrop d : v.getDeletion().getComputers()) {
            if (d.getComputerId().equals(a.getComputerId())) {
                d.setConfirmedAt(at);
                d.setOk(a.getOk());
                d.setError(ViewBounds.text(a.getError(), ViewBounds.SUMMARY_CHARS));
                d.setKeptInAgent(new ArrayList<>(a.getKeptInAgent()));
            }
        }
        return bump(v);
    }

    // ---- helpers ---------------------------------------------------------------------------------------

    private static ConversationView fresh(String account, String key, ConversationKind kind) {
        return ConversationView.newBuilder().setAccount(account).setConversationKey(key).setKind(kind).setSequence(0).build();
    }

    private static ConversationView copy(ConversationView v) {
        return ConversationView.newBuilder(v).build();
    }

    private static ConversationView bump(ConversationView v) {
        v.setSequence(v.getSequence() + 1);
        return v;
    }

    /** Whether {@code turnId} is the running turn or an ask still waiting or running. */
    private static boolean isOpen(ConversationView v, String turnId) {
        if (v.getRunningTurn() != null && v.getRunningTurn().getTurnId().equals(turnId)) {
            return true;
        }
        return v.getAsks().stream().anyMatch(a -> a.getAskId().equals(turnId)
                && (a.getStatus() == AskStatus.WAITING || a.getStatus() == AskStatus.RUNNING));
    }

    private static int indexOf(List<ConversationSession> sessions, String computerId) {
        for (int i = 0; i < sessions.size(); i++) {
            if (sessions.get(i).getComputerId().equals(computerId)) {
                return i;
            }
        }
        return -1;
    }

    /** A keepDays as the idle rules read it: a negative one (never a valid count of days) is unset, the kind's default. */
    private static Integer keepDays(Integer keepDays) {
        return keepDays != null && keepDays < 0 ? null : keepDays;
    }

    private static Instant latest(Instant a, Instant b) {
        return a == null || b.isAfter(a) ? b : a;
    }

    private static List<String> added(List<String> list, String id) {
        List<String> out = new ArrayList<>(list);
        if (!out.contains(id)) {
            out.add(id);
        }
        return out;
    }

    private static <T> List<T> newest(List<T> list, int n) {
        return list.size() <= n ? list : new ArrayList<>(list.subList(list.size() - n, list.size()));
    }
}
