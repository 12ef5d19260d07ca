package dev.ensemble.sessions.agent;

import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.stream.Collectors;

/**
 * What one import did.
 *
 * @param sessions     agent sessions imported: that got events from new lines (runs, replies, status); a session
 *                     whose open run was only closed by the 30-minute rule is not one (see {@code idleClosed})
 * @param runs         runs claimed ({@code RunClaimed} events sent)
 * @param engineEvents {@code EngineEvent}s sent
 * @param events       events sent in all (claims, status changes, engine events)
 * @param filesRead    files read: every changed file (size or time not as last read) that was read or tried, whatever
 *                     it turned out to hold (new lines, nothing new, not a transcript, unreadable): the count the
 *                     progress bar shows ({@link ImportProgress#onStart}); files left out unread (unchanged, a
 *                     sub-agent's by name) are not counted
 * @param idleClosed   runs closed by the 30-minute rule without a new line
 * @param gone         sessions whose transcript is gone from disk, marked so
 * @param skipped      what was left out, each with its file and reason: whole files ("unchanged",
 *                     "not a transcript", "sub-agent transcript", "unreadable: ...") and single lines of a file that
 *                     was read ("malformed line N: ..."); a malformed line never stops the import
 */
public record ImportSummary(int sessions, int runs, int engineEvents, int events, int filesRead, List<Skip> skipped,
                            int idleClosed, int gone, List<Store> stores) {
    public ImportSummary {
        skipped = List.copyOf(skipped);
        stores = List.copyOf(stores);
    }

    /** A summary without idle closes, gone transcripts or per-store figures. */
    public ImportSummary(int sessions, int runs, int engineEvents, int events, int filesRead, List<Skip> skipped) {
        this(sessions, runs, engineEvents, events, filesRead, skipped, 0, 0, List.of());
    }

    /**
     * What one agent store held and what this import took from it.
     */
    public static final class Store {
        private final String agent;
        private final Path root;
        private final String name;
        boolean present;
        int transcripts;
        int read;
        int sessions;
        int runs;
        int idleClosed;
        String unreadable;

        Store(String agent, Path root) {
            this.agent = agent;
            this.root = root;
            this.name = AgentStores.displayName(agent, root);
        }

        /** A store's figures as given (see the accessors). */
        public Store(String agent, Path root, boolean present, int transcripts, int read, int sessions, int runs,
                     int idleClosed, String unreadable) {
            this(agent, root);
            this.present = present;
            this.transcripts = transcripts;
            this.read = read;
            this.sessions = sessions;
            this.runs = runs;
            this.idleClosed = idleClosed;
            this.unreadable = unreadable;
        }

        Store done() {
            return this;
        }

        /** The agent's standard name ({@code claude-code}, {@code gemini-cli}, ...). */
        public String agent() {
            return agent;
        }

        /** The name a person knows the store's agent by: "Claude Code", ..., "kimi-cli" for {@code ~/.kimi}. */
        public String name() {
            return name;
        }

        /** The store folder. */
        public Path root() {
            return root;
        }

        /** Whether the folder exists. */
        public boolean present() {
            return present;
        }

        /** Agent sessions found in it (sub-agents' transcripts not counted). */
        public int transcripts() {
            return transcripts;
        }

        /** Files read this time (changed; see {@link ImportSummary#filesRead()}). */
        public int read() {
            return read;
        }

        /** Sessions imported this time (events from new lines). */
        public int sessions() {
            return sessions;
        }

        /** Runs claimed this time. */
        public int runs() {
            return runs;
        }

        /** Sessions whose open run was closed by the 30-minute rule this time. */
        public int idleClosed() {
            return idleClosed;
        }

        /** Why the store could not be read, or null. */
        public String unreadable() {
            return unreadable;
        }

        /**
         * One line, e.g. {@code Gemini CLI (/home/ana/.gemini): 2 sessions, imported 2 (6 runs)} or
         * {@code OpenCode (/home/ana/.local/share/opencode): unreadable: database is locked}.
         */
        @Override
        public String toString() {
            StringBuilder b = new StringBuilder(name).append(" (").append(root).append("): ");
            if (unreadable != null) {
                return b.append("unreadable: ").append(unreadable).toString();
            }
            if (!present) {
                return b.append("not found").toString();
            }
            b.append(plural(transcripts, "session"));
            if (sessions > 0) {
                b.append(", imported ").append(sessions).append(" (").append(plural(runs, "new run")).append(')');
            } else if (read > 0) {
                b.append(", ").append(plural(read, "file")).append(" checked, nothing new");
            }
            if (idleClosed > 0) {
                b.append(", ").append(idleClosed).append(idleClosed == 1 ? " run" : " runs")
                        .append(" marked done after 30 minutes without change");
            }
            return b.toString();
        }
    }

    /**
     * One file or line left out.
     *
     * @param file   the transcript
     * @param reason "unchanged", "not a transcript", "sub-agent transcript", "unreadable: ..." for a whole file;
     *               "malformed line N: ..." (N counted from 1) for a line
     */
    public record Skip(Path file, String reason) {
        static final String MALFORMED = "malformed line";

        /** Whether only one line was left out (the rest of the file was read). */
        public boolean isLine() {
            return reason.startsWith(MALFORMED);
        }

        /** The reason without its detail: "unchanged", "not a transcript", "unreadable", "malformed line", ... */
        public String kind() {
            if (isLine()) {
                return MALFORMED;
            }
            int colon = reason.indexOf(':');
            return colon < 0 ? reason : reason.substring(0, colon);
        }
    }

    /** The whole files left out. */
    public List<Skip> skippedFiles() {
        return skipped.stream().filter(s -> !s.isLine()).toList();
    }

    /** The malformed lines left out. */
    public List<Skip> skippedLines() {
        return skipped.stream().filter(Skip::isLine).toList();
    }

    /** Whole files left out, by {@link Skip#kind()}. */
    public Map<String, Long> skippedFilesByKind() {
        return skippedFiles().stream().collect(Collectors.groupingBy(Skip::kind, TreeMap::new, Collectors.counting()));
    }

    /**
     * One line, e.g. {@code imported 6 sessions, 42 runs, 247 engine events from 7 files; 2 files skipped
     * (1 not a transcript, 1 unchanged); 1 malformed line skipped}. An import that imported no session says what it
     * did instead: {@code 5 files checked, nothing new; 3 runs marked done after 30 minutes without change},
     * {@code nothing new (12 files unchanged); 2 files skipped (2 sub-agent transcript)}.
     */
    @Override
    public String toString() {
        List<String> parts = new java.util.ArrayList<>();
        boolean imported = sessions > 0 || runs > 0;
        Map<String, Long> kinds = new TreeMap<>(skippedFilesByKind());
        if (imported) {
            parts.add("imported " + plural(sessions, "session") + ", " + plural(runs, "run") + ", "
                    + plural(engineEvents, "engine event") + " from " + plural(filesRead, "file"));
        } else if (filesRead > 0) {
            parts.add(plural(filesRead, "file") + " checked, nothing new");
            kinds.remove("unchanged");
        } else if (idleClosed == 0 && gone == 0) {
            Long unchanged = kinds.remove("unchanged");
            parts.add(unchanged == null ? "nothing new" : "nothing new (" + plural(unchanged, "file") + " unchanged)");
        } else {
            kinds.remove("unchanged");
        }
        if (idleClosed > 0) {
            parts.add(plural(idleClosed, "run") + " marked done after 30 minutes without change");
        }
        if (gone > 0) {
            parts.add(plural(gone, "session") + " whose transcript is gone from disk marked gone");
        }
        if (!kinds.isEmpty()) {
            long n = kinds.values().stream().mapToLong(Long::longValue).sum();
            parts.add(plural(n, "file") + " skipped (" + kinds.entrySet().stream().map(e -> e.getValue() + " " + e.getKey())
                    .collect(Collectors.joining(", ")) + ")");
        }
        List<Skip> lines = skippedLines();
        if (!lines.isEmpty()) {
            parts.add(plural(lines.size(), "malformed line") + " skipped");
        }
        return String.join("; ", parts);
    }

    /** One line per agent store: what it held and what was imported from it, or why it could not be read. */
    public List<String> storeLines() {
        return stores.stream().map(Store::toString).toList();
    }

    private static String plural(long n, String what) {
        return n + " " + what + (n == 1 ? "" : "s");
    }
}
