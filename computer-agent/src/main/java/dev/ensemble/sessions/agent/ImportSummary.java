package dev.ensemble.sessions.agent;

import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.stream.Collectors;

/**
 * What one import did.
 *
 * @param sessions     agent sessions that got at least one new event in this import
 * @param runs         runs claimed ({@code RunClaimed} events sent)
 * @param engineEvents {@code EngineEvent}s sent
 * @param events       events sent in all (claims, status changes, engine events)
 * @param filesRead    transcripts read (new bytes of a changed file)
 * @param skipped      what was left out, each with its file and reason: whole files ("unchanged",
 *                     "not a transcript", "sub-agent transcript", "unreadable: ...") and single lines of a file that
 *                     was read ("malformed line N: ..."); a malformed line never stops the import
 */
public record ImportSummary(int sessions, int runs, int engineEvents, int events, int filesRead, List<Skip> skipped) {
    public ImportSummary {
        skipped = List.copyOf(skipped);
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
     * One line, e.g. {@code imported 6 sessions, 42 runs, 247 engine events from 6 files; 2 files skipped
     * (1 not a transcript, 1 unchanged); 1 malformed line skipped}.
     */
    @Override
    public String toString() {
        StringBuilder b = new StringBuilder("imported ")
                .append(plural(sessions, "session")).append(", ")
                .append(plural(runs, "run")).append(", ")
                .append(plural(engineEvents, "engine event")).append(" from ")
                .append(plural(filesRead, "file"));
        List<Skip> files = skippedFiles();
        if (!files.isEmpty()) {
            b.append("; ").append(plural(files.size(), "file")).append(" skipped (")
                    .append(skippedFilesByKind().entrySet().stream().map(e -> e.getValue() + " " + e.getKey())
                            .collect(Collectors.joining(", ")))
                    .append(')');
        }
        List<Skip> lines = skippedLines();
        if (!lines.isEmpty()) {
            b.append("; ").append(plural(lines.size(), "malformed line")).append(" skipped");
        }
        return b.toString();
    }

    private static String plural(long n, String what) {
        return n + " " + what + (n == 1 ? "" : "s");
    }
}
