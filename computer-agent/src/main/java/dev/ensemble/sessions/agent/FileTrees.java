package dev.ensemble.sessions.agent;

import java.io.IOException;
import java.nio.file.FileVisitResult;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.SimpleFileVisitor;
import java.nio.file.attribute.BasicFileAttributes;
import java.util.ArrayList;
import java.util.List;

/**
 * Deleting files and folder trees on this computer, links as links (never followed), each path removed noted: the
 * agents' stores ({@link AgentStoreDeleter}) and the assistant chats' own folders share it.
 */
public final class FileTrees {
    private FileTrees() {
    }

    /**
     * Deletes {@code dir} and what it holds; a link or a file there is removed alone. Every path removed is added to
     * {@code removed} (absolute), contents before their folder.
     *
     * @return whether anything was there
     */
    public static boolean deleteTree(Path dir, List<String> removed) throws IOException {
        if (!Files.isDirectory(dir, LinkOption.NOFOLLOW_LINKS)) {
            return deleteIfThere(dir, removed); // a link or a file where the folder would be: only it goes
        }
        List<Path> inside = new ArrayList<>();
        Files.walkFileTree(dir, new SimpleFileVisitor<>() {
            @Override
            public FileVisitResult visitFile(Path file, BasicFileAttributes attrs) {
                inside.add(file);
                return FileVisitResult.CONTINUE;
            }

            @Override
            public FileVisitResult postVisitDirectory(Path d, IOException e) throws IOException {
                if (e != null) {
                    throw e;
                }
                inside.add(d);
                return FileVisitResult.CONTINUE;
            }
        });
        for (Path p : inside) {
            deleteIfThere(p, removed);
        }
        return true;
    }

    /** Deletes {@code p} (a link as a link) when it is there; whether it was. Gone meanwhile is gone. */
    public static boolean deleteIfThere(Path p, List<String> removed) throws IOException {
        try {
            if (Files.deleteIfExists(p)) {
                removed.add(p.toAbsolutePath().toString());
                return true;
            }
        } catch (NoSuchFileException gone) {
            // removed meanwhile: gone is what was asked
        }
        return false;
    }
}
