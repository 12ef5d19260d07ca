package dev.ensemble.sessions.agent.assistant;

import dev.ensemble.sessions.agent.AgentStoreDeleter;
import dev.ensemble.sessions.agent.FileTrees;
import dev.ensemble.sessions.assistant.DropRules;
import dev.ensemble.sessions.assistant.IdleRules;
import dev.ensemble.sessions.assistant.TurnRules;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Carries out a request to drop a chat's session on this computer (guide §6 "Deleting a chat deletes its session":
 * "dropSession removes the store entry, deletes the session in the agent itself ... and the chat's own folder, after
 * any turn of that chat still running there has ended"; the projector's {@link DropRules} decides when a computer is
 * asked). Under the chat's lock ({@link ChatLocks}, which a turn of the chat holds while it runs), in this order, so
 * that a drop cut short is finished by the next request:
 * <ol>
 *   <li>the agent's own session, and the chat's retired (touched) sessions, through {@link AgentStoreDeleter}:
 *       exactly the session's own files in the agent's store;</li>
 *   <li>the chat's own folder {@code <state>/assistant/<key>} (the turn's files, instructions and MCP config; the
 *       agent's working folder too when it is the chat's own). A group's project folder is never deleted (guide §6:
 *       "project folders ... stay"). Links inside are removed as links, never followed;</li>
 *   <li>the store entry.</li>
 * </ol>
 * Idempotent: a chat with no entry and no folder is {@link Outcome#ALREADY_GONE}, a confirmation like a drop; a session
 * already gone from the agent's store counts as deleted. A session of an agent this computer never deletes from
 * ({@link AgentStoreDeleter#deletes}: Antigravity, whose store is encrypted, or an agent it does not know) is left in
 * the agent and named in {@link Dropped#keptInAgent()} for the audit; the rest of the drop goes on, so such a chat is
 * dropped like any other. A failure that a later request may get past (a file that cannot be removed, an I/O error)
 * keeps the entry, so the next request tries again.
 */
public final class AssistantDrops {
    private final AssistantSessions sessions;
    private final AgentStoreDeleter deleter;
    private final ChatLocks locks;
    private final String computerId;

    /** What became of a drop request. */
    public enum Outcome {
        /** The chat's entry, its sessions in the agent and its own folder are gone now. */
        DROPPED,
        /** There was nothing of the chat on this computer (dropped before, or never run here): confirmed. */
        ALREADY_GONE,
        /** A turn of the chat held its lock for longer than the wait: nothing was done; ask again. */
        TURN_RUNNING,
        /**
         * Something could not be deleted ({@link Dropped#error()}: an I/O error, an id that is not one); the entry is
         * kept and the next request tries again.
         */
        FAILED
    }

    /**
     * The report of one drop, for the caller to turn into an event (the computer's confirmation).
     *
     * @param key          the chat
     * @param computerId   this computer
     * @param outcome      what became of it
     * @param agent        the agent of the chat's session, or null when it had no entry
     * @param sessionId    the agent's session id, or null when it had no entry
     * @param retired      the chat's retired sessions deleted with it
     * @param keptInAgent  the chat's sessions left in their agent because this computer never deletes that agent's
     *                     sessions ({@link AgentStoreDeleter#deletes}: Antigravity, an unknown agent); the chat is
     *                     dropped all the same (entry and own folder), these stay in the agent's own store
     * @param removedCount how many paths were removed (the agent's files, then the chat's folder and what it held)
     * @param removedPaths the first of them, absolute, at most {@link #MAX_REPORTED_PATHS}
     * @param entryRemoved the store entry was removed
     * @param folderRemoved the chat's own folder was removed
     * @param error        why not, for the audit; null unless FAILED or TURN_RUNNING
     */
    public record Dropped(String key, String computerId, Outcome outcome, String agent, String sessionId,
                          List<AssistantSessions.Retired> retired, List<AssistantSessions.Retired> keptInAgent,
                          int removedCount, List<String> removedPaths, boolean entryRemoved, boolean folderRemoved,
                          String error) {
        /** The most paths a report names: a chat's folder may hold thousands of files; the count says how many. */
        public static final int MAX_REPORTED_PATHS = 200;

        public Dropped {
            retired = List.copyOf(retired);
            keptInAgent = List.copyOf(keptInAgent);
            removedPaths = List.copyOf(removedPaths.size() > MAX_REPORTED_PATHS ? removedPaths.subList(0, MAX_REPORTED_PATHS) : removedPaths);
        }

        /** A report of every path {@code removed}: counted, and the first {@link #MAX_REPORTED_PATHS} named. */
        public Dropped(String key, String computerId, Outcome outcome, String agent, String sessionId,
                       List<AssistantSessions.Retired> retired, List<AssistantSessions.Retired> keptInAgent,
                       List<String> removed, boolean entryRemoved, boolean folderRemoved, String error) {
            this(key, computerId, outcome, agent, sessionId, retired, keptInAgent, removed.size(), removed, entryRemoved,
                    folderRemoved, error);
        }

        /** Whether the computer confirms the drop: the chat's session is not on this computer any more. */
        public boolean confirmed() {
            return outcome == Outcome.DROPPED || outcome == Outcome.ALREADY_GONE;
        }
    }

    /**
     * @param sessions   this computer's assistant sessions
     * @param deleter    the agents' own stores on this computer
     * @param locks      the chats' locks, shared with the turns
     * @param computerId this computer's id
     */
    public AssistantDrops(AssistantSessions sessions, AgentStoreDeleter deleter, ChatLocks locks, String computerId) {
        this.sessions = sessions;
        this.deleter = deleter;
        this.locks = locks;
        this.computerId = computerId;
    }

    /**
     * Carries out {@code request} when it is for this computer (else FAILED, nothing done), waiting at most
     * {@code waitForTurn} for a running turn of the chat to end.
     */
    public Dropped drop(DropRules.PendingDrop request, Duration waitForTurn) {
        if (request.computerId() != null && !request.computerId().equals(computerId)) {
            return new Dropped(request.key(), computerId, Outcome.FAILED, null, null, List.of(), List.of(), List.of(), false, false,
                    "the request is for computer " + request.computerId() + ", not " + computerId);
        }
        return drop(request.key(), waitForTurn);
    }

    /** Drops the chat {@code key}, waiting at most {@code waitForTurn} for a running turn of it to end. */
    public Dropped drop(String key, Duration waitForTurn) {
        ChatLocks.Held held;
        try {
            held = locks.tryHold(key, waitForTurn);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return new Dropped(key, computerId, Outcome.TURN_RUNNING, null, null, List.of(), List.of(), List.of(), false, false,
                    "interrupted while waiting for the chat's running turn to end");
        }
        if (held == null) {
            return new Dropped(key, computerId, Outcome.TURN_RUNNING, null, null, List.of(), List.of(), List.of(), false, false,
                    "a turn of the chat is still running after " + waitForTurn);
        }
        try (held) {
            return dropHeld(key);
        }
    }

    /**
     * Deletes the session a turn's decision replaced ({@link TurnRules.Decision#replaced()}: "deleted from the agent
     * at once, with its folder when the folder is the chat's own"), for the turn of chat {@code key}. The calling
     * thread must hold the chat's lock (the turn's {@link ChatLocks#hold}); it is not taken here, so this never waits.
     * The store entry is left to the turn, which stores the new session's. The chat's own folder is the new session's
     * working folder too, so it is not removed but emptied (links inside removed as links), and only when the rules say
     * so and it is this chat's own folder: the turn calls this right after its decision and before it writes the new
     * session's files (instructions, MCP config) there, so nothing of the new session is ever deleted; the folder
     * itself stays for the new session ({@link Dropped#folderRemoved()} then says its content went).
     *
     * @throws IllegalStateException when the calling thread does not hold the chat's lock
     */
    public Dropped deleteReplaced(String key, TurnRules.Replaced replaced) {
        if (!locks.heldByCurrentThread(key)) {
            throw new IllegalStateException("deleting chat " + key + "'s replaced session needs the chat's lock, held by the turn");
        }
        if (replaced.computerId() != null && !replaced.computerId().equals(computerId)) {
            return new Dropped(key, computerId, Outcome.FAILED, replaced.agent(), replaced.sessionId(), List.of(), List.of(), List.of(),
                    false, false, "the replaced session is computer " + replaced.computerId() + "'s, not " + computerId + "'s");
        }
        String linked = linkedChatFolders();
        if (linked != null) {
            return new Dropped(key, computerId, Outcome.FAILED, replaced.agent(), replaced.sessionId(), List.of(), List.of(),
                    List.of(), false, false, linked);
        }
        List<String> removed = new ArrayList<>();
        List<AssistantSessions.Retired> kept = new ArrayList<>();
        if (AgentStoreDeleter.deletes(replaced.agent())) {
            AgentStoreDeleter.Result r = deleter.delete(replaced.agent(), List.of(replaced.sessionId()));
            removed.addAll(r.removedPaths());
            if (!r.ok()) {
                return new Dropped(key, computerId, Outcome.FAILED, replaced.agent(), replaced.sessionId(), List.of(),
                        List.of(), removed, false, false, "the agent's session: " + r.error());
            }
        } else {
            kept.add(new AssistantSessions.Retired(replaced.agent(), replaced.sessionId()));
        }
        boolean folderRemoved = false;
        if (replaced.deleteFolder() && sessions.isChatsOwn(key, replaced.folder())) {
            try {
                folderRemoved = emptyTree(sessions.chatFolder(key), removed);
            } catch (IOException | UncheckedIOException e) {
                return new Dropped(key, computerId, Outcome.FAILED, replaced.agent(), replaced.sessionId(), List.of(),
                        kept, removed, false, false, "the chat's folder: " + e.getClass().getSimpleName() + ": " + e.getMessage());
            }
        }
        return new Dropped(key, computerId, removed.isEmpty() && kept.isEmpty() ? Outcome.ALREADY_GONE : Outcome.DROPPED, replaced.agent(),
                replaced.sessionId(), List.of(), kept, removed, false, folderRemoved, null);
    }

    /**
     * Leaves nothing of a one-off completion (guide §5 "a one-off completion ... keeps no session, and leaves none in
     * the agent", {@link TurnRules.OneOff#DELETE_AFTER_TURN}): deletes the agent's session {@code sessionId} (when the
     * agent kept one; an agent this computer never deletes from keeps it, named in {@link Dropped#keptInAgent()}) and
     * the chat's own folder the turn worked in. The calling thread must hold the chat's lock (the turn's).
     *
     * @throws IllegalStateException when the calling thread does not hold the chat's lock
     */
    public Dropped dropOneOff(String key, String agent, String sessionId) {
        if (!locks.heldByCurrentThread(key)) {
            throw new IllegalStateException("dropping one-off " + key + " needs the chat's lock, held by the turn");
        }
        String linked = linkedChatFolders();
        if (linked != null) {
            return new Dropped(key, computerId, Outcome.FAILED, agent, sessionId, List.of(), List.of(), List.of(), false, false, linked);
        }
        List<String> removed = new ArrayList<>();
        List<AssistantSessions.Retired> kept = new ArrayList<>();
        if (sessionId != null && agent != null) {
            if (AgentStoreDeleter.deletes(agent)) {
                AgentStoreDeleter.Result r = deleter.delete(agent, List.of(sessionId));
                removed.addAll(r.removedPaths());
                if (!r.ok()) {
                    return new Dropped(key, computerId, Outcome.FAILED, agent, sessionId, List.of(), List.of(), removed, false, false,
                            "the agent's session: " + r.error());
                }
            } else {
                kept.add(new AssistantSessions.Retired(agent, sessionId));
            }
        }
        boolean folderRemoved;
        try {
            folderRemoved = FileTrees.deleteTree(sessions.chatFolder(key), removed);
        } catch (IOException | UncheckedIOException e) {
            return new Dropped(key, computerId, Outcome.FAILED, agent, sessionId, List.of(), kept, removed, false, false,
                    "the chat's folder: " + e.getClass().getSimpleName() + ": " + e.getMessage());
        }
        return new Dropped(key, computerId, removed.isEmpty() && kept.isEmpty() ? Outcome.ALREADY_GONE : Outcome.DROPPED, agent,
                sessionId, List.of(), kept, removed, false, folderRemoved, null);
    }

    /**
     * The chats whose session has gone unused past its keepDays at {@code now} (guide §5 "Sessions unused for 30 days
     * (or the chat's keepDays) are dropped and deleted from the agent"; an ask's keepDays 1 is "a computer that cannot
     * delete on request yet drops it itself a day later"): the end of its last turn plus keepDays, 30 days when none
     * was given, never for keepDays 0, inclusive ({@link IdleRules}, as a chat).
     */
    public List<String> expired(Instant now) {
        return sessions.all().values().stream().filter(e -> expired(e, now)).map(AssistantSessions.Entry::key).toList();
    }

    /**
     * Drops every chat {@link #expired} at {@code now}, each under its lock and only when it is still expired once a
     * running turn of it has ended (that turn used it); waits at most {@code waitForTurn} per chat.
     */
    public List<Dropped> dropExpired(Instant now, Duration waitForTurn) {
        List<Dropped> out = new ArrayList<>();
        for (String key : expired(now)) {
            ChatLocks.Held held;
            try {
                held = locks.tryHold(key, waitForTurn);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                break;
            }
            if (held == null) {
                continue; // a turn is using it: not unused
            }
            try (held) {
                AssistantSessions.Entry e = sessions.get(key);
                if (e != null && expired(e, now)) {
                    out.add(dropHeld(key));
                }
            }
        }
        return out;
    }

    private static boolean expired(AssistantSessions.Entry e, Instant now) {
        return IdleRules.dropped(TurnRules.Kind.CHAT, e.updatedAt(), null, e.keepDays(), null, now, IdleRules.Config.defaults());
    }

    private Dropped dropHeld(String key) {
        AssistantSessions.Entry entry = sessions.get(key);
        String agent = entry == null ? null : entry.agent();
        String sessionId = entry == null ? null : entry.sessionId();
        List<AssistantSessions.Retired> retired = entry == null ? List.of() : entry.retired();
        String linked = linkedChatFolders();
        if (linked != null) {
            return new Dropped(key, computerId, Outcome.FAILED, agent, sessionId, retired, List.of(), List.of(), false, false, linked);
        }
        List<String> removed = new ArrayList<>();
        List<AssistantSessions.Retired> kept = new ArrayList<>();
        if (entry != null) {
            Map<String, List<String>> byAgent = new LinkedHashMap<>();
            byAgent.computeIfAbsent(entry.agent(), a -> new ArrayList<>()).add(entry.sessionId());
            for (AssistantSessions.Retired r : entry.retired()) {
                byAgent.computeIfAbsent(r.agent(), a -> new ArrayList<>()).add(r.sessionId());
            }
            for (Map.Entry<String, List<String>> e : byAgent.entrySet()) {
                if (!AgentStoreDeleter.deletes(e.getKey())) {
                    // never deletable here (not an error a later request gets past): the session stays in the agent
                    e.getValue().forEach(id -> kept.add(new AssistantSessions.Retired(e.getKey(), id)));
                    continue;
                }
                AgentStoreDeleter.Result r = deleter.delete(e.getKey(), e.getValue());
                removed.addAll(r.removedPaths());
                if (!r.ok()) {
                    return new Dropped(key, computerId, Outcome.FAILED, agent, sessionId, retired, kept, removed, false, false,
                            "the agent's session: " + r.error());
                }
            }
        }
        boolean folderRemoved;
        try {
            folderRemoved = FileTrees.deleteTree(sessions.chatFolder(key), removed);
        } catch (IOException | UncheckedIOException e) {
            return new Dropped(key, computerId, Outcome.FAILED, agent, sessionId, retired, kept, removed, false, false,
                    "the chat's folder: " + e.getClass().getSimpleName() + ": " + e.getMessage());
        }
        boolean entryRemoved;
        try {
            entryRemoved = sessions.remove(key) != null;
        } catch (UncheckedIOException e) {
            return new Dropped(key, computerId, Outcome.FAILED, agent, sessionId, retired, kept, removed, false, folderRemoved,
                    "the store entry: " + e.getMessage());
        }
        Outcome outcome = entryRemoved || folderRemoved || !removed.isEmpty() ? Outcome.DROPPED : Outcome.ALREADY_GONE;
        return new Dropped(key, computerId, outcome, agent, sessionId, retired, kept, removed, entryRemoved, folderRemoved, null);
    }

    /**
     * Why the chats' folders may not be touched ({@code <state>/assistant} a link, or reaching elsewhere), checked
     * before anything is deleted; null when they may.
     */
    private String linkedChatFolders() {
        try {
            sessions.checkChatFolders();
            return null;
        } catch (IOException e) {
            return "the chat's folder: " + e.getMessage();
        }
    }

    /**
     * Deletes what {@code dir} holds, links as links, and keeps {@code dir}; whether anything was removed. A link or a
     * file where the folder should be is removed (it was never the chat's folder).
     */
    static boolean emptyTree(Path dir, List<String> removed) throws IOException {
        if (!Files.exists(dir, LinkOption.NOFOLLOW_LINKS)) {
            return false;
        }
        if (!Files.isDirectory(dir, LinkOption.NOFOLLOW_LINKS)) {
            return FileTrees.deleteIfThere(dir, removed);
        }
        int before = removed.size();
        List<Path> children = new ArrayList<>();
        try (java.nio.file.DirectoryStream<Path> ds = Files.newDirectoryStream(dir)) {
            ds.forEach(children::add);
        }
        for (Path child : children) {
            FileTrees.deleteTree(child, removed);
        }
        return removed.size() > before;
    }
}
