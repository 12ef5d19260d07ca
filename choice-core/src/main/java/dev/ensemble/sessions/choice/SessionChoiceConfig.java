package dev.ensemble.sessions.choice;

import com.fasterxml.jackson.annotation.JsonPropertyOrder;

import java.util.List;

/**
 * Every number and word list of the guide's §4 ("Tuning", config.ts), as one versioned JSON document with its
 * defaults in code ({@link #defaults()}). Loaded, merged and validated by {@link ConfigLoader}; watched by
 * {@link ConfigWatcher}. The JSON form is exactly this record tree (field names as below).
 *
 * @param version     changes with every change of the document (guide: "Change version with every change")
 * @param enabled     the person's switch Settings → Agents → Agent sessions → Continue a fitting agent session
 *                    ({@code orchestration.linkedSessions}); off → every run starts a new session (note {@code disabled})
 * @param warmMinutes a session active within this many minutes is warm (signal {@code warm}); minutes, ≥ 0
 * @param importedSessions beyond the guide: whether a person's own agent sessions (imported from the agents' stores)
 *                    are candidates ({@link ImportedSessionsConfig})
 */
@JsonPropertyOrder({"version", "enabled", "weights", "bands", "size", "limits", "warmMinutes", "text", "importedSessions"})
public record SessionChoiceConfig(String version, boolean enabled, Weights weights, Bands bands, Size size,
                                  Limits limits, int warmMinutes, Text text, ImportedSessionsConfig importedSessions) {

    /** The version of the built-in defaults. */
    public static final String DEFAULT_VERSION = "builtin-2026-12.2";

    /** The guide's document, with a person's own imported sessions as candidates (the default). */
    public SessionChoiceConfig(String version, boolean enabled, Weights weights, Bands bands, Size size, Limits limits,
                               int warmMinutes, Text text) {
        this(version, enabled, weights, bands, size, limits, warmMinutes, text, ImportedSessionsConfig.DEFAULT);
    }

    public SessionChoiceConfig {
        importedSessions = importedSessions == null ? ImportedSessionsConfig.DEFAULT : importedSessions;
    }

    /**
     * A person's own agent sessions, imported from Claude Code, Codex and the other agents' stores (kind
     * {@code TERMINAL_CHAT}), as candidates (beyond the guide, whose chats never are; {@link ImportedSessions}).
     *
     * @param candidates true (the default): such a session is a candidate like a task session, its prompts giving its
     *                   task's facts, for a run of its own account in its computer's own space ({@code local:<computer>});
     *                   false: the guide's rule, chats are never candidates
     */
    @JsonPropertyOrder({"candidates"})
    public record ImportedSessionsConfig(boolean candidates) {
        /** Imported sessions are candidates. */
        public static final ImportedSessionsConfig DEFAULT = new ImportedSessionsConfig(true);
    }

    /**
     * Weights of the score (guide §4 "Score"): the score is the sum of weight × signal.
     *
     * @param anchor    points per shared anchor
     * @param anchorMax cap of the anchor part ("3 per anchor up to 6")
     * @param topic     multiplies the topic cosine (0–1)
     * @param newWork   added (negative) when the title reads as new work and no link or anchor ties it
     * @param fillSoft  added when the session fills more than {@code size.soft} of its window
     * @param longChain added when the fill is unknown and the session has more than {@code size.longChainTasks} tasks
     * @param issueKey  points per shared issue or pull-request key ({@code ABC-42}, {@code #123}, {@code CVE-…});
     *                  beyond the guide, which counts them as anchors: the default is the guide's anchor weight (3).
     *                  Counted with the other anchors under the cap {@code anchorMax}
     */
    @JsonPropertyOrder({"link", "deliverable", "meeting", "parentPage", "anchor", "anchorMax", "topic", "followUp",
            "newWork", "warm", "fillSoft", "longChain", "issueKey"})
    public record Weights(double link, double deliverable, double meeting, double parentPage, double anchor,
                          double anchorMax, double topic, double followUp, double newWork, double warm,
                          double fillSoft, double longChain, double issueKey) {
        /** The guide's twelve weights, issue keys weighing as any anchor. */
        public Weights(double link, double deliverable, double meeting, double parentPage, double anchor,
                       double anchorMax, double topic, double followUp, double newWork, double warm,
                       double fillSoft, double longChain) {
            this(link, deliverable, meeting, parentPage, anchor, anchorMax, topic, followUp, newWork, warm, fillSoft,
                    longChain, anchor);
        }

        /** A copy with another issue-key weight. */
        public Weights withIssueKey(double w) {
            return new Weights(link, deliverable, meeting, parentPage, anchor, anchorMax, topic, followUp, newWork, warm,
                    fillSoft, longChain, w);
        }
    }

    /** Bands (guide §4 "Bands"): a best score ≥ confident continues; ≥ unsure is recorded as unsure; below as below. */
    @JsonPropertyOrder({"confident", "unsure"})
    public record Bands(double confident, double unsure) {
    }

    /**
     * Size rules (guide §4 "Score"): fills are fractions of the context window (0–1).
     *
     * @param soft           more than this fill scores {@code weights.fillSoft}
     * @param hard           more than this fill is too full to continue
     * @param longChainTasks unknown fill and more than this many tasks scores {@code weights.longChain}
     * @param hardChainTasks unknown fill and more than this many tasks is too full to continue
     */
    @JsonPropertyOrder({"soft", "hard", "longChainTasks", "hardChainTasks"})
    public record Size(double soft, double hard, int longChainTasks, int hardChainTasks) {
    }

    /**
     * Limits (guide §4 "Candidates", "Signals", "Cost").
     *
     * @param maxAgeDays              candidates were active within this many days
     * @param candidates              at most this many candidates, newest first
     * @param corpusTasks             the rarity table covers the person's last this-many tasks on the computer
     * @param corpusTtlMinutes        how long a service shell may keep a rarity table it built (the core keeps
     *                                {@link CorpusStats} incrementally and does not read it)
     * @param corpusFieldChars        "the first part" of descriptions and pages that enters the rarity table, in chars
     * @param anchorMaxDocShare       an anchor in more than this share of the person's tasks does not count (0–1)
     * @param anchorMaxCandidateShare an anchor shared with more than this share of the candidates does not count (0–1)
     * @param topicMinShared          topic counts only with at least this many shared terms that are not common
     * @param topicCommonShare        a term in more than this share of the person's tasks is common (0–1)
     * @param minCorpus               below this many tasks in the corpus, topic counts proportionally less
     * @param timeBudgetMs            word matching (anchors, topic) stops after this many milliseconds of a decision
     */
    @JsonPropertyOrder({"maxAgeDays", "candidates", "corpusTasks", "corpusTtlMinutes", "corpusFieldChars",
            "anchorMaxDocShare", "anchorMaxCandidateShare", "topicMinShared", "topicCommonShare", "minCorpus", "timeBudgetMs"})
    public record Limits(int maxAgeDays, int candidates, int corpusTasks, int corpusTtlMinutes, int corpusFieldChars,
                         double anchorMaxDocShare, double anchorMaxCandidateShare, int topicMinShared,
                         double topicCommonShare, int minCorpus, long timeBudgetMs) {
    }

    /**
     * Word lists and text weights (guide §4 "Signals").
     *
     * @param extraStopwords dropped in addition to Lucene's English stop words (lower-case words)
     * @param followUp       regular expressions (Java syntax, matched case-insensitively with find()) on the new task's title
     * @param newWork        regular expressions on the new task's title that read as new work
     * @param followUpLabels labels (case-insensitive, exact) that mark a follow-up
     * @param commonFiles    file names every repository has; never an anchor (case-insensitive, by file name)
     * @param notIssueKeys   upper-case prefixes that look like issue keys but are not (UTF-8, SHA-256, …)
     * @param fieldWeights   how much each field of a task counts in its term vector
     * @param phraseWeight   how much a two-word phrase of neighbouring terms counts, relative to a word
     * @param automated      beyond the guide: regular expressions (case-insensitive, find()) on the new task's title
     *                       that mark automated work (a dependency bump, a release commit); such a task is no
     *                       person's thread of work and starts a new session without scoring (note
     *                       {@code automated}). Empty by default (the guide's behaviour)
     */
    @JsonPropertyOrder({"extraStopwords", "followUp", "newWork", "followUpLabels", "commonFiles", "notIssueKeys",
            "fieldWeights", "phraseWeight", "automated"})
    public record Text(List<String> extraStopwords, List<String> followUp, List<String> newWork,
                       List<String> followUpLabels, List<String> commonFiles, List<String> notIssueKeys,
                       FieldWeights fieldWeights, double phraseWeight, List<String> automated) {
        public Text {
            extraStopwords = List.copyOf(extraStopwords);
            followUp = List.copyOf(followUp);
            newWork = List.copyOf(newWork);
            followUpLabels = List.copyOf(followUpLabels);
            commonFiles = List.copyOf(commonFiles);
            notIssueKeys = List.copyOf(notIssueKeys);
            automated = automated == null ? List.of() : List.copyOf(automated);
        }

        /** The guide's word lists, without automated-work patterns. */
        public Text(List<String> extraStopwords, List<String> followUp, List<String> newWork,
                    List<String> followUpLabels, List<String> commonFiles, List<String> notIssueKeys,
                    FieldWeights fieldWeights, double phraseWeight) {
            this(extraStopwords, followUp, newWork, followUpLabels, commonFiles, notIssueKeys, fieldWeights, phraseWeight,
                    List.of());
        }
    }

    /** Field weights of the term vector: title 3×, labels 2×, the rest 1× (guide §4 "topic"). */
    @JsonPropertyOrder({"title", "labels", "page", "description", "reports", "instructions"})
    public record FieldWeights(double title, double labels, double page, double description, double reports,
                               double instructions) {
    }

    /** The guide's defaults, with this project's default word lists (documented in the module README). */
    public static SessionChoiceConfig defaults() {
        return DEFAULTS;
    }

    /** A copy with another version string. */
    public SessionChoiceConfig withVersion(String v) {
        return new SessionChoiceConfig(v, enabled, weights, bands, size, limits, warmMinutes, text, importedSessions);
    }

    /** A copy with other weights. */
    public SessionChoiceConfig withWeights(Weights w) {
        return new SessionChoiceConfig(version, enabled, w, bands, size, limits, warmMinutes, text, importedSessions);
    }

    /** A copy with other bands. */
    public SessionChoiceConfig withBands(Bands b) {
        return new SessionChoiceConfig(version, enabled, weights, b, size, limits, warmMinutes, text, importedSessions);
    }

    /** A copy with other size rules. */
    public SessionChoiceConfig withSize(Size s) {
        return new SessionChoiceConfig(version, enabled, weights, bands, s, limits, warmMinutes, text, importedSessions);
    }

    /** A copy with other limits. */
    public SessionChoiceConfig withLimits(Limits l) {
        return new SessionChoiceConfig(version, enabled, weights, bands, size, l, warmMinutes, text, importedSessions);
    }

    /** A copy with imported sessions as candidates or not ({@code importedSessions.candidates}). */
    public SessionChoiceConfig withImportedSessions(ImportedSessionsConfig i) {
        return new SessionChoiceConfig(version, enabled, weights, bands, size, limits, warmMinutes, text, i);
    }

    /** A copy with the switch set. */
    public SessionChoiceConfig withEnabled(boolean e) {
        return new SessionChoiceConfig(version, e, weights, bands, size, limits, warmMinutes, text, importedSessions);
    }

    /** The SHA-256 (lower-case hex) of this config's canonical JSON; see {@link ConfigLoader#hash}. */
    public String hash() {
        return ConfigLoader.hash(this);
    }

    private static final SessionChoiceConfig DEFAULTS = new SessionChoiceConfig(
            DEFAULT_VERSION, true,
            new Weights(10, 3, 3, 2, 3, 6, 6, 1, -1, 1, -2, -2),
            new Bands(6, 3),
            new Size(0.40, 0.70, 8, 15),
            new Limits(30, 20, 2000, 60, 1000, 0.20, 0.5, 2, 0.20, 50, 3000),
            60,
            new Text(
                    // common English words beyond Lucene's EnglishAnalyzer set (which has only 33), plus task chatter
                    List.of("i", "me", "my", "we", "our", "us", "you", "your", "he", "him", "his", "she", "her", "its",
                            "them", "what", "which", "who", "whom", "am", "were", "been", "being", "have", "has",
                            "had", "do", "does", "did", "doing", "would", "should", "could", "can", "may", "might",
                            "must", "shall", "from", "up", "down", "out", "off", "over", "under", "again", "further",
                            "once", "here", "when", "where", "why", "how", "all", "any", "both", "each", "few",
                            "more", "most", "other", "some", "so", "than", "too", "very", "just", "also", "only",
                            "own", "same", "now", "about", "above", "after", "before", "between", "through",
                            "during", "because", "while", "until", "via", "etc", "e.g", "i.e", "please", "thanks",
                            "don't", "doesn't", "isn't", "can't", "won't", "it's", "let's", "need", "needs"),
                    List.of("\\bfollow[- ]?ups?\\b", "\\bcontinu(e|es|ed|ing|ation)\\b", "\\b(address|addressing|fix) (the )?(review|pr) (comments?|feedback)\\b",
                            "\\bpart ?([2-9]|ii+)\\b", "\\[[2-9]/\\d+\\]", "\\b(remaining|rest of( the)?|leftover|missed)\\b",
                            "\\b(revert|reapply|re-apply|backport)\\b", "\\b(again|still)\\b", "\\bsecond (pass|round|attempt)\\b",
                            "\\b(round|phase|step) ?[2-9]\\b"),
                    List.of("^\\s*(add|adds|added|create|creates|introduce|introduces|implement|implements|new|initial|start|set ?up|scaffold|bootstrap)\\b",
                            "\\bfrom scratch\\b", "\\bnew (feature|project|module|service|page|command|api|tool)\\b", "\\bpart ?(1|i)\\b", "\\[1/\\d+\\]"),
                    List.of("follow-up", "followup", "follow-ups", "follow up", "continuation", "fixup", "recommit", "part 2", "part 3", "part 4", "part 5"),
                    List.of("package.json", "package-lock.json", "yarn.lock", "pnpm-lock.yaml", "tsconfig.json",
                            "readme.md", "readme", "readme.txt", "index.ts", "index.tsx", "index.js", "index.html",
                            "main.ts", "main.js", "pom.xml", "build.gradle", "build.gradle.kts", "settings.gradle",
                            "settings.gradle.kts", "gradle.properties", "gradlew", "gradlew.bat", ".gitignore",
                            ".gitattributes", ".editorconfig", "license", "license.md", "license.txt", "notice",
                            "notice.txt", "makefile", "dockerfile", "docker-compose.yml", "docker-compose.yaml",
                            "changelog.md", "contributing.md", "cargo.toml", "cargo.lock", "go.mod", "go.sum",
                            "requirements.txt", "setup.py", "setup.cfg", "pyproject.toml", "__init__.py", "mod.rs",
                            "lib.rs", "main.rs", "agents.md", "claude.md", "gemini.md", ".travis.yml", "jenkinsfile"),
                    List.of("UTF", "SHA", "ISO", "TLS", "SSL", "SASL", "MD", "AES", "RSA", "HTTP", "TCP", "UDP", "IPV",
                            "X", "UTC", "GMT", "JSR", "PEP", "RFC", "LOG4J", "SLF4J", "JDK", "JAVA", "PY", "ES", "ECMA"),
                    new FieldWeights(3, 2, 1, 1, 1, 1),
                    1.5));
}
