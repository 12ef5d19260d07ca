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
 * import's one-line summary when it read anything. Small incremental imports stay quiet.
 */
final class ImportProgressBar implements ImportProgress {
    static final long MIN_BYTES = 2L * 1024 * 1024;
    private final PrintStream out;
    private ProgressBar bar;
    private boolean announced;

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
        if (announced || !summary.skippedFiles().isEmpty() && summary.filesRead() > 0) {
            out.println(summary);
        }
        announced = false;
    }
}
