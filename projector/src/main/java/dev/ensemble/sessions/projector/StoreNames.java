package dev.ensemble.sessions.projector;

/** The projector's state stores (kebab-case; their changelogs are {@code <application.id>-<name>-changelog}). */
public final class StoreNames {
    private StoreNames() {
    }

    /** eventId → occurredAt millis: every event applied that is not about a run, so a second delivery changes nothing. */
    public static final String EVENT_IDS = "event-ids";
    /**
     * {@code <account>/<runId>} → RunRecord (hand-encoded): the eventIds applied for the run (its claim, status reports,
     * engine events), its session once the chains applied its claim, its facts (agent session ids, keepDays,
     * nextRunAt, sourceRef, task, kind) for the deletion workflow and the retirement rules, and its progress (status,
     * times, end report: {@code RunProgress}) for its session's view.
     */
    public static final String RUNS = "runs";
    /**
     * {@code <account>/<sessionId>} → SessionView as the chains last wrote it (its runs and tasks as claimed: their
     * progress is in {@link #RUNS}); its sequence leaves out the engine events and status reports counted in its fill
     * ({@code SessionStore}).
     */
    public static final String SESSION_CHAINS = "session-chains";
    /**
     * {@code <account>/<sessionId>} → SessionFill (hand-encoded, about 110 bytes): the newest engine event's agent
     * session id, context used and size, model and time, the session's last active time, how many engine events and
     * status reports changed the session, and how many of its runs are working, waiting, queued.
     */
    public static final String SESSION_FILLS = "session-fills";
    /** {@code <account>/<sessionId>} → the record time of its last change: sessions whose view is still to be forwarded. */
    public static final String PENDING_VIEWS = "pending-views";
    /** {@code <account>/<computerId>} → its newest document's sequence: rarity tables still to be published. */
    public static final String PENDING_CORPUS = "pending-corpus";
    /** {@code <account>/<taskId>} → the ids of the sessions holding a run for the task, one per line. */
    public static final String TASK_SESSIONS = "task-sessions";
    /** {@code <account>/<computerId>/<sequence>} → a task's analysed document in the rarity table. */
    public static final String CORPUS_DOCS = "corpus-docs";
    /**
     * {@code <account>/<runId>} → the computer and the analysed document of a run claimed with task facts, so a report
     * of the files it changed adds their anchors without analysing the task again (encoded by {@code CorpusProcessor}).
     */
    public static final String CORPUS_CLAIMS = "corpus-claim-docs";
    /**
     * {@value CorpusProcessor#CONFIG_KEY} → the session-choice config in force in this partition (canonical JSON), folded from the
     * log's {@code ChoiceConfigChanged}; absent: the defaults.
     */
    public static final String CHOICE_CONFIG = "choice-config";
    /**
     * {@value DeletionProcessor#SERVING_KEY} → the number of the generation that appends the guard's decisions from this
     * point of the partition on (the newest handover marker's, {@code Generations}); absent: generation 1.
     */
    public static final String SERVING_GENERATION = "serving-generation";
    /** {@code <account>/<awaited runId>} → ParkedEvents. */
    public static final String PARKED_RUNS = "parked-runs";
    /** {@code <account>/<taskId>} → the newest TaskChanged Event of the task (by occurredAt), known or not to a session yet. */
    public static final String TASK_STATES = "task-states";
    /** {@code <account>/<computerId>} → the newest ComputerStatus Event of the computer (by occurredAt). */
    public static final String COMPUTER_STATES = "computer-states";
    /** {@code <account>/<computerId>\n<sessionId>} → "": the sessions that ran on each computer, for prefix scans. */
    public static final String COMPUTER_SESSIONS = "computer-sessions";
    /** {@code <account>/<sessionId>} → DeletionState: the deletion in progress and the newest skip. */
    public static final String DELETION_STATES = "deletion-states";
    /** {@code <account>/<requestId>} → DeletionAudit. */
    public static final String DELETION_AUDIT = "deletion-audit";
    /**
     * {@code <account>/<sessionId>} → RetirementDigest (hand-encoded, 41 bytes): the sequence and SHA-256 of the newest
     * retirement view published.
     */
    public static final String RETIREMENT_DIGESTS = "retirement-digests";

    /**
     * {@code <account>/<conversationKey>} → ConversationView: an assistant conversation (guide §5), its sessions per computer,
     * its ask line, its deletion and each computer's drop ({@code ConversationProcessor}).
     */
    public static final String ASSISTANT_CONVERSATIONS = "assistant-conversations";
    /** {@code <account>/<conversationKey>} → the record time of its last change: conversations whose view is still to be published. */
    public static final String PENDING_ASSISTANT = "pending-assistant";
    /**
     * {@code <account>/<computerId>\n<conversationKey>} → the first accepted request id: a deleted conversation's drop still
     * pending on the computer (asked again when it comes online), for prefix scans.
     */
    public static final String ASSISTANT_DROPS = "assistant-drops";
}
