package dev.ensemble.sessions.choice;

import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Anchors: exact things two texts both name (guide §4 "anchors", anchorsOf in text.ts): file paths, file names, code
 * names (camelCase, snake_case, PascalCase), issue and pull-request numbers ({@code #123}, {@code ABC-42}) and web
 * addresses. Each anchor is a key {@code kind:value} with kind {@code path}, {@code file}, {@code name}, {@code issue}
 * or {@code url}; {@link #display} strips the kind.
 * <p>
 * A path also yields its file name and, when that reads as a code name, its stem ({@code a/b/SessionStore.java} →
 * {@code file:SessionStore.java}, {@code name:SessionStore}), so a task naming only the class still meets the session
 * that changed the file; {@link #dedupeFiles} then keeps a file shared by its path from counting again by its name.
 * Files every repository has ({@code text.commonFiles}) never become anchors.
 * <p>
 * A folder is no file anchor (the guide counts file paths, not folders): a path in a text counts only when its last
 * part is a file name with an extension ({@code lang/rust}, {@code /lang/java} and {@code src/main/} do not), and of the
 * files a run changed, a path ending in {@code /} or that another changed path lies under is a folder and is skipped.
 * C type names of the {@code size_t}, {@code uint8_t} form (lower-case, ending in {@code _t}) are the language's
 * vocabulary, not this project's code, and are no code names.
 */
public final class Anchors {
    static final String PATH = "path:", FILE = "file:", NAME = "name:", ISSUE = "issue:", URL = "url:";

    private static final Pattern URL_RE = Pattern.compile("\\b(?:https?|ftp)://[^\\s<>()\\[\\]{}\"'`]+");
    private static final Pattern ENSEMBLE_LINK = Pattern.compile("ensemble://task/[A-Za-z0-9_.:-]+|(?<![\\w/.-])(?:https?://[^\\s/]+)?/tasks/[A-Za-z0-9_.:-]+");
    private static final Pattern PR_RE = Pattern.compile("(?<![\\w&#])#(\\d{1,7})\\b");
    private static final Pattern KEY_RE = Pattern.compile("\\b([A-Z][A-Z0-9]{1,9})-(\\d{1,7})\\b");
    private static final Pattern CVE_RE = Pattern.compile("\\bCVE-\\d{4}-\\d{4,7}\\b");
    private static final Set<String> FILE_EXTENSIONS = Set.of(
            "java", "scala", "kt", "kts", "groovy", "clj", "ts", "tsx", "js", "jsx", "mjs", "cjs", "py", "go", "rs", "rb",
            "php", "cs", "swift", "c", "h", "cc", "cpp", "hpp", "m", "md", "json", "yaml", "yml", "xml", "gradle", "sh",
            "bash", "ps1", "sql", "proto", "avsc", "properties", "toml", "ini", "cfg", "conf", "html", "css", "scss",
            "vue", "svelte", "txt", "csv", "lock", "tf", "dockerfile", "bat", "jsonl", "ipynb", "lua", "ex", "exs", "erl");

    private final Set<String> commonFiles;
    private final Set<String> notIssueKeys;

    /** Anchors under the word lists of {@code text}. */
    public Anchors(SessionChoiceConfig.Text text) {
        Set<String> cf = new HashSet<>();
        for (String f : text.commonFiles()) cf.add(f.toLowerCase(Locale.ROOT));
        this.commonFiles = Set.copyOf(cf);
        Set<String> nk = new HashSet<>();
        for (String k : text.notIssueKeys()) nk.add(k.toUpperCase(Locale.ROOT));
        this.notIssueKeys = Set.copyOf(nk);
    }

    /**
     * Adds the anchors of one free text to {@code into}; null text adds nothing. Linear in the text: web addresses and
     * issue numbers by regular expression, then each whitespace-separated token as a path, a file name or code names.
     */
    public void ofText(String text, Set<String> into) {
        if (text == null || text.isEmpty()) return;
        String rest = text;
        if (text.indexOf("://") >= 0 || text.indexOf("/tasks/") >= 0) {
            StringBuilder sb = new StringBuilder(text);
            Matcher m = ENSEMBLE_LINK.matcher(text);
            while (m.find()) blank(sb, m.start(), m.end()); // links are the link signal's, not anchors
            m = URL_RE.matcher(sb);
            while (m.find()) {
                String u = trimTrailing(m.group());
                if (u.length() > 10) into.add(URL + stripSlash(u));
                blank(sb, m.start(), m.end());
            }
            rest = sb.toString();
        }
        if (rest.indexOf("CVE-") >= 0) {
            Matcher m = CVE_RE.matcher(rest);
            while (m.find()) into.add(ISSUE + m.group());
        }
        if (rest.indexOf('#') >= 0) {
            Matcher m = PR_RE.matcher(rest);
            while (m.find()) into.add(ISSUE + "#" + Long.parseLong(m.group(1)));
        }
        if (rest.indexOf('-') >= 0) {
            Matcher m = KEY_RE.matcher(rest);
            while (m.find()) {
                if (!notIssueKeys.contains(m.group(1)) && Character.isLetter(m.group(1).charAt(m.group(1).length() - 1))
                        && !(m.group(1).equals("CVE"))) {
                    into.add(ISSUE + m.group(1) + "-" + Long.parseLong(m.group(2)));
                }
            }
        }
        int n = rest.length(), i = 0;
        while (i < n) {
            while (i < n && Character.isWhitespace(rest.charAt(i))) i++;
            int j = i;
            while (j < n && !Character.isWhitespace(rest.charAt(j))) j++;
            if (j > i) token(rest, i, j, into);
            i = j;
        }
    }

    private static final String LEAD = "([{<\"'`*", TRAIL = ")]}>\"'`,;:!?.*";

    private void token(String s, int from, int to, Set<String> into) {
        while (from < to && LEAD.indexOf(s.charAt(from)) >= 0) from++;
        while (to > from && TRAIL.indexOf(s.charAt(to - 1)) >= 0) to--;
        if (to - from < 3) return;
        String t = s.substring(from, to);
        // a path or file name is the part after any character that cannot be in one (--out=src/a.ts → src/a.ts)
        int cut = -1;
        for (int k = 0; k < t.length(); k++) {
            char c = t.charAt(k);
            if (!(Character.isLetterOrDigit(c) || c == '_' || c == '.' || c == '@' || c == '+' || c == '-' || c == '/' || c == '~')) cut = k;
        }
        String p = cut >= 0 ? t.substring(cut + 1) : t;
        while (!p.isEmpty() && TRAIL.indexOf(p.charAt(p.length() - 1)) >= 0) p = p.substring(0, p.length() - 1);
        if (p.indexOf('/') >= 0 && isPath(p)) {
            addPath(p, into);
            return;
        }
        int dot = p.lastIndexOf('.');
        if (dot > 0 && dot < p.length() - 1 && FILE_EXTENSIONS.contains(p.substring(dot + 1).toLowerCase(Locale.ROOT))
                && Character.isLetterOrDigit(p.charAt(0)) && p.indexOf('/') < 0 && p.chars().anyMatch(Character::isLetter)
                && p.indexOf('.') >= 2 // "o.a.k.c" (a package abbreviation) is no file
                && Character.isLetter(p.charAt(dot - 1)) | Character.isDigit(p.charAt(dot - 1)) | p.charAt(dot - 1) == '_') {
            addFile(p, into);
            return;
        }
        // code names: the identifiers in the token (kafka.server.KafkaApis → KafkaApis; rankResults() → rankResults)
        int k = 0, len = t.length();
        while (k < len) {
            while (k < len && !isIdent(t.charAt(k))) k++;
            int e = k;
            while (e < len && isIdent(t.charAt(e))) e++;
            if (e - k >= 4 && !Character.isDigit(t.charAt(k))) {
                String w = t.substring(k, e);
                if (isCodeName(w)) into.add(NAME + w);
            }
            k = e;
        }
    }

    private static boolean isIdent(char c) {
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
    }

    /** Adds the anchors of files a run changed (paths relative to the repository). */
    public void ofFiles(List<String> files, Set<String> into) {
        Set<String> folders = null;
        for (String f : files) {
            if (f == null || f.isBlank()) continue;
            String p = f.strip();
            if (p.endsWith("/") || p.endsWith("\\")) continue; // a folder
            if (p.indexOf('/') >= 0) {
                if (folders == null) folders = foldersOf(files);
                if (folders.contains(p)) continue;
                addPath(p, into);
            }
            else addFile(p, into);
        }
    }

    /** Every folder that holds one of {@code files} ({@code a/b/c.txt} → {@code a}, {@code a/b}). */
    private static Set<String> foldersOf(List<String> files) {
        Set<String> out = new HashSet<>();
        for (String f : files) {
            if (f == null) continue;
            String p = f.strip();
            for (int i = p.indexOf('/'); i > 0; i = p.indexOf('/', i + 1)) out.add(p.substring(0, i));
        }
        return out;
    }

    private void addPath(String raw, Set<String> into) {
        String p = raw;
        while (p.startsWith("./") || p.startsWith("../")) p = p.substring(p.indexOf('/') + 1);
        if (p.startsWith("/")) p = p.substring(1);
        if (p.isEmpty()) return;
        String base = p.substring(p.lastIndexOf('/') + 1);
        if (base.isEmpty() || commonFiles.contains(base.toLowerCase(Locale.ROOT))) return;
        into.add(PATH + p);
        if (base.indexOf('.') > 0) addFile(base, into);
    }

    private void addFile(String name, Set<String> into) {
        if (commonFiles.contains(name.toLowerCase(Locale.ROOT))) return;
        into.add(FILE + name);
        String stem = stemOf(name);
        if (isCodeName(stem)) into.add(NAME + stem);
    }

    /** True for camelCase ({@code rankResults}), PascalCase with two humps ({@code SessionStore}) and snake_case ({@code auth_session}). */
    public static boolean isCodeName(String w) {
        if (w.length() < 4) return false;
        if (w.endsWith("_t") && w.equals(w.toLowerCase(Locale.ROOT))) return false; // size_t, uint8_t: C's type names
        boolean lower = false, upper = false, underscore = false, upperAfterLower = false;
        for (int i = 0; i < w.length(); i++) {
            char c = w.charAt(i);
            if (c == '_') underscore = true;
            else if (Character.isUpperCase(c)) {
                upper = true;
                if (i > 0 && Character.isLowerCase(w.charAt(i - 1))) upperAfterLower = true;
            } else if (Character.isLowerCase(c)) lower = true;
        }
        if (underscore) {
            // snake_case or SCREAMING_SNAKE: letters on both sides of an inner underscore
            int u = w.indexOf('_', 1);
            return u > 0 && u < w.length() - 1 && (lower || upper) && Character.isLetterOrDigit(w.charAt(u - 1))
                    && Character.isLetterOrDigit(w.charAt(u + 1));
        }
        if (!lower || !upper) return false;
        if (Character.isLowerCase(w.charAt(0))) return true;     // camelCase
        return upperAfterLower;                                    // PascalCase: a second hump
    }

    /**
     * True when {@code shown} (an anchor as shown, kind stripped) is, whole, an issue or pull-request key under these
     * word lists: a stored record keeps anchors as shown only, so {@link ChoiceRecords#storedCandidates} reads them
     * again with this to know which weigh {@code weights.issueKey}.
     */
    public boolean isIssueKey(String shown) {
        Set<String> a = new HashSet<>();
        ofText(shown, a);
        return a.contains(ISSUE + shown);
    }

    /** The anchor without its kind, as shown in reasons and records. */
    public static String display(String key) {
        int i = key.indexOf(':');
        return key.substring(i + 1);
    }

    /** A file shared by its path is not counted again by its name (nor its stem); a shared file name hides its stem. */
    public static void dedupeFiles(Set<String> shared) {
        for (String k : List.copyOf(shared)) {
            if (k.startsWith(PATH)) {
                String base = k.substring(k.lastIndexOf('/') + 1);
                shared.remove(FILE + base);
                shared.remove(NAME + stemOf(base));
            }
        }
        for (String k : List.copyOf(shared)) {
            if (k.startsWith(FILE)) shared.remove(NAME + stemOf(k.substring(FILE.length())));
        }
    }

    private static String stemOf(String fileName) {
        int dot = fileName.indexOf('.');
        return dot > 0 ? fileName.substring(0, dot) : fileName;
    }

    private static boolean isPath(String p) {
        int slashes = 0;
        for (int i = 0; i < p.length(); i++) if (p.charAt(i) == '/') slashes++;
        String base = p.substring(p.lastIndexOf('/') + 1);
        int dot = base.lastIndexOf('.');
        boolean ext = dot > 0 && dot < base.length() - 1 && Character.isLetter(base.charAt(dot + 1));
        // a file path names a file: a folder (lang/rust, src/main/java) is no file anchor
        return slashes >= 1 && ext && p.chars().anyMatch(Character::isLetter);
    }

    private static String trimTrailing(String s) {
        int e = s.length();
        while (e > 0 && ".,;:!?".indexOf(s.charAt(e - 1)) >= 0) e--;
        return s.substring(0, e);
    }

    private static String stripSlash(String u) {
        return u.endsWith("/") ? u.substring(0, u.length() - 1) : u;
    }

    private static void blank(StringBuilder sb, int from, int to) {
        for (int i = from; i < to; i++) sb.setCharAt(i, ' ');
    }
}
