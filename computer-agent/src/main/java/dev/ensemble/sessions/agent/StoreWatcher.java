package dev.ensemble.sessions.agent;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.nio.file.ClosedWatchServiceException;
import java.nio.file.FileSystems;
import java.nio.file.FileVisitResult;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.SimpleFileVisitor;
import java.nio.file.StandardWatchEventKinds;
import java.nio.file.WatchEvent;
import java.nio.file.WatchKey;
import java.nio.file.WatchService;
import java.nio.file.attribute.BasicFileAttributes;
import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

/**
 * Watches the folders of the agents' stores that hold transcripts ({@link java.nio.file.WatchService}: inotify on
 * Linux) so that a new prompt is imported within moments of being written, not at the next poll. Each folder is
 * registered with the folders under it (to the depth at which the agent keeps transcripts); a folder that appears
 * later is registered as it appears, and the files already in it count as changed.
 *
 * <p>Bursts are coalesced: after the first change it waits until {@code settle} passes without another (at most
 * {@code 4 × settle} in all) and hands the changed files over at once to {@code onChange}, on its own thread. When
 * the watch service loses events (overflow) it calls {@code onOverflow} instead (the caller then looks at every
 * store, as its poll does), logged once. A store folder that does not exist yet is not watched: the poll finds it.
 * Where watching is unavailable, {@link #start()} returns false (logged once) and the poll alone is left.
 *
 * <p>Watched, per agent: Claude Code's projects folder (4 levels), Codex's sessions folder (8 levels), Qwen's
 * {@code projects/} (3), Copilot's {@code session-state/} (2), Gemini's {@code tmp/} (4), Cursor's {@code projects/}
 * (4), OpenCode's data folder itself (its database) and {@code storage/session/} (2).
 */
final class StoreWatcher implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(StoreWatcher.class);

    private final AgentStores stores;
    private final Duration settle;
    private final Consumer<Set<Path>> onChange;
    private final Runnable onOverflow;
    /** Each watched folder's key, and how many more levels under it are watched. */
    private final Map<WatchKey, Watched> keys = new HashMap<>();
    private volatile WatchService service;
    private Thread thread;
    private boolean overflowLogged;

    private record Watched(Path dir, int levels) {
    }

    /**
     * @param settle     how long a burst of changes must be quiet before it is handed over
     * @param onChange   receives the changed files (absolute paths; some may be gone), on the watcher's thread
     * @param onOverflow called when changes were lost, on the watcher's thread
     */
    StoreWatcher(AgentStores stores, Duration settle, Consumer<Set<Path>> onChange, Runnable onOverflow) {
        this.stores = stores;
        this.settle = settle;
        this.onChange = onChange;
        this.onOverflow = onOverflow;
    }

    /** The folders watched for one agent's store folder {@code root}, each with its levels. */
    static List<Map.Entry<Path, Integer>> watchedFolders(String agent, Path root) {
        return switch (agent) {
            case ClaudeParser.AGENT -> List.of(Map.entry(root, AgentDiscovery.CLAUDE_DEPTH - 1));
            case CodexParser.AGENT -> List.of(Map.entry(root, AgentDiscovery.CODEX_DEPTH - 1));
            case QwenParser.AGENT -> List.of(Map.entry(root.resolve("projects"), 2));
            case CopilotParser.AGENT -> List.of(Map.entry(root.resolve("session-state"), 1));
            case GeminiParser.AGENT -> List.of(Map.entry(root.resolve("tmp"), 3));
            case CursorParser.AGENT -> List.of(Map.entry(root.resolve("projects"), 4));
            case OpenCodeParser.AGENT -> List.of(Map.entry(root, 0), Map.entry(root.resolve("storage/session"), 1));
            default -> List.of();
        };
    }

    /**
     * Registers the store folders and starts the watching thread.
     *
     * @return false when watching is unavailable here (logged): only the poll is left
     */
    synchronized boolean start() {
        try {
            service = FileSystems.getDefault().newWatchService();
            for (Map.Entry<String, Path> store : stores.all()) {
                for (Map.Entry<Path, Integer> folder : watchedFolders(store.getKey(), store.getValue())) {
                    Path dir = folder.getKey().toAbsolutePath().normalize();
                    if (Files.isDirectory(dir, LinkOption.NOFOLLOW_LINKS)) {
                        register(dir, folder.getValue(), null);
                    }
                }
            }
        } catch (IOException | UnsupportedOperationException e) {
            log.warn("cannot watch the agent stores ({}); looking for changed transcripts at each poll only", e.toString());
            close();
            return false;
        }
        thread = new Thread(this::loop, "computer-agent-watch");
        thread.setDaemon(true);
        thread.start();
        log.debug("watching {} folders of the agent stores", keys.size());
        return true;
    }

    /** The number of folders watched. */
    synchronized int folders() {
        return keys.size();
    }

    /** Registers {@code dir} and the folders under it to {@code levels} more; its files go to {@code files} when not null. */
    private void register(Path dir, int levels, Set<Path> files) throws IOException {
        Files.walkFileTree(dir, EnumSet.noneOf(java.nio.file.FileVisitOption.class), levels + 1, new SimpleFileVisitor<>() {
            @Override
            public FileVisitResult preVisitDirectory(Path d, BasicFileAttributes attrs) throws IOException {
                int depth = dir.relativize(d).toString().isEmpty() ? 0 : dir.relativize(d).getNameCount();
                WatchKey key = d.register(service, StandardWatchEventKinds.ENTRY_CREATE, StandardWatchEventKinds.ENTRY_MODIFY,
                        StandardWatchEventKinds.ENTRY_DELETE);
                synchronized (StoreWatcher.this) {
                    keys.put(key, new Watched(d, levels - depth));
                }
                return FileVisitResult.CONTINUE;
            }

            @Override
            public FileVisitResult visitFile(Path file, BasicFileAttributes attrs) {
                if (files != null && !attrs.isDirectory()) {
                    files.add(file);
                }
                return FileVisitResult.CONTINUE;
            }

            @Override
            public FileVisitResult visitFileFailed(Path file, IOException e) {
                return FileVisitResult.CONTINUE; // gone meanwhile, or unreadable: the poll reports it
            }
        });
    }

    private void loop() {
        try {
            while (true) {
                WatchKey key = service.take();
                Set<Path> changed = new LinkedHashSet<>();
                boolean overflow = drain(key, changed);
                long until = System.nanoTime() + 4 * settle.toNanos();
                while (System.nanoTime() < until) {
                    WatchKey more = service.poll(settle.toMillis(), TimeUnit.MILLISECONDS);
                    if (more == null) {
                        break; // quiet for settle
                    }
                    overflow |= drain(more, changed);
                }
                if (overflow) {
                    if (!overflowLogged) {
                        overflowLogged = true;
                        log.info("the watch of the agent stores lost changes (too many at once); looking at every store"
                                + " (logged once)");
                    }
                    onOverflow.run();
                } else if (!changed.isEmpty()) {
                    onChange.accept(changed);
                }
            }
        } catch (InterruptedException | ClosedWatchServiceException e) {
            // closed
        } catch (RuntimeException e) {
            log.warn("watching the agent stores stopped; looking for changed transcripts at each poll only", e);
        }
    }

    /** Adds the changes of one key to {@code changed}; true when changes were lost. */
    private boolean drain(WatchKey key, Set<Path> changed) {
        Watched w;
        synchronized (this) {
            w = keys.get(key);
        }
        boolean overflow = false;
        for (WatchEvent<?> event : key.pollEvents()) {
            if (event.kind() == StandardWatchEventKinds.OVERFLOW) {
                overflow = true;
                continue;
            }
            if (w == null) {
                continue;
            }
            Path p = w.dir().resolve((Path) event.context());
            if (event.kind() == StandardWatchEventKinds.ENTRY_CREATE && Files.isDirectory(p, LinkOption.NOFOLLOW_LINKS)) {
                if (w.levels() > 0) {
                    try {
                        register(p, w.levels() - 1, changed); // and what was written in it before it was watched
                    } catch (IOException e) {
                        overflow = true; // it cannot be watched: look at everything this once
                    }
                }
            } else if (!Files.isDirectory(p, LinkOption.NOFOLLOW_LINKS)) {
                changed.add(p);
            }
        }
        if (!key.reset()) {
            synchronized (this) {
                keys.remove(key); // the folder is gone
            }
        }
        return overflow;
    }

    /** Stops watching. */
    @Override
    public synchronized void close() {
        if (service != null) {
            try {
                service.close(); // kept: a register or take after this throws ClosedWatchServiceException
            } catch (IOException e) {
                // nothing more to do
            }
        }
        if (thread != null) {
            thread.interrupt();
            thread = null;
        }
        keys.clear();
    }
}
