package dev.ensemble.sessions.agent.assistant;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.ensemble.sessions.agent.AgentPrompts;
import dev.ensemble.sessions.agent.AgentStores;
import dev.ensemble.sessions.assistant.TurnRules;

import java.io.BufferedReader;
import java.io.IOException;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Pattern;

/**
 * How many prompts the agent's own transcript of a session holds (guide §5 "A session used outside Ensemble"): the
 * computer notes the count after each turn ({@code promptsNoted}) and reads it again before the next
 * ({@code promptsNow}); a higher count means someone sent the session prompts of their own.
 * <ul>
 *   <li>Claude Code: {@code <projects>/<folder>/<id>.jsonl} in every projects folder of {@link AgentStores#claude()};
 *       the person's prompts as the importer counts them ({@link AgentPrompts}: real prompts, and slash commands the
 *       agent replied to; not tool results, {@code <task-notification>}, meta, sub-agent or compaction lines). A
 *       session's transcript in two projects folders counts the prompts of both.</li>
 *   <li>Copilot CLI: {@code session-state/<id>/events.jsonl}, or the older flat {@code session-state/<id>.jsonl} when
 *       there is no such folder file (never both: they are the same session's events, in the old layout and the
 *       new), in every home of {@link AgentStores#copilot()}; {@code user.message} events with a non-blank content.</li>
 * </ul>
 * The count is null when the agent is not one whose transcript is counted ({@link TurnRules#PROMPTS_COUNTED}), the
 * id is not a plain file name, no transcript of the session is there, or one cannot be read (permissions, not
 * UTF-8): "Other agents, and a transcript the computer cannot read, are resumed without this check". A line that is
 * not JSON (a line being written) counts nothing.
 */
public final class TranscriptPrompts {
    private static final ObjectMapper MAPPER = new ObjectMapper();
    /** A session id usable as a file name: no separator, no dot first (as AgentStoreDeleter's). */
    private static final Pattern SAFE_ID = Pattern.compile("[A-Za-z0-9][A-Za-z0-9._-]{0,199}");

    private final AgentStores stores;

    public TranscriptPrompts(AgentStores stores) {
        this.stores = stores;
    }

    /** The prompts in the transcript of {@code entry}'s session (its agent and id), or null (see the class comment). */
    public Integer count(AssistantSessions.Entry entry) {
        return count(entry.agent(), entry.sessionId());
    }

    /** The prompts in {@code agent}'s transcript of session {@code sessionId}, or null (see the class comment). */
    public Integer count(String agent, String sessionId) {
        if (!TurnRules.PROMPTS_COUNTED.contains(agent) || sessionId == null || !SAFE_ID.matcher(sessionId).matches()) {
            return null;
        }
        try {
            if (AgentPrompts.CLAUDE_CODE.equals(agent)) {
                return sum(claudeTranscripts(sessionId), TranscriptPrompts::claudePrompts);
            }
            if (AgentPrompts.COPILOT.equals(agent)) {
                return sum(copilotTranscripts(sessionId), TranscriptPrompts::copilotPrompts);
            }
            return null;
        } catch (IOException unreadable) {
            return null; // "a transcript the computer cannot read" is resumed without the check
        }
    }

    /** How one agent counts the prompts of one transcript file. */
    @FunctionalInterface
    private interface PromptCounter {
        int count(Path file) throws IOException;
    }

    /** The prompts of every file, each counted by {@code counter}; null when there is no file. */
    private static Integer sum(List<Path> files, PromptCounter counter) throws IOException {
        if (files.isEmpty()) {
            return null;
        }
        int n = 0;
        for (Path f : files) {
            n += counter.count(f);
        }
        return n;
    }

    private List<Path> claudeTranscripts(String id) throws IOException {
        List<Path> out = new ArrayList<>();
        for (Path projects : stores.claude()) {
            if (!Files.isDirectory(projects)) {
                continue;
            }
            try (DirectoryStream<Path> folders = Files.newDirectoryStream(projects)) {
                for (Path folder : folders) {
                    Path f = folder.resolve(id + ".jsonl");
                    if (Files.isDirectory(folder, LinkOption.NOFOLLOW_LINKS) && Files.isRegularFile(f)) {
                        out.add(f);
                    }
                }
            }
        }
        return out;
    }

    private List<Path> copilotTranscripts(String id) {
        List<Path> out = new ArrayList<>();
        for (Path home : stores.copilot()) {
            Path state = home.resolve("session-state");
            // one session's events, in one layout: the session folder's when there is one, else the older flat file
            Path events = state.resolve(id).resolve("events.jsonl");
            Path flat = state.resolve(id + ".jsonl");
            if (Files.isRegularFile(events)) {
                out.add(events);
            } else if (Files.isRegularFile(flat)) {
                out.add(flat);
            }
        }
        return out;
    }

    /**
     * Claude Code's prompts in one transcript, as the importer counts them: a real prompt counts at once; a slash
     * command counts when an assistant line follows before the next prompt, command or local command output.
     */
    static int claudePrompts(Path file) throws IOException {
        int n = 0;
        boolean command = false;
        try (BufferedReader r = Files.newBufferedReader(file, StandardCharsets.UTF_8)) {
            String text;
            while ((text = r.readLine()) != null) {
                if (!command && !text.contains("\"user\"")) {
                    continue; // neither a user line nor the reply a pending command waits for
                }
                JsonNode line = json(text);
                if (!AgentPrompts.claudeLine(line)) {
                    continue;
                }
                String type = line.path("type").asText("");
                if (type.equals("user")) {
                    if (AgentPrompts.claudePrompt(line)) {
                        n++;
                        command = false;
                    } else if (AgentPrompts.claudeCommand(line)) {
                        command = true;
                    } else if (AgentPrompts.claudeLocalOutput(line)) {
                        command = false;
                    }
                } else if (type.equals("assistant") && command) {
                    n++; // the agent replies to the slash command: it was a prompt
                    command = false;
                }
            }
        } catch (CharacterCodingException notText) {
            throw new IOException(file + " is not UTF-8 text", notText);
        }
        return n;
    }

    /** Copilot CLI's prompts in one events file: {@code user.message} events with a non-blank content. */
    static int copilotPrompts(Path file) throws IOException {
        int n = 0;
        try (BufferedReader r = Files.newBufferedReader(file, StandardCharsets.UTF_8)) {
            String text;
            while ((text = r.readLine()) != null) {
                if (text.contains("user.message") && AgentPrompts.copilotPrompt(json(text))) {
                    n++;
                }
            }
        } catch (CharacterCodingException notText) {
            throw new IOException(file + " is not UTF-8 text", notText);
        }
        return n;
    }

    private static JsonNode json(String text) {
        try {
            return MAPPER.readTree(text);
        } catch (IOException notJson) {
            return null; // a line still being written, or not the agent's: no prompt
        }
    }
}
