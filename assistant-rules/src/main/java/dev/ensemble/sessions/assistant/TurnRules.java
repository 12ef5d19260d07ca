package dev.ensemble.sessions.assistant;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.regex.Pattern;

/**
 * Which session an assistant turn runs in (guide §5 "Assistant chats on an AI plan", "A session used outside
 * Ensemble", the ask paragraph for asks), as pure functions of plain records: a chat's store entry on the
 * computer about to run the turn, and the turn, in; a {@link Decision} out. Nothing here reads a clock, a file
 * or a topic.
 *
 * <p>The checks, in this order (the first that applies decides):
 * <ol>
 *   <li>a one-off completion keeps no session ({@link Action#NONE}, "a one-off completion ... keeps no session,
 *       and leaves none in the agent");</li>
 *   <li>no entry for the chat on this computer: {@link Reason#FIRST_TURN} ("a new chat is a new session"; a chat
 *       is "one session of the agent on the computer that runs it", so a turn on a computer without an entry
 *       starts one there, with the chat so far);</li>
 *   <li>the entry is another computer's: {@link Reason#OTHER_COMPUTER}, the same sentence, for a caller that keeps one
 *       entry per chat. That entry is not replaced here: it stays in its computer's store until the chat comes back
 *       there (its position moved, so it is replaced then) or it expires;</li>
 *   <li>the session is gone (deleted in the agent's app, expired, refused on reopening): {@link Reason#SESSION_GONE}
 *       ("a session the agent cannot reopen ... falls back to a new session ... with the chat so far");</li>
 *   <li>touched outside: the agent's own transcript holds more prompts than were noted after the session's last
 *       turn ({@link Reason#TOUCHED_OUTSIDE}); the touched session is retired (kept, never resumed), not deleted
 *       at once. Only Claude Code and Copilot are counted; other agents, and a transcript the computer cannot
 *       read ({@link Turn#promptsNow()} null), are resumed without this check ("Other agents, and a transcript
 *       the computer cannot read, are resumed without this check");</li>
 *   <li>another agent: {@link Reason#OTHER_AGENT} ("when the agent is the same");</li>
 *   <li>the position moved: the turn's position differs from the one the session's last turn left
 *       ({@link Reason#POSITION_MOVED}, "a turn on another model or computer moves it on"). Asks are sent
 *       without position and skip this check ("so the computer resumes it however many asks came before");</li>
 *   <li>80 messages: the session was sent {@link #ROTATE_MESSAGES} messages or more ({@link Reason#ROTATION_MESSAGES}).
 *       "After 80 messages in one session" is read as: the 81st message goes to a new session, so an entry that
 *       was sent 79 resumes, 80 rotates. A message sent to a session is one turn (its answer is not counted), so a
 *       chat of 85 turns rotates once (issue 17). It applies to every agent (the limit is on the session, not its
 *       instructions) but not to asks (same sentence as above);</li>
 *   <li>more than half of the instructions' lines changed, for an agent that keeps a session's first instructions
 *       ({@link #keepsFirstInstructions}): {@link Reason#ROTATION_INSTRUCTIONS}. Exactly half is not "more than
 *       half": it resumes with an update (see {@link #changedShare});</li>
 *   <li>otherwise {@link Action#RESUME}, with an {@link InstructionsUpdate} when a keep-first agent's instructions
 *       changed by half or less of the lines ("changed instructions do not start a new session ... The message is
 *       led by what changed instead"). Agents that take the instructions with every turn (Claude Code, Codex) get
 *       them whole each time, so changed instructions neither rotate nor update them.</li>
 * </ol>
 * A new session gets the chat so far ({@link #history}, the last {@link #HISTORY_MESSAGES} counted messages; for
 * an ask, {@link AskRules#askHistory} of the gone session, at most 8 asks and answers). Every new session that
 * replaces an entry, other than a touched one, names it in {@link Decision#replaced()} to be deleted from the
 * agent at once, with its folder when that folder is the chat's own ("A session replaced in the store ... is
 * deleted from the agent at once, with its folder when the folder is the chat's own").
 *
 * <p>A turn is decided when it is its chat's turn to run: "Turns of one chat run one at a time" ({@link Line}), so
 * the entry it sees is the one the previous turn left.
 */
public final class TurnRules {
    private TurnRules() {
    }

    /** "after 80 messages in one session (ROTATE_MESSAGES)". */
    public static final int ROTATE_MESSAGES = 80;
    /** "session.history, the last 12 messages". */
    public static final int HISTORY_MESSAGES = 12;
    /** "keep a session 7 days unused" for an Ensemble Node's turns. */
    public static final int NODE_KEEP_DAYS = 7;
    /** The line that leads a message whose instructions changed (guide §5, instructionsUpdate). */
    public static final String INSTRUCTIONS_CHANGED = "Your instructions changed since this conversation began";

    /**
     * Agents that keep the instructions from a session's first message: "Copilot, Cursor's agent, the ACP
     * agents" (every subscription agent but Claude Code and Codex, which take them with every turn).
     */
    public static final Set<String> KEEP_FIRST_INSTRUCTIONS = Set.of("copilot", "cursor", "gemini-cli", "opencode",
            "grok-build", "qwen-code", "kimi-code", "mistral-vibe", "antigravity");
    /** Agents whose own transcript the computer counts prompts in: Claude Code's .jsonl, Copilot's events.jsonl. */
    public static final Set<String> PROMPTS_COUNTED = Set.of("claude-code", "copilot");

    /** What a conversation is (guide's table "At a glance"). */
    public enum Kind { CHAT, ROUTINE, NODE_CONVERSATION, ASK, ONE_OFF }

    public enum Action {
        /** Resume {@link Decision#sessionId()}: send only the message (with its instructions update, if any). */
        RESUME,
        /** Start a new session with {@link Decision#history()} before the message. */
        NEW,
        /** A one-off completion: no session, none left in the agent. */
        NONE
    }

    public enum Reason { FIRST_TURN, OTHER_COMPUTER, SESSION_GONE, TOUCHED_OUTSIDE, OTHER_AGENT, POSITION_MOVED, ROTATION_MESSAGES, ROTATION_INSTRUCTIONS }

    /** How a one-off leaves no session: Claude Code's --no-session-persistence, Codex's ephemeral thread, or deleted after the turn (dropOneOff). */
    public enum OneOff { NO_SESSION_PERSISTENCE, EPHEMERAL_THREAD, DELETE_AFTER_TURN }

    public enum Role { USER, ASSISTANT, ERROR }

    /**
     * One message of a chat.
     *
     * @param sessionId the agent session that answered it (ASSISTANT) or null when none took part (a model not on
     *                  an AI plan); USER messages leave it null
     */
    public record Message(String id, Role role, String text, String sessionId) {
        public Message {
            Objects.requireNonNull(role, "role");
        }
    }

    /** session.group {id, name}. */
    public record Group(String id, String name) {
    }

    /**
     * The chat's entry in the store of the computer about to run the turn (assistant-sessions.json), or what the
     * events say of it.
     *
     * @param positionLeft     the chat's position the session's last turn left (its position plus its message and answer)
     * @param messagesSent     messages sent to this session, one per turn
     * @param instructionLines the instructions the session was given (its first)
     * @param promptsNoted     prompts the agent's transcript held after the session's last turn, or null when not noted
     * @param gone             the agent cannot reopen it
     */
    public record SessionEntry(String sessionId, String agent, String model, String computerId, int positionLeft,
                               int messagesSent, List<String> instructionLines, String folder, Integer promptsNoted,
                               boolean gone) {
        public SessionEntry {
            Objects.requireNonNull(sessionId, "sessionId");
            instructionLines = List.copyOf(instructionLines);
        }
    }

    /**
     * A conversation: a chat, routine, node conversation, ask or one-off.
     *
     * @param key      the conversation id (session.key); an ask's is {@link AskRules#sessionKey}
     * @param group    session.group, or null; a node conversation's is the node {id, name}
     * @param keepDays the chat's keepDays, or null for the default
     * @param entry    its store entry on the turn's computer, or null
     * @param messages the chat so far, oldest first (for an ask: the page's earlier asks and answers)
     */
    public record Chat(String key, Kind kind, Group group, Integer keepDays, SessionEntry entry, List<Message> messages) {
        public Chat {
            Objects.requireNonNull(key, "key");
            Objects.requireNonNull(kind, "kind");
            messages = List.copyOf(messages);
        }
    }

    /**
     * The turn about to run.
     *
     * @param position         {@link #position} of the chat's messages before this one; ignored for asks
     * @param instructionLines its instructions, one entry per line
     * @param promptsNow       prompts the agent's transcript of the entry's session holds now, or null when not read
     */
    public record Turn(String agent, String model, String computerId, int position, List<String> instructionLines,
                       Integer promptsNow) {
        public Turn {
            Objects.requireNonNull(agent, "agent");
            instructionLines = List.copyOf(instructionLines);
        }
    }

    /** Where the turn runs: the computer's workspace and state folders. */
    public record Places(String workspace, String stateDir) {
    }

    /** "the lines now part of them and the lines no longer part of them", led by {@link #INSTRUCTIONS_CHANGED}. */
    public record InstructionsUpdate(String lead, List<String> added, List<String> removed) {
    }

    /** A session to delete from the agent at once; its folder too when {@code deleteFolder}. */
    public record Replaced(String sessionId, String agent, String computerId, String folder, boolean deleteFolder) {
    }

    /**
     * @param sessionId          the session to resume, or null
     * @param reason             why a new session, or null
     * @param history            the chat so far to send before the message (NEW only)
     * @param instructionsUpdate RESUME of a keep-first agent whose instructions changed, else null
     * @param replaced           the entry to delete at once, or null
     * @param retired            a touched session kept unresumed (deleted with the chat or when its entry expires), or null
     * @param folder             the agent's working folder: the group's project folder or the chat's own
     * @param chatFolder         the chat's own folder for the turn's files, instructions and MCP config
     * @param group              the group the turn names (a node conversation's "&lt;Name&gt; (Ensemble Node)"), or null
     * @param keepDays           the keepDays to store with the entry, or null for the default
     * @param oneOff             how a one-off leaves no session, else null
     */
    public record Decision(Action action, String sessionId, Reason reason, List<Message> history,
                           InstructionsUpdate instructionsUpdate, Replaced replaced, String retired, String folder,
                           String chatFolder, Group group, Integer keepDays, OneOff oneOff) {
    }

    /** Whether {@code agent} keeps the instructions from a session's first message. */
    public static boolean keepsFirstInstructions(String agent) {
        return KEEP_FIRST_INSTRUCTIONS.contains(agent);
    }

    /** Decides the turn's session. */
    public static Decision decide(Chat chat, Turn turn, Places places) {
        String chatFolder = chatFolder(places, chat.key());
        Group group = group(chat);
        String folder = group == null ? chatFolder : projectFolder(places, group.name());
        Integer keepDays = chat.kind() == Kind.NODE_CONVERSATION && chat.keepDays() == null ? Integer.valueOf(NODE_KEEP_DAYS)
                : chat.kind() == Kind.ASK ? Integer.valueOf(AskRules.ASK_KEEP_DAYS) : chat.keepDays();
        if (chat.kind() == Kind.ONE_OFF) {
            OneOff how = switch (turn.agent()) {
                case "claude-code" -> OneOff.NO_SESSION_PERSISTENCE;
                case "codex" -> OneOff.EPHEMERAL_THREAD;
                default -> OneOff.DELETE_AFTER_TURN;
            };
            return new Decision(Action.NONE, null, null, List.of(), null, null, null, chatFolder, chatFolder, null, null, how);
        }
        SessionEntry e = chat.entry();
        Reason reason = newSessionReason(chat, e, turn);
        if (reason == null) {
            InstructionsUpdate update = null;
            if (keepsFirstInstructions(e.agent())) {
                update = instructionsUpdate(e.instructionLines(), turn.instructionLines());
            }
            return new Decision(Action.RESUME, e.sessionId(), null, List.of(), update, null, null, folder, chatFolder, group,
                    keepDays, null);
        }
        Replaced replaced = null;
        String retired = null;
        if (e != null && reason != Reason.OTHER_COMPUTER) {
            if (reason == Reason.TOUCHED_OUTSIDE) {
                retired = e.sessionId();
            } else {
                replaced = new Replaced(e.sessionId(), e.agent(), e.computerId(), e.folder(),
                        e.folder() != null && e.folder().equals(chatFolder));
            }
        }
        List<Message> history = chat.kind() == Kind.ASK
                ? AskRules.askHistory(chat.messages(), e == null ? null : e.sessionId())
                : history(chat.messages());
        return new Decision(Action.NEW, null, reason, history, null, replaced, retired, folder, chatFolder, group, keepDays, null);
    }

    private static Reason newSessionReason(Chat chat, SessionEntry e, Turn turn) {
        if (e == null) {
            return Reason.FIRST_TURN;
        }
        if (e.computerId() != null && !e.computerId().equals(turn.computerId())) {
            return Reason.OTHER_COMPUTER;
        }
        if (e.gone()) {
            return Reason.SESSION_GONE;
        }
        if (touchedOutside(e, turn)) {
            return Reason.TOUCHED_OUTSIDE;
        }
        if (!e.agent().equals(turn.agent())) {
            return Reason.OTHER_AGENT;
        }
        boolean ask = chat.kind() == Kind.ASK;
        if (!ask && turn.position() != e.positionLeft()) {
            return Reason.POSITION_MOVED;
        }
        if (!ask && e.messagesSent() >= ROTATE_MESSAGES) {
            return Reason.ROTATION_MESSAGES;
        }
        if (keepsFirstInstructions(e.agent()) && changedShare(e.instructionLines(), turn.instructionLines()) > 0.5) {
            return Reason.ROTATION_INSTRUCTIONS;
        }
        return null;
    }

    /**
     * Touched outside: the agent is counted ({@link #PROMPTS_COUNTED}), both counts are known, and the count now is
     * higher than the one noted after the session's last turn.
     */
    public static boolean touchedOutside(SessionEntry e, Turn turn) {
        return PROMPTS_COUNTED.contains(e.agent()) && e.promptsNoted() != null && turn.promptsNow() != null
                && turn.promptsNow() > e.promptsNoted();
    }

    /**
     * The store entry after a turn ends: answered → the position moves past the message and its answer (+2) and
     * the session was sent one more message; failed → the session's position and count stay (a failed exchange
     * does not count), but a new session keeps its id and first instructions. {@code promptsNoted} is the count the
     * computer read after the turn (null when not read).
     */
    public static SessionEntry afterTurn(Decision d, Turn turn, String agentSessionId, boolean answered, Integer promptsNoted) {
        if (d.action() == Action.NONE) {
            throw new IllegalArgumentException("a one-off completion keeps no session");
        }
        int position = answered ? turn.position() + 2 : turn.position();
        return new SessionEntry(agentSessionId, turn.agent(), turn.model(), turn.computerId(), position,
                answered ? 1 : 0, turn.instructionLines(), d.folder(), promptsNoted, false);
    }

    /** The entry after a resumed turn ends (see {@link #afterTurn(Decision, Turn, String, boolean, Integer)}). */
    public static SessionEntry afterTurn(SessionEntry resumed, Turn turn, boolean answered, Integer promptsNoted) {
        int position = answered ? turn.position() + 2 : resumed.positionLeft();
        return new SessionEntry(resumed.sessionId(), resumed.agent(), turn.model(), resumed.computerId(), position,
                resumed.messagesSent() + (answered ? 1 : 0), resumed.instructionLines(), resumed.folder(), promptsNoted, false);
    }

    /**
     * The messages that count toward the position, oldest first: a USER message followed (before the next USER
     * message) by an ASSISTANT answer that a session took part in, and that answer. "A message that got no answer
     * ... and a failed exchange (the message and its error) do not count" (sessionPosition): a USER message answered
     * by an ERROR, or by nothing, counts for nothing, and neither does the ERROR.
     */
    public static List<Message> counted(List<Message> messages) {
        List<Message> out = new ArrayList<>();
        for (int i = 0; i < messages.size(); i++) {
            Message m = messages.get(i);
            if (m.role() != Role.USER) {
                continue;
            }
            Message answer = i + 1 < messages.size() ? messages.get(i + 1) : null;
            if (answer != null && answer.role() == Role.ASSISTANT && answer.sessionId() != null) {
                out.add(m);
                out.add(answer);
            }
        }
        return out;
    }

    /** session.position: the chat's messages before this one that a session took part in ({@link #counted}). */
    public static int position(List<Message> messagesBefore) {
        return counted(messagesBefore).size();
    }

    /** session.history: the last {@link #HISTORY_MESSAGES} counted messages, oldest first. */
    public static List<Message> history(List<Message> messagesBefore) {
        List<Message> c = counted(messagesBefore);
        return List.copyOf(c.subList(Math.max(0, c.size() - HISTORY_MESSAGES), c.size()));
    }

    /**
     * The share of lines changed, 0..1: lines in only one of the two instructions (the session's first and the
     * turn's), over the lines of both. Lines are compared with trailing whitespace removed; blank lines and repeats
     * do not count. Replacing k of n lines gives k/n (2k of 2n), so "more than half of the lines changed" is
     * {@code > 0.5}: 50 of 100 lines replaced updates, 51 rotates. Lines only added count against both sets: adding
     * twice as many lines as there were is exactly 1/2 (an update); removing every line, or starting from none, is 1.
     * Both empty: 0.
     */
    public static double changedShare(List<String> first, List<String> now) {
        Set<String> a = lines(first);
        Set<String> b = lines(now);
        if (a.isEmpty() && b.isEmpty()) {
            return 0;
        }
        int changed = 0;
        for (String l : a) {
            if (!b.contains(l)) {
                changed++;
            }
        }
        for (String l : b) {
            if (!a.contains(l)) {
                changed++;
            }
        }
        return (double) changed / (a.size() + b.size());
    }

    /** The lines now part of the instructions and no longer part of them, in their order; null when none changed. */
    public static InstructionsUpdate instructionsUpdate(List<String> first, List<String> now) {
        Set<String> a = lines(first);
        Set<String> b = lines(now);
        List<String> added = b.stream().filter(l -> !a.contains(l)).toList();
        List<String> removed = a.stream().filter(l -> !b.contains(l)).toList();
        return added.isEmpty() && removed.isEmpty() ? null : new InstructionsUpdate(INSTRUCTIONS_CHANGED, added, removed);
    }

    private static Set<String> lines(List<String> lines) {
        Set<String> out = new LinkedHashSet<>();
        for (String l : lines) {
            String s = l.stripTrailing();
            if (!s.isBlank()) {
                out.add(s);
            }
        }
        return out;
    }

    /** The group a turn names: a node conversation's node as "&lt;Name&gt; (Ensemble Node)", else the chat's. */
    public static Group group(Chat chat) {
        Group g = chat.group();
        if (g == null) {
            return null;
        }
        return chat.kind() == Kind.NODE_CONVERSATION ? new Group(g.id(), g.name() + " (Ensemble Node)") : g;
    }

    /** {@code <state>/assistant/<key>}, the key as {@link #chatFolderName}. */
    public static String chatFolder(Places p, String key) {
        return p.stateDir() + "/assistant/" + chatFolderName(key);
    }

    /**
     * A chat's key as one folder name under {@code <state>/assistant}, never another chat's, also on a file system
     * that ignores case. Two kinds of name, never equal to each other:
     * <ul>
     *   <li>a safe key is its own name: lower-case letters, digits, '.', '_' and '-', not starting with '.', without
     *       "--", at most 128 characters (a lower-case conversation id, an ask's {@code ask-<kind>-<hash>});</li>
     *   <li>any other key (an upper-case letter, "--", a separator, "..", a control character, a space, another script,
     *       too long) becomes its safe characters lower-cased (others as '-', at most 64, no leading '.'; "chat" when
     *       none) then "--" and the first 16 hex digits of the SHA-256 of its UTF-8 bytes.</li>
     * </ul>
     * A hashed name always ends with "--" and 16 hex digits, which a safe key cannot hold, so no safe key spells a
     * hashed name; two hashed names are equal (in any case) only when their hashes are, that is for the same key; and
     * two safe keys are lower-case, so they differ in a case-insensitive comparison too. The name never holds a
     * separator and is never "", "." or "..".
     */
    public static String chatFolderName(String key) {
        if (SAFE_KEY.matcher(key).matches() && !key.contains("--")) {
            return key;
        }
        StringBuilder b = new StringBuilder();
        for (int i = 0; i < key.length() && b.length() < 64; i++) {
            char c = key.charAt(i);
            boolean safe = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' || c == '_' || c == '-';
            b.append(safe && !(c == '.' && b.length() == 0) ? Character.toLowerCase(c) : '-');
        }
        return (b.length() == 0 ? "chat" : b) + "--" + sha256Hex(key).substring(0, 16);
    }

    private static final Pattern SAFE_KEY = Pattern.compile("[a-z0-9_-][a-z0-9._-]{0,127}");

    private static String sha256Hex(String s) {
        try {
            return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(s.getBytes(StandardCharsets.UTF_8)));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("every JDK has SHA-256", e);
        }
    }

    /** {@code <workspace>/projects/<name>} (projectFolder). */
    public static String projectFolder(Places p, String name) {
        return p.workspace() + "/projects/" + folderName(name);
    }

    /** A name as one folder: path separators and control characters become '-', "." and ".." become "-". */
    static String folderName(String name) {
        StringBuilder b = new StringBuilder(name.length());
        for (char c : name.toCharArray()) {
            b.append(c == '/' || c == '\\' || Character.isISOControl(c) ? '-' : c);
        }
        String s = b.toString();
        return s.isEmpty() || s.equals(".") || s.equals("..") ? "-" : s;
    }
}
