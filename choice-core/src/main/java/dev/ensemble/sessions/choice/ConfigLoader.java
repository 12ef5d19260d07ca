package dev.ensemble.sessions.choice;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.MapperFeature;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import com.fasterxml.jackson.databind.json.JsonMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.regex.Pattern;
import java.util.regex.PatternSyntaxException;

/**
 * Reads {@link SessionChoiceConfig} JSON (guide §4 "Tuning"): an override document holds only the fields to change and
 * is deep-merged over the defaults (objects field by field, arrays and scalars replaced whole), then checked
 * ({@link #validate}). Pure apart from {@link #readFile}, which reads one file.
 */
public final class ConfigLoader {
    /** The environment variable that names the override file. */
    public static final String ENV = "ENSEMBLE_SESSION_CHOICE_CONFIG";

    static final ObjectMapper JSON = JsonMapper.builder()
            .enable(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES)
            .enable(DeserializationFeature.FAIL_ON_NULL_FOR_PRIMITIVES)
            .enable(DeserializationFeature.FAIL_ON_MISSING_CREATOR_PROPERTIES)
            .disable(MapperFeature.ALLOW_COERCION_OF_SCALARS)
            .enable(SerializationFeature.ORDER_MAP_ENTRIES_BY_KEYS)
            .build();

    private static final Map<SessionChoiceConfig, String> HASHES = new ConcurrentHashMap<>();

    private ConfigLoader() {
    }

    /** Thrown for a document that is not valid JSON, has a field of the wrong type or unknown name, or a value out of range. */
    public static final class InvalidConfigException extends Exception {
        public InvalidConfigException(String message, Throwable cause) {
            super(message, cause);
        }
    }

    /**
     * The defaults with {@code overrideJson} deep-merged over them, validated.
     *
     * @throws InvalidConfigException with a reason a person can act on
     */
    public static SessionChoiceConfig merge(SessionChoiceConfig base, String overrideJson) throws InvalidConfigException {
        return merge(base, parse(overrideJson));
    }

    private static JsonNode parse(String json) throws InvalidConfigException {
        try {
            return JSON.readTree(json);
        } catch (JsonProcessingException e) {
            throw new InvalidConfigException(notValidJson(e), e);
        }
    }

    private static SessionChoiceConfig merge(SessionChoiceConfig base, JsonNode override) throws InvalidConfigException {
        if (override == null || !override.isObject()) {
            throw new InvalidConfigException("the config must be a JSON object", null);
        }
        ObjectNode merged = JSON.valueToTree(base);
        deepMerge(merged, (ObjectNode) override, "");
        SessionChoiceConfig cfg;
        try {
            cfg = JSON.treeToValue(merged, SessionChoiceConfig.class);
        } catch (JsonProcessingException e) {
            throw new InvalidConfigException(describe(e, merged), e);
        }
        List<String> problems = validate(cfg);
        if (!problems.isEmpty()) {
            throw new InvalidConfigException(String.join("; ", problems), null);
        }
        return cfg;
    }

    /** The classpath resource of the recommended config (fields to change over the defaults, versioned). */
    public static final String RECOMMENDED = "/recommended-config.json";

    /**
     * The recommended config: {@code recommended-config.json} (in this module's resources) merged over the defaults.
     * docs/choice-evaluation.md shows how it compares with the defaults on two held-out histories.
     */
    public static SessionChoiceConfig recommended() {
        try (var in = ConfigLoader.class.getResourceAsStream(RECOMMENDED)) {
            if (in == null) throw new IllegalStateException(RECOMMENDED + " is missing from the classpath");
            return merge(SessionChoiceConfig.defaults(), new String(in.readAllBytes(), StandardCharsets.UTF_8));
        } catch (IOException | InvalidConfigException e) {
            throw new IllegalStateException("the recommended config is invalid: " + e.getMessage(), e);
        }
    }

    /**
     * {@link #merge} over the defaults of the file's content; a file that cannot be read is named with the reason. A file
     * that names no {@code version} is labelled by its name ({@code choice.json}), not by the defaults' version, which
     * would name the built-in config for one that differs from it (the config's hash tells two contents apart).
     */
    public static SessionChoiceConfig readFile(Path file) throws InvalidConfigException {
        if (Files.isDirectory(file)) {
            throw new InvalidConfigException(file + " is a folder, not a file", null);
        }
        String text;
        try {
            text = Files.readString(file, StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new InvalidConfigException(unreadable(file, e), e);
        }
        JsonNode override = parse(text);
        SessionChoiceConfig cfg = merge(SessionChoiceConfig.defaults(), override);
        return override.has("version") ? cfg : cfg.withVersion(file.getFileName().toString());
    }

    /**
     * Why a text file of this module's (a config, a choice history) could not be read, as one line naming it: "FILE does
     * not exist", "cannot read FILE: permission denied", "FILE is not UTF-8 text", else "cannot read FILE: REASON".
     */
    static String unreadable(Path file, IOException e) {
        if (e instanceof java.nio.file.NoSuchFileException) {
            return file + " does not exist";
        }
        if (e instanceof java.nio.file.AccessDeniedException) {
            return "cannot read " + file + ": permission denied";
        }
        if (e instanceof java.nio.charset.CharacterCodingException) {
            return file + " is not UTF-8 text";
        }
        return "cannot read " + file + ": " + (e.getMessage() != null ? e.getMessage() : e.getClass().getSimpleName());
    }

    /**
     * A JSON syntax error as a person reads it: {@code not valid JSON at line 1, column 9: unexpected end of input} (the
     * line and column where the parser stopped, without Jackson's source description).
     */
    public static String notValidJson(JsonProcessingException e) {
        var at = e.getLocation();
        return "not valid JSON" + (at == null || at.getLineNr() < 1 ? "" : " at line " + at.getLineNr() + ", column " + at.getColumnNr())
                + ": " + dev.ensemble.sessions.schema.JsonErrors.problem(e);
    }

    private static void deepMerge(ObjectNode target, ObjectNode override, String path) throws InvalidConfigException {
        Iterator<Map.Entry<String, JsonNode>> it = override.fields();
        while (it.hasNext()) {
            Map.Entry<String, JsonNode> e = it.next();
            String name = path.isEmpty() ? e.getKey() : path + "." + e.getKey();
            JsonNode existing = target.get(e.getKey());
            if (existing == null) {
                throw new InvalidConfigException("unknown field " + name, null);
            }
            if (existing.isObject() && e.getValue().isObject()) {
                deepMerge((ObjectNode) existing, (ObjectNode) e.getValue(), name);
            } else if (existing.isObject()) {
                throw new InvalidConfigException(name + " must be an object", null);
            } else {
                target.set(e.getKey(), e.getValue());
            }
        }
    }

    /** Every range rule broken by {@code c}, as readable messages; empty when valid. */
    public static List<String> validate(SessionChoiceConfig c) {
        List<String> p = new ArrayList<>();
        if (c.version() == null || c.version().isBlank()) p.add("version must be a non-empty string");
        if (c.weights() == null || c.bands() == null || c.size() == null || c.limits() == null || c.text() == null) {
            p.add("weights, bands, size, limits and text are required");
            return p;
        }
        SessionChoiceConfig.Weights w = c.weights();
        for (double d : new double[]{w.link(), w.deliverable(), w.meeting(), w.parentPage(), w.anchor(), w.anchorMax(),
                w.topic(), w.followUp(), w.newWork(), w.warm(), w.fillSoft(), w.longChain(), w.issueKey()}) {
            if (!Double.isFinite(d)) p.add("weights must be finite numbers");
        }
        if (w.anchorMax() < 0) p.add("weights.anchorMax must be ≥ 0");
        if (!(c.bands().unsure() <= c.bands().confident())) p.add("bands.unsure must be ≤ bands.confident");
        if (!Double.isFinite(c.bands().confident()) || !Double.isFinite(c.bands().unsure())) p.add("bands must be finite");
        SessionChoiceConfig.Size s = c.size();
        if (!(0 <= s.soft() && s.soft() <= s.hard() && s.hard() <= 1)) p.add("size must satisfy 0 ≤ soft ≤ hard ≤ 1");
        if (s.longChainTasks() < 1 || s.hardChainTasks() < 1) p.add("size.longChainTasks and size.hardChainTasks must be ≥ 1");
        if (s.longChainTasks() > s.hardChainTasks()) p.add("size.longChainTasks must be ≤ size.hardChainTasks");
        SessionChoiceConfig.Limits l = c.limits();
        if (l.maxAgeDays() <= 0) p.add("limits.maxAgeDays must be positive");
        if (l.candidates() <= 0) p.add("limits.candidates must be positive");
        if (l.corpusTasks() <= 0) p.add("limits.corpusTasks must be positive");
        if (l.corpusTtlMinutes() <= 0) p.add("limits.corpusTtlMinutes must be positive");
        if (l.corpusFieldChars() <= 0) p.add("limits.corpusFieldChars must be positive");
        if (l.minCorpus() <= 0) p.add("limits.minCorpus must be positive");
        if (l.timeBudgetMs() <= 0) p.add("limits.timeBudgetMs must be positive");
        if (l.topicMinShared() < 0) p.add("limits.topicMinShared must be ≥ 0");
        if (!(l.anchorMaxDocShare() > 0 && l.anchorMaxDocShare() <= 1)) p.add("limits.anchorMaxDocShare must be in (0, 1]");
        if (!(l.anchorMaxCandidateShare() > 0 && l.anchorMaxCandidateShare() <= 1)) p.add("limits.anchorMaxCandidateShare must be in (0, 1]");
        if (!(l.topicCommonShare() > 0 && l.topicCommonShare() <= 1)) p.add("limits.topicCommonShare must be in (0, 1]");
        if (c.warmMinutes() < 0) p.add("warmMinutes must be ≥ 0");
        SessionChoiceConfig.Text t = c.text();
        if (t.fieldWeights() == null) {
            p.add("text.fieldWeights is required");
        } else {
            SessionChoiceConfig.FieldWeights f = t.fieldWeights();
            for (double d : new double[]{f.title(), f.labels(), f.page(), f.description(), f.reports(), f.instructions()}) {
                if (!(d >= 0 && Double.isFinite(d))) p.add("text.fieldWeights must be ≥ 0");
            }
        }
        if (!(t.phraseWeight() >= 0 && Double.isFinite(t.phraseWeight()))) p.add("text.phraseWeight must be ≥ 0");
        for (List<String> list : List.of(t.followUp(), t.newWork(), t.automated())) {
            for (String re : list) {
                try {
                    Pattern.compile(re);
                } catch (PatternSyntaxException e) {
                    p.add("text pattern " + re + " is not a valid regular expression: " + e.getDescription());
                }
            }
        }
        return p;
    }

    /** The canonical JSON of {@code c}: fields in declaration order, no whitespace. */
    public static String toJson(SessionChoiceConfig c) {
        try {
            return JSON.writeValueAsString(c);
        } catch (JsonProcessingException e) {
            throw new IllegalStateException(e);
        }
    }

    /** SHA-256 of {@link #toJson}, lower-case hex (64 chars); memoised per config value. */
    public static String hash(SessionChoiceConfig c) {
        String h = HASHES.get(c);
        if (h != null) return h;
        try {
            byte[] d = MessageDigest.getInstance("SHA-256").digest(toJson(c).getBytes(StandardCharsets.UTF_8));
            h = HexFormat.of().formatHex(d);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
        if (HASHES.size() > 256) HASHES.clear();
        HASHES.put(c, h);
        return h;
    }

    /** "weights.link: must be a number (got "ten")" for a value of the wrong type; Jackson's text otherwise. */
    static String describe(JsonProcessingException e, com.fasterxml.jackson.databind.JsonNode doc) {
        if (e instanceof com.fasterxml.jackson.databind.JsonMappingException m && !m.getPath().isEmpty()) {
            StringBuilder path = new StringBuilder();
            StringBuilder pointer = new StringBuilder();
            for (var r : m.getPath()) {
                if (r.getFieldName() != null) {
                    path.append(path.length() == 0 ? "" : ".").append(r.getFieldName());
                    pointer.append('/').append(r.getFieldName().replace("~", "~0").replace("/", "~1"));
                } else {
                    path.append('[').append(r.getIndex()).append(']');
                    pointer.append('/').append(r.getIndex());
                }
            }
            var value = doc.at(pointer.toString());
            Class<?> target = m instanceof com.fasterxml.jackson.databind.exc.MismatchedInputException mi ? mi.getTargetType() : null;
            String got = value.isMissingNode() ? "" : " (got " + value + ")";
            return path + ": " + (target != null ? "must be " + kind(target) + got : e.getOriginalMessage());
        }
        return "wrong field or type: " + e.getOriginalMessage();
    }

    private static String kind(Class<?> t) {
        if (t == int.class || t == Integer.class || t == long.class || t == Long.class) {
            return "a whole number";
        }
        if (t == double.class || t == Double.class || t == float.class || t == Float.class) {
            return "a number";
        }
        if (t == boolean.class || t == Boolean.class) {
            return "true or false";
        }
        if (t == String.class) {
            return "a string";
        }
        if (java.util.Collection.class.isAssignableFrom(t) || t.isArray()) {
            return "a list";
        }
        return "an object (" + t.getSimpleName() + ")";
    }
}
