package dev.ensemble.sessions.deploy;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * A table for a terminal, drawn with box-drawing characters as ccusage prints its reports: a ruled header, one line
 * per row, columns as wide as their widest cell (a cell is one line: line breaks and tabs become spaces), right-aligned
 * where asked (numbers). Widths count characters (a wide CJK character counts as one).
 */
final class TextTable {
    private final String[] headers;
    private final boolean[] right;
    private final List<String[]> rows = new ArrayList<>();

    /** Columns by header; a header ending in {@code >} (left out when printed) is right-aligned. */
    TextTable(String... headers) {
        this.headers = new String[headers.length];
        this.right = new boolean[headers.length];
        for (int i = 0; i < headers.length; i++) {
            right[i] = headers[i].endsWith(">");
            this.headers[i] = right[i] ? headers[i].substring(0, headers[i].length() - 1) : headers[i];
        }
    }

    /** Adds a row (null cells print empty). */
    TextTable row(Object... cells) {
        if (cells.length != headers.length) {
            throw new IllegalArgumentException("a row of " + cells.length + " cells in a table of " + headers.length + " columns");
        }
        String[] r = new String[cells.length];
        for (int i = 0; i < cells.length; i++) {
            r[i] = cells[i] == null ? "" : cells[i].toString().replaceAll("[\\r\\n\\t]+", " ");
        }
        rows.add(r);
        return this;
    }

    /** The table, each line ending with the platform's line separator. */
    String render() {
        int[] w = new int[headers.length];
        for (int i = 0; i < w.length; i++) {
            w[i] = headers[i].length();
            for (String[] r : rows) {
                w[i] = Math.max(w[i], r[i].length());
            }
        }
        String nl = System.lineSeparator();
        StringBuilder b = new StringBuilder();
        rule(b, w, '┌', '┬', '┐').append(nl);
        line(b, w, headers, new boolean[headers.length]).append(nl);
        rule(b, w, '├', '┼', '┤').append(nl);
        for (String[] r : rows) {
            line(b, w, r, right).append(nl);
        }
        rule(b, w, '└', '┴', '┘').append(nl);
        return b.toString();
    }

    private static StringBuilder rule(StringBuilder b, int[] w, char left, char mid, char end) {
        b.append(left);
        for (int i = 0; i < w.length; i++) {
            b.append("─".repeat(w[i] + 2)).append(i == w.length - 1 ? end : mid);
        }
        return b;
    }

    private static StringBuilder line(StringBuilder b, int[] w, String[] cells, boolean[] right) {
        b.append('│');
        for (int i = 0; i < w.length; i++) {
            String pad = " ".repeat(w[i] - cells[i].length());
            b.append(' ').append(right[i] ? pad + cells[i] : cells[i] + pad).append(" │");
        }
        return b;
    }

    /** {@code s} on one line, at most {@code max} characters: longer text ends with {@code …}; null stays null. */
    static String shorten(String s, int max) {
        if (s == null) return null;
        String line = s.strip().replaceAll("\\s+", " ");
        return line.length() <= max ? line : line.substring(0, max - 1).stripTrailing() + "…";
    }

    /** A path of at most {@code max} characters keeping its end ({@code …/app/src}); null stays null. */
    static String shortenPath(String s, int max) {
        if (s == null || s.length() <= max) return s;
        return "…" + s.substring(s.length() - (max - 1));
    }

    @Override
    public String toString() {
        return Arrays.toString(headers) + " × " + rows.size();
    }
}
