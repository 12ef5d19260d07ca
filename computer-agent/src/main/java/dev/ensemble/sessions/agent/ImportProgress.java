package dev.ensemble.sessions.agent;

import java.nio.file.Path;

/**
 * Listener for one import, so a command line can draw a progress bar. Every method has a no-op default; calls
 * come from the importing thread.
 */
public interface ImportProgress {
    /** No-op listener. */
    ImportProgress NONE = new ImportProgress() {
    };

    /**
     * The import is about to read {@code files} changed files holding {@code bytes} new bytes in total
     * (unchanged files are not counted).
     */
    default void onStart(int files, long bytes) {
    }

    /** One changed file was read: {@code bytes} new bytes of it. */
    default void onFile(Path file, long bytes) {
    }

    /** The import ended (its state saved). */
    default void onDone(ImportSummary summary) {
    }

    /**
     * The import ended with nothing new to say (it only met the same unreadable files again, already named): close
     * what {@link #onStart} opened, say nothing.
     */
    default void onDoneQuietly(ImportSummary summary) {
    }
}
