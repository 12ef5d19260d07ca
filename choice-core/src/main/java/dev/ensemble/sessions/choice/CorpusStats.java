package dev.ensemble.sessions.choice;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;
import java.util.zip.DeflaterOutputStream;
import java.util.zip.InflaterInputStream;

/**
 * The rarity table of one person on one computer (guide §4 "topic", "anchors", "Cost"; DESIGN §4 corpus statistics):
 * over the last {@code limits.corpusTasks} tasks, N and the document frequency of each analysed term and phrase and
 * of each anchor. {@link #add} slides the window: a task beyond the capacity leaves it and is subtracted; a task added
 * again replaces its earlier entry. Deterministic: the same adds in the same order give the same table and bytes.
 * Not thread-safe (one writer per account, as in the projector).
 */
public final class CorpusStats {
    private static final int MAGIC = 0x45435331; // "ECS1"

    private final String account;
    private final String computerId;
    private final int capacity;
    /** The window by task id, oldest first: a task added again moves to the end, in constant time. */
    private final LinkedHashMap<String, Entry> window = new LinkedHashMap<>();
    private final Map<String, Df> termDf = new HashMap<>();
    private int[] dfById = new int[1024];
    private final Map<String, Df> anchorDf = new HashMap<>();

    /** A task in the window: its terms and anchors sorted, each the table's one instance of that string. */
    private record Entry(String taskId, String[] terms, String[] anchors) {
    }

    /** A document frequency, and the table's one instance of its term or anchor (held by every entry that has it). */
    private static final class Df {
        final String key;
        int n;

        Df(String key) {
            this.key = key;
        }
    }

    /**
     * An empty table.
     *
     * @param capacity tasks kept ({@code limits.corpusTasks}); positive
     */
    public CorpusStats(String account, String computerId, int capacity) {
        if (capacity <= 0) throw new IllegalArgumentException("capacity must be positive");
        this.account = account;
        this.computerId = computerId;
        this.capacity = capacity;
    }

    /** The person whose tasks these are. */
    public String account() {
        return account;
    }

    /** The computer. */
    public String computerId() {
        return computerId;
    }

    /** Tasks kept at most. */
    public int capacity() {
        return capacity;
    }

    /** N: tasks in the window. */
    public int n() {
        return window.size();
    }

    /** Tasks in the window that have {@code term} (a stem, or a phrase "a b"). */
    public int termDf(String term) {
        Df c = termDf.get(term);
        return c == null ? 0 : c.n;
    }

    /** Tasks in the window that name {@code anchorKey} (see {@link Anchors}). */
    public int anchorDf(String anchorKey) {
        Df c = anchorDf.get(anchorKey);
        return c == null ? 0 : c.n;
    }

    /** ln((N+1)/(df+1)) for a term: about 0 for a term in nearly every task (guide §4 "topic"). */
    public double idf(String term) {
        return Math.log((n() + 1.0) / (termDf(term) + 1.0));
    }

    /** {@link #termDf} by {@link TermDictionary} id: an array read. */
    int termDfById(int id) {
        return id < dfById.length ? dfById[id] : 0;
    }

    private void bump(String term, int by) {
        int id = TermDictionary.id(term);
        if (id >= dfById.length) dfById = Arrays.copyOf(dfById, Math.max(id + 1, dfById.length * 2));
        dfById[id] += by;
    }

    /** Distinct terms and phrases in the table. */
    public int distinctTerms() {
        return termDf.size();
    }

    /** Distinct anchors in the table. */
    public int distinctAnchors() {
        return anchorDf.size();
    }

    /**
     * Adds one task; returns the id of the task that left the window, or null.
     * A task already in the window is first removed, then added as the newest.
     */
    public String add(TextAnalysis.CorpusDoc doc) {
        Entry old = window.remove(doc.taskId());
        if (old != null) {
            subtract(old);
        }
        Entry e = new Entry(doc.taskId(), counted(termDf, doc.terms()), counted(anchorDf, doc.anchors()));
        window.put(e.taskId(), e);
        for (String t : e.terms()) bump(t, 1);
        if (window.size() > capacity) {
            Iterator<Entry> oldest = window.values().iterator();
            Entry gone = oldest.next();
            oldest.remove();
            subtract(gone);
            return gone.taskId();
        }
        return null;
    }

    private void subtract(Entry e) {
        for (String t : e.terms()) {
            dec(termDf, t);
            bump(t, -1);
        }
        for (String a : e.anchors()) dec(anchorDf, a);
    }

    /** The keys sorted, each counted once more in {@code df} and replaced by the table's instance of it. */
    private static String[] counted(Map<String, Df> df, java.util.Collection<String> keys) {
        String[] out = keys.toArray(new String[0]);
        Arrays.sort(out);
        for (int i = 0; i < out.length; i++) {
            Df c = df.computeIfAbsent(out[i], Df::new);
            c.n++;
            out[i] = c.key;
        }
        return out;
    }

    private static void dec(Map<String, Df> m, String k) {
        Df c = m.get(k);
        if (c != null && --c.n <= 0) m.remove(k);
    }

    /** The task ids in the window, oldest first. */
    public List<String> taskIds() {
        List<String> ids = new ArrayList<>(window.size());
        for (Entry e : window.values()) ids.add(e.taskId());
        return ids;
    }

    /**
     * A compact binary form (deflated; a string table of every term and anchor, then each task as varint indexes),
     * for a state store. {@link #fromBytes} restores an equal table.
     */
    public byte[] toBytes() {
        TreeSet<String> dict = new TreeSet<>(termDf.keySet());
        dict.addAll(anchorDf.keySet());
        Map<String, Integer> index = new HashMap<>();
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        // buffered: the deflater is called per write, and the body is mostly single-byte varints
        try (DataOutputStream out = new DataOutputStream(new java.io.BufferedOutputStream(new DeflaterOutputStream(bytes), 1 << 16))) {
            out.writeInt(MAGIC);
            writeNullable(out, account);
            writeNullable(out, computerId);
            out.writeInt(capacity);
            out.writeInt(dict.size());
            int i = 0;
            for (String s : dict) {
                index.put(s, i++);
                out.writeUTF(s);
            }
            out.writeInt(window.size());
            for (Entry e : window.values()) {
                out.writeUTF(e.taskId());
                writeVarint(out, e.terms().length);
                for (String t : e.terms()) writeVarint(out, index.get(t));
                writeVarint(out, e.anchors().length);
                for (String a : e.anchors()) writeVarint(out, index.get(a));
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return bytes.toByteArray();
    }

    /** The table written by {@link #toBytes}; IllegalArgumentException for bytes of another form. */
    public static CorpusStats fromBytes(byte[] data) {
        try (DataInputStream in = new DataInputStream(new java.io.BufferedInputStream(new InflaterInputStream(new ByteArrayInputStream(data)), 1 << 16))) {
            if (in.readInt() != MAGIC) throw new IllegalArgumentException("not a CorpusStats form");
            String account = readNullable(in);
            String computer = readNullable(in);
            CorpusStats c = new CorpusStats(account, computer, in.readInt());
            String[] dict = new String[in.readInt()];
            for (int i = 0; i < dict.length; i++) dict[i] = in.readUTF();
            int n = in.readInt();
            for (int i = 0; i < n; i++) {
                String id = in.readUTF();
                String[] terms = new String[readVarint(in)];
                for (int j = 0; j < terms.length; j++) terms[j] = dict[readVarint(in)];
                String[] anchors = new String[readVarint(in)];
                for (int j = 0; j < anchors.length; j++) anchors[j] = dict[readVarint(in)];
                c.add(new TextAnalysis.CorpusDoc(id, new java.util.HashSet<>(Arrays.asList(terms)), new java.util.HashSet<>(Arrays.asList(anchors))));
            }
            return c;
        } catch (IOException e) {
            throw new IllegalArgumentException("not a CorpusStats form: " + e, e);
        }
    }

    /** Same window (ids, terms, anchors in order) and capacity. */
    public boolean sameAs(CorpusStats o) {
        if (o.capacity != capacity || o.window.size() != window.size()) return false;
        Iterator<Entry> a = window.values().iterator(), b = o.window.values().iterator();
        while (a.hasNext()) {
            Entry x = a.next(), y = b.next();
            if (!x.taskId().equals(y.taskId()) || !Arrays.equals(x.terms(), y.terms()) || !Arrays.equals(x.anchors(), y.anchors())) return false;
        }
        return true;
    }

    private static void writeNullable(DataOutputStream out, String s) throws IOException {
        out.writeBoolean(s != null);
        if (s != null) out.writeUTF(s);
    }

    private static String readNullable(DataInputStream in) throws IOException {
        return in.readBoolean() ? in.readUTF() : null;
    }

    private static void writeVarint(DataOutputStream out, int v) throws IOException {
        while ((v & ~0x7F) != 0) {
            out.writeByte((v & 0x7F) | 0x80);
            v >>>= 7;
        }
        out.writeByte(v);
    }

    private static int readVarint(DataInputStream in) throws IOException {
        int v = 0, shift = 0;
        while (true) {
            int b = in.readUnsignedByte();
            v |= (b & 0x7F) << shift;
            if ((b & 0x80) == 0) return v;
            shift += 7;
        }
    }
}
