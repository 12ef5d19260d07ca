package dev.ensemble.sessions.gateway;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.PosixFilePermission;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.security.SecureRandom;
import java.util.Base64;
import java.util.HexFormat;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Bearer tokens. A token belongs to one account with a role. Only the SHA-256 of each token is kept, in a
 * JSON file ({@code {"<sha256 hex>": {"account": …, "role": …, "subject": …}}}) when a path is given, so the
 * file does not disclose the tokens themselves. Where the file system has POSIX permissions the file is readable and
 * writable by its owner only ({@code rw-------}), from the moment it is written; one found open to others (as earlier
 * versions wrote it) loses the group's and others' permissions when loaded.
 */
public final class Tokens {
    private static final Logger LOG = LoggerFactory.getLogger(Tokens.class);
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final SecureRandom RANDOM = new SecureRandom();

    private final Map<String, Principal> byHash = new ConcurrentHashMap<>();
    private final Path file;

    private Tokens(Path file) {
        this.file = file;
    }

    /** Tokens kept only in memory (tests, or a gateway whose tokens are issued at start). */
    public static Tokens inMemory() {
        return new Tokens(null);
    }

    /**
     * Tokens kept in {@code file}, loaded now when it exists. An unreadable file is logged and treated as
     * empty (no token is valid), never half-read.
     */
    public static Tokens load(Path file) {
        Tokens t = new Tokens(file);
        if (Files.exists(file)) {
            makeOwnerOnly(file);
            try {
                JsonNode root = JSON.readTree(file.toFile());
                root.fields().forEachRemaining(e -> t.byHash.put(e.getKey(), new Principal(
                        e.getValue().path("account").asText(), e.getValue().path("role").asText(),
                        e.getValue().path("subject").asText())));
            } catch (IOException e) {
                LOG.error("cannot read the token file {}: {}; no token is valid until it is fixed", file, e.getMessage());
                t.byHash.clear();
            }
        }
        return t;
    }

    /** Issues a new random token (256 bits, base64url) for the principal and returns it; only its hash is kept. */
    public String issue(Principal principal) {
        byte[] raw = new byte[32];
        RANDOM.nextBytes(raw);
        String token = "es_" + Base64.getUrlEncoder().withoutPadding().encodeToString(raw);
        register(token, principal);
        return token;
    }

    /** Accepts a token chosen elsewhere (tests, or a token file written by an operator). */
    public void register(String token, Principal principal) {
        byHash.put(hash(token), principal);
        save();
    }

    /**
     * Accepts many tokens chosen elsewhere at once (e.g. the soak's person tokens, one per account, written into the data
     * folder's token file before {@code up} starts), writing the file once.
     *
     * @param principals each token and the principal it acts as
     */
    public void registerAll(Map<String, Principal> principals) {
        principals.forEach((token, principal) -> byHash.put(hash(token), principal));
        save();
    }

    /** The principal of a token, or empty when the token is unknown. */
    public Optional<Principal> authenticate(String token) {
        if (token == null || token.isBlank()) {
            return Optional.empty();
        }
        return Optional.ofNullable(byHash.get(hash(token.strip())));
    }

    private synchronized void save() {
        if (file == null) {
            return;
        }
        ObjectNode root = JSON.createObjectNode();
        byHash.forEach((h, p) -> root.putObject(h).put("account", p.account()).put("role", p.role()).put("subject", p.subject()));
        try {
            writeOwnerOnly(file, JSON.writerWithDefaultPrettyPrinter().writeValueAsString(root));
        } catch (IOException e) {
            throw new UncheckedIOException("cannot write the token file " + file, e);
        }
    }

    /**
     * Replaces {@code file} with {@code content} (UTF-8) atomically, readable by its owner only from the start: written to
     * a fresh temporary file beside it (which Java creates {@code rw-------} on POSIX file systems; two writers never
     * share one), then moved over it. Creates the folder when missing.
     */
    public static void writeOwnerOnly(Path file, String content) throws IOException {
        Path dir = file.toAbsolutePath().getParent();
        Files.createDirectories(dir);
        Path tmp = Files.createTempFile(dir, file.getFileName() + ".", ".tmp");
        try {
            Files.writeString(tmp, content);
            Files.move(tmp, file, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
        } finally {
            Files.deleteIfExists(tmp);
        }
    }

    private static boolean posix(Path file) {
        return file.getFileSystem().supportedFileAttributeViews().contains("posix");
    }

    private static void makeOwnerOnly(Path file) {
        if (!posix(file)) {
            return;
        }
        try {
            Set<PosixFilePermission> now = Files.getPosixFilePermissions(file);
            Set<PosixFilePermission> owners = java.util.EnumSet.noneOf(PosixFilePermission.class);
            now.stream().filter(p -> p.name().startsWith("OWNER_")).forEach(owners::add);
            if (!owners.equals(now)) {
                Files.setPosixFilePermissions(file, owners);
                LOG.info("the token file {} is now readable by its owner only", file);
            }
        } catch (IOException e) {
            LOG.warn("cannot make the token file {} readable by its owner only: {}", file, e.toString());
        }
    }

    static String hash(String token) {
        try {
            return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(token.getBytes(StandardCharsets.UTF_8)));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }
}
