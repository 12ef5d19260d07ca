package dev.ensemble.sessions.choice;

import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Weighted counts of a text's terms and phrases (guide §4 "topic"): each occurrence adds its field's weight, a phrase
 * ({@code "rank api"}, two stems joined by a space) that weight × {@code text.phraseWeight}. Immutable; terms sorted.
 */
public final class TermCounts {
    /** No terms. */
    public static final TermCounts EMPTY = new TermCounts(new String[0], new double[0]);

    final String[] terms;
    final double[] counts;
    final int[] ids;
    /** 1 + ln(count) per term (the term-frequency factor of the guide's weight), never negative. */
    final double[] tf;

    private TermCounts(String[] terms, double[] counts) {
        this.terms = terms;
        this.counts = counts;
        this.ids = new int[terms.length];
        this.tf = new double[terms.length];
        for (int i = 0; i < terms.length; i++) {
            ids[i] = TermDictionary.id(terms[i]);
            tf[i] = counts[i] <= 0 ? 0 : Math.max(0, 1 + Math.log(counts[i]));
        }
    }

    /** From a map term → weighted count (counts ≤ 0 are dropped). */
    public static TermCounts of(Map<String, double[]> m) {
        String[] t = m.entrySet().stream().filter(e -> e.getValue()[0] > 0).map(Map.Entry::getKey).sorted().toArray(String[]::new);
        double[] c = new double[t.length];
        for (int i = 0; i < t.length; i++) c[i] = m.get(t[i])[0];
        return new TermCounts(t, c);
    }

    /** The sum of several texts' counts (a session's tasks). */
    public static TermCounts sum(List<TermCounts> parts) {
        if (parts.size() == 1) return parts.get(0);
        Map<String, double[]> m = new HashMap<>();
        for (TermCounts p : parts) {
            for (int i = 0; i < p.terms.length; i++) m.computeIfAbsent(p.terms[i], k -> new double[1])[0] += p.counts[i];
        }
        return of(m);
    }

    /** How many distinct terms and phrases. */
    public int size() {
        return terms.length;
    }

    /** The weighted count of {@code term}, 0 when absent. */
    public double count(String term) {
        int i = Arrays.binarySearch(terms, term);
        return i >= 0 ? counts[i] : 0;
    }

    /** As a map, for tests and reports. */
    public Map<String, Double> asMap() {
        Map<String, Double> m = new java.util.TreeMap<>();
        for (int i = 0; i < terms.length; i++) m.put(terms[i], counts[i]);
        return m;
    }

    /** True for a phrase (two terms). */
    public static boolean isPhrase(String term) {
        return term.indexOf(' ') >= 0;
    }
}
