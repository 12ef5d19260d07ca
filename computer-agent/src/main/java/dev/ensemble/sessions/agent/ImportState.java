package dev.ensemble.sessions.agent;

import com.fasterxml.jackson.annotation.JsonIgnoreProperties;
import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * How far the importer read each transcript, and what it needs to go on from there: the JSON file named by
 * {@link ImportConfig#stateFile()}. Written whole to a temporary file that is renamed over the old one, so a
 * crash leaves either the old or the new state. Losing it is harmless: importing from scratch sends the same
 * event ids again.
 */
@JsonIgnoreProperties(ignoreUnknown = true)
@JsonInclude(JsonInclude.Include.NON_NULL)
final class ImportState {
    static final int VERSION = 1;
    private static final ObjectMapper MAPPER = new ObjectMapper()
            .configure(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES, false)
            .configure(SerializationFeature.INDENT_OUTPUT, false);

    public int version = VERSION;
    /** The account the transcripts were imported for (null in a state written before it was recorded). */
    public String account;
    /** By the transcript's absolute path. */
    public Map<String, FileState> files = new TreeMap<>();

    /**
     * Reads the state; a missing file is an empty state.
     *
     * @throws UncheckedIOException when the file exists but cannot be read or parsed (the caller decides whether
     *                              to start over)
     */
    static ImportState load(Path file) {
        if (!Files.exists(file)) {
            return new ImportState();
        }
        try {
            ImportState s = MAPPER.readValue(file.toFile(), ImportState.class);
            if (s.files == null) {
                s.files = new TreeMap<>();
            }
            return s;
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read the import state " + file + ": " + e.getMessage(), e);
        }
    }

    /** Writes the state atomically, creating parent folders. */
    void save(Path file) {
        try {
            Path parent = file.toAbsolutePath().getParent();
            Files.createDirectories(parent);
            Path tmp = Files.createTempFile(parent, ".import-state", ".tmp");
            MAPPER.writeValue(tmp.toFile(), this);
            try {
                Files.move(tmp, file, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
            } catch (AtomicMoveNotSupportedException e) {
                Files.move(tmp, file, StandardCopyOption.REPLACE_EXISTING);
            }
        } catch (IOException e) {
            throw new UncheckedIOException("cannot write the import state " + file + ": " + e.getMessage(), e);
        }
    }

    /** A deep copy (through JSON), so a failed import can be dropped without touching the saved state. */
    ImportState copy() {
        return MAPPER.convertValue(this, ImportState.class);
    }

    /** One transcript file. */
    @JsonIgnoreProperties(ignoreUnknown = true)
    @JsonInclude(JsonInclude.Include.NON_NULL)
    static final class FileState {
        /** claude-code or codex. */
        public String agent;
        /** Size and last-modified time (epoch ms) when last looked at; both equal means unchanged. */
        public long size;
        public long mtime;
        /**
         * Bytes read: always just after a line end, except while an over-long line is passed over
         * ({@link #longLineFrom}): then where the look for its line end stopped.
         */
        public long offset;
        /**
         * The last bytes read, up to {@link StoreImporter#TAIL}, just before {@link #offset} (base64 in the JSON): when
         * the file's bytes there are no longer these, it was replaced or rewritten, not appended to, and is read again
         * from its start. Null when nothing was read, and in a state written before it was kept (such a file is read
         * on from its offset, as then).
         */
        public byte[] tail;
        /**
         * The start (byte) of a line longer than the importer's limit whose line end is not read yet: its bytes up
         * to {@link #offset} were passed over, and so is the rest of it up to its line end; null when none.
         */
        public Long longLineFrom;
        /** Complete lines read (line numbers count from 1). */
        public long lines;
        public SessionState session = new SessionState();
        /**
         * The agent session an earlier read of this file imported (its id and first run's id), kept when the file shrank
         * or was rewritten (emptied, replaced) and is read again from its start, so that its deletion still marks that
         * session gone; null when none.
         */
        public String importedSessionId;
        public String importedFirstRunId;
    }

    /** What an agent session's parser carries from one import to the next. */
    @JsonIgnoreProperties(ignoreUnknown = true)
    @JsonInclude(JsonInclude.Include.NON_NULL)
    static final class SessionState {
        /** A line of a known transcript kind was seen. */
        public boolean recognized;
        /** Lines of a sub-agent (isSidechain, or a Codex sub-agent thread) were seen. */
        public boolean sidechainSeen;
        /** The whole transcript is a sub-agent's (a Codex rollout whose session_meta says so). */
        public boolean subAgent;
        /** The agent's own session id. */
        public String sessionId;
        /** The working folder, from the newest line that carries one. */
        public String cwd;
        /** Every working folder the lines named, the first first. */
        public List<String> folders = new ArrayList<>();
        /** Keys of the prompts claimed (agents that may write a message again under the same id: Gemini CLI). */
        public List<String> promptKeys = new ArrayList<>();
        /** The newest context reading the agent reported on its own (Copilot {@code session.usage_info}). */
        public Long lastUsed;
        /** Codex: the session this rollout was forked from ({@code session_meta.forked_from_id}). */
        public String forkedFrom;
        /** Codex: the parent's prompts a fork replays at its start and that are not yet matched. */
        public List<String> replayed;
        /** Codex: the early format (bare items, no event_msg lines): prompts are the user message items. */
        public boolean bare;
        /** The newest model seen (reply or turn context), and the context window known for it (tokens). */
        public String model;
        public Long window;
        /** The newest line time seen (epoch ms), for lines without one. */
        public Long lastAt;
        /** Real prompts seen, i.e. runs claimed. */
        public int prompts;
        public String firstRunId;
        public Long firstPromptAt;
        public String currentRunId;
        /** A reply with usage was seen in the main conversation. */
        public boolean usageSeen;
        /** The engine event of unknown fill was sent. */
        public boolean noUsageSent;
        /** Claude Code: summary leafUuids seen before the first run was claimed. */
        public List<String> leafUuids = new ArrayList<>();
        /** The newest run's turn; null before the first prompt. */
        public Turn turn;
        /** Claude Code: a slash command line not yet known to be a prompt (it is once the agent replies to it). */
        public Command command;
    }

    /** A slash command waiting for the agent's reply. */
    @JsonIgnoreProperties(ignoreUnknown = true)
    @JsonInclude(JsonInclude.Include.NON_NULL)
    static final class Command {
        public String key;
        public long at;
        /** {@code /name args} (Claude Code), or a Codex user message item waiting for its user_message event. */
        public String text;
        public String cwd;
        public boolean image;
    }

    /** The turn of the newest run. */
    @JsonIgnoreProperties(ignoreUnknown = true)
    @JsonInclude(JsonInclude.Include.NON_NULL)
    static final class Turn {
        public String runId;
        /** The part of event ids that names this run's prompt: the prompt line's uuid, or its ordinal. */
        public String key;
        public long promptAt;
        public long lastAt;
        /** The newest assistant text. */
        public String lastText;
        public List<String> files = new ArrayList<>();
        /** Distinct replies: key (message id, or line) to [input tokens, output tokens]. */
        public Map<String, long[]> replies = new LinkedHashMap<>();
        /** The last main-conversation line ended the turn (end_turn, task_complete). */
        public boolean ended;
        /** DONE was sent. */
        public boolean closed;
        /**
         * Qwen Code, while the turn is open: the uuids of its records on the active branch, its prompt first, the
         * last record read last; null for other agents and once the turn is closed.
         */
        public List<String> chain;
    }
}
