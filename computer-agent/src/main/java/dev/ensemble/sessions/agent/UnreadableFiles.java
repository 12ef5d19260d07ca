package dev.ensemble.sessions.agent;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * What the computer agent says of the files it cannot read, import after import: each file and its reason once (again
 * only when the reason changes, or after it could be read), and an import's summary only when it says more than the
 * same unreadable files again. A file that cannot be read is tried at every import (it is not taken for gone), so
 * without this every poll repeated "N files skipped (N unreadable)" without naming them. Not thread-safe: one import
 * at a time.
 */
final class UnreadableFiles {
    private final Map<Path, String> said = new HashMap<>();

    /** What an import of {@link #look} gives: the lines to say of unreadable files, and whether its summary is worth a line. */
    record Said(List<String> lines, boolean summary) {
    }

    /**
     * @param summary an import's summary
     * @param whole   whether that import looked at every store (then a file it no longer names as unreadable is
     *                forgotten, and said again should it become unreadable again)
     */
    Said look(ImportSummary summary, boolean whole) {
        Map<Path, String> now = new HashMap<>();
        for (ImportSummary.Skip s : summary.skippedFiles()) {
            if (s.kind().equals("unreadable")) {
                now.put(s.file(), s.reason());
            }
        }
        List<String> lines = new ArrayList<>();
        now.forEach((file, reason) -> {
            if (!reason.equals(said.put(file, reason))) {
                lines.add(file + " is skipped, " + reason.lines().findFirst().orElse(reason)
                        + " (tried again at each import; said again only if this changes)");
            }
        });
        if (whole) {
            said.keySet().retainAll(now.keySet());
        }
        lines.sort(null);
        // worth a line: events, or a file read that was not just one of the same unreadable files again
        boolean summaryWorthSaying = summary.events() > 0 || !lines.isEmpty() || summary.filesRead() > now.size();
        return new Said(lines, summaryWorthSaying);
    }
}
