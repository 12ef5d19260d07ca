package dev.ensemble.sessions.deploy;

import dev.ensemble.sessions.agent.ImportProgress;
import dev.ensemble.sessions.agent.ImportSummary;
import me.tongfei.progressbar.ProgressBar;
import me.tongfei.progressbar.ProgressBarBuilder;
import me.tongfei.progressbar.ProgressBarStyle;

import java.io.PrintStream;
import java.nio.file.Path;

/**
 * Draws a progress bar (in MiB read) while an import reads more than {@value #MIN_BYTES} bytes, and prints the
 * import's one-line summary when it read or sent anything (a session marked idle after 30 minutes sends an event
 * without reading a file), and always for the first import (so a restart that finds nothing new says so:
 * {@code imported nothing new (12 transcript files unchanged)}). Later imports that neither read nor sent anything (the
 * importer polls every few seconds) stay quiet. This line is the only one: the launcher's logging leaves out the
 * computer agent's log line of the same summary.
 */
final class ImportProgressBar implements ImportProgress {
    static final long MIN_BYTES = 2L * 1024 * 1024;
    private final PrintStream out;
    private ProgressBar bar;
    private boolean announced;
    private boolean first = true;

    ImportProgressBar(PrintStream out) {
        this.out = out;
    }

    @Override
    public synchronized void onStart(int files, long bytes) {
        announced = files > 0;
        if (bytes >= MIN_BYTES) {
            bar = new ProgressBarBuilder().setTaskName("Importing " + files + " files").setInitialMax(bytes)
                    .setUnit(" MiB", 1024 * 1024).setStyle(ProgressBarStyle.ASCII).setConsumer(
                            new me.tongfei.progressbar.ConsoleProgressBarConsumer(out)).build();
        }
    }

    @Override
    public synchronized void onFile(Path file, long bytes) {
        if (bar != null) {
            bar.stepBy(bytes);
        }
    }

    @Override
    public synchronized void onDone(ImportSummary summary) {
        if (bar != null) {
            bar.stepTo(bar.getMax());
            bar.close();
            bar = null;
        }
        // one write: the summary and its store lines stay together whatever else prints (e.g. up's Ready block)
        StringBuilder text = new StringBuilder();
        if (first || announced || summary.events() > 0 || !summary.skippedFiles().isEmpty() && summary.filesRead() > 0) {
            text.append(line(summary)).append(System.lineSeparator());
        }
        if (first) {
            // every agent store: what it holds and what was imported from it, or why it cannot be read
            for (String store : summary.storeLines()) {
                text.append("  ").append(store).append(System.lineSeparator());
            }
        }
        if (text.length() > 0) {
            out.print(text);
            out.flush();
        }
        announced = false;
        first = false;
    }

    @Override
    public synchronized void onDoneQuietly(ImportSummary summary) {
        if (bar != null) {
            bar.close();
            bar = null;
        }
        announced = false;
        first = false;
    }

    /**
     * The summary's line: {@link ImportSummary#toString()}, or for an import that sent nothing,
     * {@code imported nothing new (3 transcript files unchanged); 1 file skipped (1 sub-agent transcript)}.
     */
    static String line(ImportSummary summary) {
        if (summary.events() > 0 || summary.filesRead() > 0) {
            return summary.toString();
        }
        java.util.Map<String, Long> kinds = new java.util.TreeMap<>(summary.skippedFilesByKind());
        Long unchanged = kinds.remove("unchanged");
        StringBuilder b = new StringBuilder("imported nothing new");
        if (unchanged != null) {
            b.append(" (").append(unchanged).append(unchanged == 1 ? " transcript file" : " transcript files").append(" unchanged)");
        } else if (kinds.isEmpty()) {
            b.append(" (no transcript files found)");
        }
        if (!kinds.isEmpty()) {
            long n = kinds.values().stream().mapToLong(Long::longValue).sum();
            b.append("; ").append(n).append(n == 1 ? " file" : " files").append(" skipped (")
                    .append(kinds.entrySet().stream().map(e -> e.getValue() + " " + e.getKey())
                            .collect(java.util.stream.Collectors.joining(", ")))
                    .append(')');
        }
        return b.toString();
    }
}
