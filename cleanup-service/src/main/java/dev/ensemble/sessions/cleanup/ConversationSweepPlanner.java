package dev.ensemble.sessions.cleanup;

import dev.ensemble.sessions.assistant.AskRules;
import dev.ensemble.sessions.assistant.DropRules;
import dev.ensemble.sessions.assistant.IdleRules;
import dev.ensemble.sessions.assistant.TurnRules;
import dev.ensemble.sessions.events.ConversationDeletionRequested;
import dev.ensemble.sessions.events.Event;
import dev.ensemble.sessions.events.Requester;
import dev.ensemble.sessions.events.TurnEnded;
import dev.ensemble.sessions.views.AskState;
import dev.ensemble.sessions.views.AskStatus;
import dev.ensemble.sessions.views.ConversationDrop;
import dev.ensemble.sessions.views.ConversationView;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;

/**
 * What the cleanup's minute tick does with one assistant conversation (guide §5 "Sessions unused for 30 days",
 * "Ask Ensemble", §6 "Deleting a chat deletes its session"), as a pure function of its {@link ConversationView}, the
 * account's computers and the time. It only asks: every deletion goes through the projector's guard.
 * <ul>
 *   <li>A chat, routine or node conversation that {@link IdleRules} says is due (chats 30 days unused or keepDays,
 *       keepDays 0 never; routines twice the gap to the next run within 30..90 days; node conversations 7 days):
 *       a {@code ConversationDeletionRequested} with reason {@value #IDLE}.</li>
 *   <li>An ask line ({@link AskRules#sweep}): an ask running {@link AskRules#ASK_STALE} (2 hours) after it began, or
 *       still waiting 2 hours after it was made, never reported back: a {@code TurnEnded} answered=false with error
 *       {@value #CLEARED_ERROR}; with nothing waiting or running, {@link AskRules#ASK_IDLE} (30 minutes) after the last
 *       answer a request with reason {@value #ASK_ANSWERED}, or at once with {@value #ASK_CLEARED} when none was ever
 *       answered (every ask cleared).</li>
 *   <li>A deletion under way (the projector marks the conversation deleted when it accepts one, and keeps each
 *       computer's drop in it) with a computer that has not confirmed (no answer, or an error): while that computer is
 *       online, every {@link DropRules#RETRY_EVERY} (5 minutes) after it was last asked, a request with reason
 *       {@value #RETRY} (the guard asks the pending computers again); not after {@link DropRules#KEEP_PENDING} (30
 *       days). Asking a computer again when it connects is the projector's.</li>
 *   <li>Nothing for a deleted conversation, nor (but {@value #RETRY}) for one with a deletion under way; nothing for a
 *       one-off, which keeps no session, nor for a conversation with a turn running (its end changes the view), until
 *       that turn has run {@link #TURN_STALE} (a day) without a report: then a {@code TurnEnded} answered=false with
 *       error {@value #TURN_CLEARED_ERROR}, after which the idle rules apply.</li>
 * </ul>
 * Every id is name-based on the account, the conversation, the reason and the instant the rule fell due at (the
 * idle deadline, the last answer plus 30 minutes, the 5-minute boundary reached), so the same due thing planned
 * again, after a restart or by a second sweep, gives the same request.
 */
public final class ConversationSweepPlanner {
    private ConversationSweepPlanner() {
    }

    /**
     * How long a chat's, routine's or node conversation's turn may run without its {@code TurnEnded} before the tick
     * ends it as failed (error {@value #TURN_CLEARED_ERROR}): the guide names 2 hours for an
     * ask only; a conversation's turn is given a day, after which its computer is taken to have gone mid-turn. A failed
     * turn does not count toward the chat's position (§5), so a late real report changes nothing the person sees.
     */
    public static final java.time.Duration TURN_STALE = java.time.Duration.ofDays(1);
    /** The error of the {@code TurnEnded} that ends a conversation's turn that never reported back. */
    public static final String TURN_CLEARED_ERROR = "cleared: no report within a day";

    /** A chat, routine or node conversation unused long enough. */
    public static final String IDLE = "idle";
    /** An ask line 30 minutes after its last answer. */
    public static final String ASK_ANSWERED = "ask-answered";
    /** An ask line none of whose asks was answered, every one cleared. */
    public static final String ASK_CLEARED = "ask-cleared";
    /** A pending drop asked again. */
    public static final String RETRY = "retry";
    /** The error of the {@code TurnEnded} that clears an ask that never reported back. */
    public static final String CLEARED_ERROR = "cleared: no report within 2 hours";
    /** The space of the events it appends (conversations belong to no web space). */
    static final String SPACE = "assistant";
    /** The computer named by a cleared ask that no computer took. */
    static final String NO_COMPUTER = "none";

    /** A deletion to ask for: its request id (the event id), the reason and the instant it fell due. */
    public record Request(String requestId, String reason, Instant dueAt) {
    }

    /** An ask to clear: the ask (its turn), the computer it ran on, the {@code TurnEnded}'s event id. */
    public record Clear(String askId, String computerId, String eventId) {
    }

    /**
     * What one look at one conversation decided.
     *
     * @param clears  asks to clear, in the line's order
     * @param request the deletion to ask for, or null
     * @param nextAt  when to look again, or null: not until the view (or, for a drop, the computer) changes
     */
    public record Plan(List<Clear> clears, Request request, Instant nextAt) {
        public Plan {
            clears = List.copyOf(clears);
        }

        static final Plan NOTHING = new Plan(List.of(), null, null);
    }

    /**
     * Plans one look at {@code v} at {@code now}.
     *
     * @param computers the account's computers by id, as their newest {@code ComputerStatus} says (an unknown one is
     *                  taken as paired and offline)
     */
    public static Plan plan(ConversationView v, Map<String, DropRules.Computer> computers, Instant now, IdleRules.Config c) {
        if (v.getDeletion() != null) {
            return drops(v, computers, now); // deleted (the projector marks it at acceptance), drops pending
        }
        if (v.getDeleted()) {
            return Plan.NOTHING;
        }
        return switch (v.getKind()) {
            case ASK -> asks(v, now);
            case ONE_OFF -> Plan.NOTHING;
            default -> idle(v, now, c);
        };
    }

    private static Plan idle(ConversationView v, Instant now, IdleRules.Config c) {
        if (v.getRunningTurn() != null) {
            // a turn running: its end changes the view (the guard skips it too); one that never reported back (its
            // computer gone mid-turn) is ended as failed a day after it began, so the chat can still go idle
            dev.ensemble.sessions.views.RunningTurn t = v.getRunningTurn();
            Instant staleAt = t.getStartedAt().plus(TURN_STALE);
            if (now.isBefore(staleAt)) {
                return new Plan(List.of(), null, staleAt);
            }
            return new Plan(List.of(new Clear(t.getTurnId(), t.getComputerId(),
                    nameId("turn-cleared", v.getAccount(), v.getConversationKey(), t.getTurnId()))), null, null);
        }
        if (v.getLastUsedAt() == null) {
            return Plan.NOTHING; // never used
        }
        TurnRules.Kind kind = TurnRules.Kind.valueOf(v.getKind().name());
        Instant dropAt = IdleRules.dropAt(kind, v.getLastUsedAt(), v.getLastAnswerAt(), v.getKeepDays(), v.getNextRunAt(), c);
        if (dropAt == null) {
            return Plan.NOTHING;
        }
        if (now.isBefore(dropAt)) {
            return new Plan(List.of(), null, dropAt);
        }
        return new Plan(List.of(), request(v, IDLE, dropAt), null);
    }

    private static Plan asks(ConversationView v, Instant now) {
        List<AskRules.Ask> open = new ArrayList<>();
        List<Clear> clears = new ArrayList<>();
        Instant waitingStaleAt = null;
        Instant lastAsked = null;
        long place = 0;
        for (AskState a : v.getAsks()) {
            place++;
            lastAsked = lastAsked == null || a.getRequestedAt().isAfter(lastAsked) ? a.getRequestedAt() : lastAsked;
            if (a.getStatus() == AskStatus.RUNNING) {
                Instant began = a.getStartedAt() != null ? a.getStartedAt() : a.getRequestedAt();
                open.add(new AskRules.Ask(a.getAskId(), place, AskRules.AskState.RUNNING, began));
            } else if (a.getStatus() == AskStatus.WAITING) {
                Instant staleAt = a.getRequestedAt().plus(AskRules.ASK_STALE);
                if (now.isBefore(staleAt)) {
                    open.add(new AskRules.Ask(a.getAskId(), place, AskRules.AskState.WAITING, null));
                    waitingStaleAt = waitingStaleAt == null || staleAt.isBefore(waitingStaleAt) ? staleAt : waitingStaleAt;
                } else {
                    clears.add(clear(v, a));
                }
            }
        }
        if (lastAsked == null && v.getLastAnswerAt() == null) {
            return Plan.NOTHING; // a line with no ask: nothing to sweep
        }
        AskRules.Sweep s = AskRules.sweep(new AskRules.Pending(v.getConversationKey(), v.getLastAnswerAt(), open), now);
        for (String askId : s.cleared()) {
            v.getAsks().stream().filter(a -> a.getAskId().equals(askId)).findFirst().ifPresent(a -> clears.add(clear(v, a)));
        }
        clears.sort(java.util.Comparator.comparingInt(cl -> indexOf(v, cl.askId())));
        if (s.deleteNow()) {
            Request r = v.getLastAnswerAt() != null
                    ? request(v, ASK_ANSWERED, v.getLastAnswerAt().plus(AskRules.ASK_IDLE))
                    : request(v, ASK_CLEARED, lastAsked);
            return new Plan(clears, r, null);
        }
        Instant next = s.nextAt();
        if (next != null && !next.isAfter(now)) {
            next = waitingStaleAt; // only waiting asks: the computer taking one changes the view; else they go stale
        }
        return new Plan(clears, null, next);
    }

    private static Plan drops(ConversationView v, Map<String, DropRules.Computer> computers, Instant now) {
        Instant acceptedAt = v.getDeletion().getAcceptedAt();
        Instant dueAt = null;
        Instant next = null;
        for (ConversationDrop d : v.getDeletion().getComputers()) {
            if (!pending(d)) {
                continue;
            }
            DropRules.Computer known = computers.get(d.getComputerId());
            DropRules.Computer computer = known != null ? known
                    : new DropRules.Computer(d.getComputerId(), true, false, true, null);
            // streamOpenedAt null: asking a computer again when it connects is the projector's; this is the 5 minutes
            computer = new DropRules.Computer(computer.computerId(), computer.paired(), computer.online(), computer.assistantTurns(), null);
            Instant askedAt = d.getAskedAt();
            DropRules.Next n = DropRules.next(new DropRules.PendingDrop(v.getConversationKey(), d.getComputerId(), acceptedAt, askedAt),
                    computer, now);
            Instant candidate;
            switch (n.action()) {
                case ASK -> {
                    long periods = Duration.between(askedAt, now).toMillis() / DropRules.RETRY_EVERY.toMillis();
                    Instant boundary = askedAt.plus(DropRules.RETRY_EVERY.multipliedBy(Math.max(1, periods)));
                    dueAt = dueAt == null || boundary.isBefore(dueAt) ? boundary : dueAt;
                    candidate = boundary.plus(DropRules.RETRY_EVERY);
                }
                case WAIT -> candidate = n.at() != null ? n.at() : now.plus(DropRules.RETRY_EVERY); // offline: look again
                default -> candidate = null; // expired or no longer paired: not asked again
            }
            Instant expiresAt = acceptedAt.plus(DropRules.KEEP_PENDING);
            if (candidate != null && candidate.isAfter(expiresAt)) {
                candidate = expiresAt;
            }
            if (candidate != null && (next == null || candidate.isBefore(next))) {
                next = candidate;
            }
        }
        return new Plan(List.of(), dueAt == null ? null : request(v, RETRY, dueAt), next);
    }

    /** A drop not confirmed ok (no answer, or an error) and not marked expired: the computer is asked again. */
    static boolean pending(ConversationDrop d) {
        return !Boolean.TRUE.equals(d.getOk()) && !d.getExpired();
    }

    private static int indexOf(ConversationView v, String askId) {
        for (int i = 0; i < v.getAsks().size(); i++) {
            if (v.getAsks().get(i).getAskId().equals(askId)) {
                return i;
            }
        }
        return Integer.MAX_VALUE;
    }

    private static Clear clear(ConversationView v, AskState a) {
        String computer = a.getComputerId();
        if (computer == null && v.getRunningTurn() != null && v.getRunningTurn().getTurnId().equals(a.getAskId())) {
            computer = v.getRunningTurn().getComputerId();
        }
        return new Clear(a.getAskId(), computer != null ? computer : NO_COMPUTER,
                nameId("ask-cleared", v.getAccount(), v.getConversationKey(), a.getAskId()));
    }

    private static Request request(ConversationView v, String reason, Instant dueAt) {
        return new Request(requestId(v.getAccount(), v.getConversationKey(), reason, dueAt), reason, dueAt);
    }

    /** The request id of a deletion the cleanup asks for: name-based on account, conversation, reason and instant. */
    public static String requestId(String account, String conversationKey, String reason, Instant dueAt) {
        return nameId("conversation-deletion", account, conversationKey, reason, Long.toString(dueAt.toEpochMilli()));
    }

    private static String nameId(String kind, String... parts) {
        StringBuilder b = new StringBuilder("ensemble-cleanup:").append(kind);
        for (String p : parts) {
            b.append('\u0000').append(p);
        }
        return UUID.nameUUIDFromBytes(b.toString().getBytes(StandardCharsets.UTF_8)).toString();
    }

    /**
     * The events of {@code plan} for {@code v} at {@code now}: the clears' {@code TurnEnded} first (so the guard sees
     * the line ended), then the request; source {@code service:cleanup}, key the account.
     */
    public static List<Event> events(ConversationView v, Plan plan, Instant now) {
        List<Event> out = new ArrayList<>();
        for (Clear cl : plan.clears()) {
            out.add(envelope(v, cl.eventId(), now).setPayload(TurnEnded.newBuilder().setTurnId(cl.askId())
                    .setConversationKey(v.getConversationKey()).setComputerId(cl.computerId()).setAnswered(false)
                    .setError(v.getKind() == dev.ensemble.sessions.events.ConversationKind.ASK ? CLEARED_ERROR : TURN_CLEARED_ERROR)
                    .build()).build());
        }
        Request r = plan.request();
        if (r != null) {
            out.add(envelope(v, r.requestId(), now).setPayload(ConversationDeletionRequested.newBuilder()
                    .setConversationKey(v.getConversationKey()).setRequestedBy(Requester.system).setRequesterId("cleanup")
                    .setReason(r.reason()).build()).build());
        }
        return out;
    }

    private static Event.Builder envelope(ConversationView v, String eventId, Instant now) {
        return Event.newBuilder().setEventId(eventId).setAccount(v.getAccount()).setSpace(SPACE).setOccurredAt(now)
                .setRecordedAt(now).setSource(SweepProcessor.SOURCE);
    }
}
