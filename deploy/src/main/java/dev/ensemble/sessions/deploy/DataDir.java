package dev.ensemble.sessions.deploy;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.List;
import java.util.Set;

/**
 * The local system's data folder (default {@code ~/.ensemble-sessions}, where {@code ~} is {@code $HOME}; owner-only,
 * see {@link #createPrivate()}):
 * {@code kafka/} (the broker's log), {@code state/} (the services' stores), {@code token} (the local
 * person's bearer token), {@code tokens.json} (hashes of every token; both owner-only), {@code kafka-client.properties}
 * (the embedded broker's client credentials, owner-only, {@link LocalKafka#CLIENT_PROPERTIES}), {@code computer-id},
 * {@code import-state.json}, and {@code endpoints.json} (where the running system listens).
 */
record DataDir(Path root) {
    static final ObjectMapper JSON = new ObjectMapper();
    private static final Logger LOG = LoggerFactory.getLogger(DataDir.class);
    private static final Set<PosixFilePermission> OWNER_ONLY_FOLDER = PosixFilePermissions.fromString("rwx------");

    /** The data folder given by a command's {@code --data-dir} option, or the default ({@link #defaultRoot()}) when null. */
    static DataDir of(Path option) {
        if (option != null && option.toString().isBlank()) {
            // Path.of("") is the working directory: a mistyped --data-dir= would make it the data folder
            throw new IllegalArgumentException("--data-dir is empty: give the data folder's path (default ~/.ensemble-sessions)");
        }
        return new DataDir(option == null ? defaultRoot() : option.toAbsolutePath());
    }

    /** {@code $HOME} (the environment's, which a user may point elsewhere), else Java's user.home. */
    static Path home() {
        String h = System.getenv("HOME");
        return Path.of(h != null && !h.isBlank() ? h : System.getProperty("user.home"));
    }

    static Path defaultRoot() {
        return home().resolve(".ensemble-sessions");
    }

    Path state(String service) {
        return root.resolve("state").resolve(service);
    }

    Path token() {
        return root.resolve("token");
    }

    /** The scrape token of {@code GET /metrics} (owner-only; kept across restarts). */
    Path metricsToken() {
        return root.resolve("metrics-token");
    }

    /** This computer's own token (role computer, owner-only), for the {@code assistant-turn} command. */
    Path computerToken() {
        return root.resolve("computer-token");
    }

    Path tokens() {
        return root.resolve("tokens.json");
    }

    Path computerId() {
        return root.resolve("computer-id");
    }

    Path importState(String name) {
        return root.resolve(name);
    }

    /**
     * The computer agent's assistant state: {@code assistant-sessions.json}, the chats' folders {@code assistant/} and
     * their lock files {@code assistant-locks/} (the data folder itself, where {@code import-state.json} is).
     */
    Path assistantState() {
        return root;
    }

    Path endpoints() {
        return root.resolve("endpoints.json");
    }

    /** @throws IOException when the data folder's path is a file */
    void requireNotAFile() throws IOException {
        if (Files.exists(root) && !Files.isDirectory(root)) {
            throw new IOException("the data folder " + root + " is a file, not a folder: give another --data-dir");
        }
    }

    /**
     * Creates the data folder so that only its owner can enter it ({@code rwx------}, whatever the umask), or makes an
     * existing one so, on a file system with POSIX permissions: the event log and the services' stores in it hold
     * prompts and summaries, and the files Kafka writes there are readable by everyone under a usual umask, so the folder
     * itself keeps them from other users. Missing parent folders are created as usual. When an existing folder's
     * permissions cannot be changed (another user owns it), a warning says so and the start goes on.
     *
     * @throws IOException when the folder cannot be created (or {@link #root} is a file)
     */
    void createPrivate() throws IOException {
        requireNotAFile();
        if (!root.getFileSystem().supportedFileAttributeViews().contains("posix")) {
            try {
                Files.createDirectories(root); // its own access rules apply (e.g. the user's profile folder on Windows)
            } catch (IOException e) {
                throw cannotCreate(e);
            }
            return;
        }
        Path parent = root.toAbsolutePath().getParent();
        try {
            if (parent != null) {
                Files.createDirectories(parent);
            }
        } catch (IOException e) {
            throw cannotCreate(e);
        }
        try {
            Files.createDirectory(root, PosixFilePermissions.asFileAttribute(OWNER_ONLY_FOLDER));
            return;
        } catch (FileAlreadyExistsException e) {
            requireNotAFile();
        } catch (IOException e) {
            throw cannotCreate(e);
        }
        requireOwnable();
        try {
            if (!Files.getPosixFilePermissions(root).equals(OWNER_ONLY_FOLDER)) {
                Files.setPosixFilePermissions(root, OWNER_ONLY_FOLDER);
                LOG.info("Made the data folder {} accessible to its owner only (rwx------)", root);
            }
        } catch (IOException e) {
            LOG.warn("Cannot make the data folder {} accessible to its owner only ({}); other users may read its files",
                    root, reason(e, root));
        }
    }

    /**
     * Names of which one in a folder makes it a data folder of this system: what {@code up}, {@code run <service>} and
     * the computer agent write there ({@code state} only with a service's folder in it, see {@link #isOwn}).
     */
    static final Set<String> OWN_FILES = Set.of("token", "tokens.json", "computer-id", "computer-token", "metrics-token",
            LocalKafka.CLIENT_PROPERTIES, "endpoints.json", "import-state.json", "assistant-sessions.json");
    /** The services' folders under {@code state/} ({@link #state}). */
    private static final Set<String> SERVICES = Set.of("projector", "gateway", "choice", "cleanup", "agent", "computer-agent");

    /**
     * Whether {@code p}, in a folder, is one of this system's: a file named in {@link #OWN_FILES}, the embedded broker's
     * {@code kafka} folder (with its lock or its metadata, or empty), or a {@code state} folder holding a service's.
     */
    private static boolean isOwn(Path p) {
        String name = p.getFileName().toString();
        if (OWN_FILES.contains(name)) {
            return Files.isRegularFile(p);
        }
        if (name.equals("kafka")) { // empty: made by a first start that ended before its broker started
            return Files.exists(p.resolve("localkafka.lock")) || Files.exists(p.resolve("metadata/meta.properties"))
                    || (Files.isDirectory(p) && entries(p).isEmpty());
        }
        return name.equals("state") && entries(p).stream().anyMatch(e -> SERVICES.contains(e.getFileName().toString()));
    }

    /** What a folder holds; empty when it is not a folder or cannot be read. */
    private static List<Path> entries(Path folder) {
        try (java.util.stream.Stream<Path> in = Files.list(folder)) {
            return in.toList();
        } catch (IOException e) {
            return List.of();
        }
    }

    /**
     * Refuses to take over an existing folder that is not a data folder of this system: a shared one (the sticky bit,
     * as {@code /tmp}), or one that already holds other files (a mistyped {@code --data-dir} naming a project or the home
     * folder), whose permissions {@link #createPrivate} would change for everyone who uses it. An empty folder, or one
     * holding {@link #OWN_FILES one of this system's files}, is taken; hidden files and {@code lost+found} do not count.
     *
     * @throws IOException naming the folder, what is in it and the option
     */
    private void requireOwnable() throws IOException {
        if (isShared(root)) {
            throw new IOException("the data folder " + root + " is a shared folder (anyone may write in it, as /tmp):"
                    + " give a folder of its own as --data-dir, e.g. " + root.resolve("ensemble-sessions"));
        }
        List<String> others = new java.util.ArrayList<>();
        try (java.util.stream.Stream<Path> in = Files.list(root)) {
            for (Path p : (Iterable<Path>) in::iterator) {
                String name = p.getFileName().toString();
                if (isOwn(p)) {
                    return;
                }
                if (!name.startsWith(".") && !name.equals("lost+found")) { // a file system's or a file browser's own
                    others.add(name);
                }
            }
        }
        if (!others.isEmpty()) {
            java.util.Collections.sort(others);
            throw new IOException("the data folder " + root + " already holds other files (" + String.join(", ",
                    others.subList(0, Math.min(3, others.size()))) + (others.size() > 3 ? ", ..." : "") + ") and is not a data"
                    + " folder of ensemble-sessions: give an empty or new folder as --data-dir, e.g. " + root.resolve("ensemble-sessions"));
        }
    }

    /** Whether anyone may write in the folder and it has the sticky bit (as /tmp: shared by all). */
    private static boolean isShared(Path folder) {
        try {
            return Files.getAttribute(folder, "unix:mode") instanceof Integer mode && (mode & 01002) == 01002;
        } catch (IOException | UnsupportedOperationException | IllegalArgumentException e) {
            return false;
        }
    }

    /** "cannot create the data folder ROOT: REASON; give another --data-dir". */
    private IOException cannotCreate(IOException e) {
        return new IOException("cannot create the data folder " + root + ": " + reason(e, root) + "; give another --data-dir", e);
    }

    /**
     * Why a file operation failed, as a person reads it, without the exception's class: "permission denied", "no such
     * file or folder: /a/b", "a file is in the way: /a/b", "read-only file system", or the system's own reason.
     */
    static String reason(IOException e) {
        return reason(e, null);
    }

    /** {@link #reason(IOException)}, without the file when it is {@code about} (which the message names already). */
    static String reason(IOException e, Path about) {
        String r = reasonWithFile(e);
        String suffix = about == null ? null : ": " + about;
        return suffix != null && r.endsWith(suffix) ? r.substring(0, r.length() - suffix.length()) : r;
    }

    private static String reasonWithFile(IOException e) {
        if (e instanceof java.nio.file.AccessDeniedException a) {
            return "permission denied" + (a.getReason() != null ? " (" + a.getReason() + ")" : "");
        }
        if (e instanceof java.nio.file.NoSuchFileException n) {
            return "no such file or folder" + (n.getFile() != null ? ": " + n.getFile() : "");
        }
        if (e instanceof FileAlreadyExistsException f) {
            return "a file is in the way" + (f.getFile() != null ? ": " + f.getFile() : "");
        }
        if (e instanceof java.nio.file.NotDirectoryException n) {
            return "not a folder: " + n.getFile();
        }
        if (e instanceof java.nio.file.FileSystemException f && f.getReason() != null) {
            String r = f.getReason();
            return (r.isEmpty() ? r : Character.toLowerCase(r.charAt(0)) + r.substring(1))
                    + (f.getFile() != null ? ": " + f.getFile() : "");
        }
        return e.getMessage() != null ? e.getMessage() : e.getClass().getSimpleName();
    }

    /**
     * Writes a file only its owner can read (where the file system supports it); the permissions are set before the
     * content is written, so the content is never readable by others.
     */
    static void writePrivate(Path file, String content) {
        try {
            dev.ensemble.sessions.gateway.Tokens.writeOwnerOnly(file, content);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot write " + file, e);
        }
    }

    /** Records where the running system listens, for {@code import} and other commands. */
    void writeEndpoints(String http, String bootstrapServers) {
        writeEndpoints(http, bootstrapServers, null);
    }

    /**
     * Records where the running system listens and the file with its Kafka clients' settings
     * ({@code clientProperties}; left out when null: a cluster without security), for {@code import} and other commands.
     */
    void writeEndpoints(String http, String bootstrapServers, Path clientProperties) {
        com.fasterxml.jackson.databind.node.ObjectNode o = JSON.createObjectNode().put("http", http).put("bootstrapServers", bootstrapServers);
        if (clientProperties != null) {
            o.put("clientProperties", clientProperties.toAbsolutePath().toString());
        }
        writePrivate(endpoints(), o.toPrettyString());
    }

    /**
     * A Kafka cluster as its clients reach it: its bootstrap servers and its client properties (security settings; empty
     * for a cluster without security).
     */
    record Cluster(String bootstrapServers, java.util.Map<String, Object> clientProperties) {
        /** A client's base settings: the client properties and {@code bootstrap.servers} (a new mutable map). */
        java.util.Map<String, Object> clientConfig() {
            return dev.ensemble.sessions.schema.KafkaClients.config(bootstrapServers, clientProperties);
        }
    }

    /**
     * The running system's cluster, from one read of its endpoints: the bootstrap servers it recorded and the client
     * properties in the file named there ({@code clientProperties}; none when it names no file), e.g. the embedded
     * broker's credentials ({@link LocalKafka#CLIENT_PROPERTIES}).
     *
     * @throws IllegalStateException when no running system left its endpoints here
     */
    Cluster runningCluster() {
        JsonNode endpoints = readEndpoints();
        JsonNode file = endpoints.path("clientProperties");
        return new Cluster(endpoints.path("bootstrapServers").asText(),
                file.isTextual() ? KafkaClientProperties.load(Path.of(file.asText())) : java.util.Map.of());
    }

    /** The running system's endpoints. */
    JsonNode readEndpoints() {
        try {
            return JSON.readTree(endpoints().toFile());
        } catch (IOException e) {
            throw new IllegalStateException("no running system found in " + root + " (" + endpoints()
                    + " is missing or unreadable): start it with 'deploy/ensemble-sessions up', or name the data folder it runs with"
                    + " (--data-dir, or ENSEMBLE_DATA_DIR)", e);
        }
    }
}
