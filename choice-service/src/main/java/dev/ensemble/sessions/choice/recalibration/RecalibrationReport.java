package dev.ensemble.sessions.choice.recalibration;

import dev.ensemble.sessions.choice.Decision;
import dev.ensemble.sessions.choice.recalibration.Recalibration.Change;
import dev.ensemble.sessions.choice.recalibration.Recalibration.Comparison;
import dev.ensemble.sessions.choice.recalibration.Recalibration.Outcomes;

import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.function.Function;

/**
 * Renders a {@link Comparison}: a Markdown summary for the terminal ({@link #markdown}) and a self-contained HTML
 * report ({@link #html}) with inline SVG plots drawn here (no scripts, no network): the best score's distribution
 * per band before and after (bins of one point), and the confusion matrices of decisions and bands before × after.
 * Pure.
 */
public final class RecalibrationReport {
    /** At most this many changed and near-threshold decisions are listed one by one. */
    public static final int MAX_LISTED = 50;
    private static final Decision.Band[] SCORED = {Decision.Band.CONFIDENT, Decision.Band.UNSURE, Decision.Band.BELOW};
    private static final Map<Decision.Band, String> COLOR = Map.of(Decision.Band.CONFIDENT, "#2e7d32",
            Decision.Band.UNSURE, "#f9a825", Decision.Band.BELOW, "#9e9e9e", Decision.Band.NONE, "#cfd8dc");

    private RecalibrationReport() {
    }

    /** The terminal summary: changes, bands, decisions near a threshold, outcomes by band. */
    public static String markdown(Comparison c) {
        StringBuilder b = new StringBuilder();
        List<Change> changed = c.changed();
        long toNew = changed.stream().filter(x -> x.before() == Decision.Choice.CONTINUE && x.after() == Decision.Choice.NEW).count();
        long toCont = changed.stream().filter(x -> x.before() == Decision.Choice.NEW && x.after() == Decision.Choice.CONTINUE).count();
        long moved = changed.size() - toNew - toCont;
        b.append(String.format(Locale.ROOT, "Recalibration under config %s (bands: confident %s, unsure %s)%n%n",
                c.configVersion(), num(c.bands().confident()), num(c.bands().unsure())));
        b.append(String.format(Locale.ROOT, "%d decisions; %d change: %d continue → new, %d new → continue, %d continue another session%n%n",
                c.changes().size(), changed.size(), toNew, toCont, moved));
        b.append("| band | before | after |\n|---|---:|---:|\n");
        for (Decision.Band band : Decision.Band.values()) {
            b.append(String.format(Locale.ROOT, "| %s | %d | %d |%n", lower(band), c.bandsBefore().get(band), c.bandsAfter().get(band)));
        }
        b.append("\nChanged decisions").append(changed.size() > MAX_LISTED ? " (first " + MAX_LISTED + ")" : "").append(":\n\n");
        b.append("| run | task | before | after | session before | session after | best before | best after |\n|---|---|---|---|---|---|---:|---:|\n");
        for (Change x : changed.subList(0, Math.min(MAX_LISTED, changed.size()))) {
            b.append(String.format(Locale.ROOT, "| %s | %s | %s %s | %s %s | %s | %s | %s | %s |%n", x.runId(), dash(x.taskId()),
                    lower(x.before()), lower(x.bandBefore()), lower(x.after()), lower(x.bandAfter()), dash(x.sessionBefore()),
                    dash(x.sessionAfter()), num(x.bestBefore()), num(x.bestAfter())));
        }
        List<Change> near = c.nearThresholds();
        b.append(String.format(Locale.ROOT, "%nWithin %s point of a threshold after: %d%s%n%n", num(Recalibration.NEAR), near.size(),
                near.size() > MAX_LISTED ? " (first " + MAX_LISTED + ")" : ""));
        b.append("| run | band after | best after | session |\n|---|---|---:|---|\n");
        for (Change x : near.subList(0, Math.min(MAX_LISTED, near.size()))) {
            b.append(String.format(Locale.ROOT, "| %s | %s | %s | %s |%n", x.runId(), lower(x.bandAfter()), num(x.bestAfter()), dash(x.sessionAfter())));
        }
        b.append("\nOutcomes by band (SessionChoiceOutcome):\n\n");
        b.append("| band | when | decisions | with outcome | resumed | failed | mean tokens |\n|---|---|---:|---:|---:|---:|---:|\n");
        for (Decision.Band band : Decision.Band.values()) {
            outcomeRow(b, band, "before", c.outcomesBefore().get(band));
            outcomeRow(b, band, "after", c.outcomesAfter().get(band));
        }
        return b.toString();
    }

    private static void outcomeRow(StringBuilder b, Decision.Band band, String when, Outcomes o) {
        b.append(String.format(Locale.ROOT, "| %s | %s | %d | %d | %s | %s | %s |%n", lower(band), when, o.decisions(), o.withOutcome(),
                pct(o.resumedRate()), pct(o.failureRate()), Double.isNaN(o.meanTokens()) ? "–" : String.format(Locale.ROOT, "%.0f", o.meanTokens())));
    }

    /** A self-contained HTML page (inline CSS and SVG, no scripts): the summary, the plots and the tables. */
    public static String html(Comparison c) {
        StringBuilder h = new StringBuilder();
        h.append("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>Recalibration ")
                .append(esc(c.configVersion())).append("</title>\n<style>body{font-family:system-ui,sans-serif;margin:2em;max-width:1100px}"
                        + "table{border-collapse:collapse;margin:1em 0}td,th{border:1px solid #ccc;padding:3px 8px;text-align:right}"
                        + "th:first-child,td:first-child{text-align:left}svg{margin:0.5em 1em 0.5em 0}.plots{display:flex;flex-wrap:wrap}"
                        + "</style></head><body>\n");
        h.append("<h1>Recalibration under config ").append(esc(c.configVersion())).append("</h1>\n");
        List<Change> changed = c.changed();
        h.append(String.format(Locale.ROOT, "<p>%d decisions re-scored from their stored signals; <b>%d change</b>. Bands: confident ≥ %s, unsure ≥ %s.</p>%n",
                c.changes().size(), changed.size(), num(c.bands().confident()), num(c.bands().unsure())));
        h.append("<h2>Best score per band</h2>\n<div class=\"plots\">");
        h.append(histogram("Before (as recorded)", c.changes(), Change::bestBefore, Change::bandBefore, c));
        h.append(histogram("After (candidate config)", c.changes(), Change::bestAfter, Change::bandAfter, c));
        h.append("</div>\n<h2>Decisions before × after</h2>\n<div class=\"plots\">");
        String[] choices = {"continue", "new"};
        h.append(matrix("Decision", choices, c.decisions()));
        String[] bands = {"confident", "unsure", "below", "none"};
        h.append(matrix("Band", bands, c.bandMatrix()));
        h.append("</div>\n<h2>Summary</h2>\n<pre>").append(esc(markdown(c))).append("</pre>\n</body></html>\n");
        return h.toString();
    }

    /** Stacked bars of the best score in bins of one point, coloured by band, with the two thresholds as lines. */
    static String histogram(String title, List<Change> changes, Function<Change, Double> score, Function<Change, Decision.Band> band, Comparison c) {
        double lo = Math.min(0, Math.floor(Math.min(c.bands().unsure(), c.bands().confident()) - 1)), hi = c.bands().confident() + 2;
        for (Change x : changes) {
            Double s = score.apply(x);
            if (s == null) continue;
            lo = Math.min(lo, Math.floor(s));
            hi = Math.max(hi, Math.floor(s) + 1);
        }
        int bins = (int) (hi - lo);
        int[][] counts = new int[bins][SCORED.length];
        int max = 1;
        for (Change x : changes) {
            Double s = score.apply(x);
            if (s == null) continue;
            int i = Math.min(bins - 1, (int) (Math.floor(s) - lo));
            int k = band.apply(x).ordinal();
            if (k >= SCORED.length) continue;
            counts[i][k]++;
            max = Math.max(max, counts[i][0] + counts[i][1] + counts[i][2]);
        }
        int w = 500, ht = 260, left = 45, bottom = 30, top = 30;
        double bw = (double) (w - left - 10) / bins, plotH = ht - bottom - top;
        StringBuilder s = new StringBuilder();
        s.append(String.format(Locale.ROOT, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" role=\"img\" aria-label=\"%s\">", w, ht, esc(title)));
        s.append(String.format(Locale.ROOT, "<text x=\"%d\" y=\"18\" font-size=\"14\" font-weight=\"bold\">%s</text>", left, esc(title)));
        s.append(String.format(Locale.ROOT, "<text x=\"4\" y=\"%d\" font-size=\"11\">%d</text><text x=\"4\" y=\"%d\" font-size=\"11\">0</text>",
                top + 10, max, ht - bottom));
        for (int i = 0; i < bins; i++) {
            double y = ht - bottom;
            for (int k = 0; k < SCORED.length; k++) {
                if (counts[i][k] == 0) continue;
                double hgt = plotH * counts[i][k] / max;
                y -= hgt;
                s.append(String.format(Locale.ROOT, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"%s\"><title>%s..%s: %d %s</title></rect>",
                        left + i * bw + 1, y, Math.max(1, bw - 2), hgt, COLOR.get(SCORED[k]), num(lo + i), num(lo + i + 1), counts[i][k], lower(SCORED[k])));
            }
            if (bins <= 30 || i % 2 == 0) {
                s.append(String.format(Locale.ROOT, "<text x=\"%.1f\" y=\"%d\" font-size=\"10\">%s</text>", left + i * bw + 1, ht - bottom + 14, num(lo + i)));
            }
        }
        for (double t : new double[]{c.bands().unsure(), c.bands().confident()}) {
            double x = left + (t - lo) * bw;
            s.append(String.format(Locale.ROOT, "<line x1=\"%.1f\" x2=\"%.1f\" y1=\"%d\" y2=\"%d\" stroke=\"#c62828\" stroke-dasharray=\"4 3\"/>", x, x, top, ht - bottom));
        }
        int lx = left;
        for (Decision.Band b : SCORED) {
            s.append(String.format(Locale.ROOT, "<rect x=\"%d\" y=\"%d\" width=\"10\" height=\"10\" fill=\"%s\"/><text x=\"%d\" y=\"%d\" font-size=\"11\">%s</text>",
                    lx, ht - 12, COLOR.get(b), lx + 13, ht - 3, lower(b)));
            lx += 90;
        }
        s.append(String.format(Locale.ROOT, "<text x=\"%d\" y=\"%d\" font-size=\"11\">score (dashed: thresholds)</text>", lx, ht - 3));
        return s.append("</svg>").toString();
    }

    /** A confusion matrix, rows before and columns after, cells shaded by count. */
    static String matrix(String title, String[] labels, int[][] m) {
        int n = labels.length, cell = 70, left = 90, top = 50;
        int max = 1;
        for (int[] row : m) for (int v : row) max = Math.max(max, v);
        int w = left + n * cell + 10, ht = top + n * cell + 10;
        StringBuilder s = new StringBuilder();
        s.append(String.format(Locale.ROOT, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" role=\"img\" aria-label=\"%s\">", w, ht, esc(title)));
        s.append(String.format(Locale.ROOT, "<text x=\"4\" y=\"16\" font-size=\"13\" font-weight=\"bold\">%s: before (rows) × after (columns)</text>", esc(title)));
        for (int j = 0; j < n; j++) {
            s.append(String.format(Locale.ROOT, "<text x=\"%d\" y=\"%d\" font-size=\"11\">%s</text>", left + j * cell + 6, top - 6, labels[j]));
            s.append(String.format(Locale.ROOT, "<text x=\"4\" y=\"%d\" font-size=\"11\">%s</text>", top + j * cell + cell / 2, labels[j]));
        }
        for (int i = 0; i < n; i++) {
            for (int j = 0; j < n; j++) {
                double a = m[i][j] == 0 ? 0 : 0.15 + 0.85 * m[i][j] / max;
                String fill = i == j ? "46,125,50" : "198,40,40";
                s.append(String.format(Locale.ROOT, "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"rgba(%s,%.2f)\" stroke=\"#999\"/>",
                        left + j * cell, top + i * cell, cell, cell, fill, a));
                s.append(String.format(Locale.ROOT, "<text x=\"%d\" y=\"%d\" font-size=\"13\" text-anchor=\"middle\">%d</text>",
                        left + j * cell + cell / 2, top + i * cell + cell / 2 + 5, m[i][j]));
            }
        }
        return s.append("</svg>").toString();
    }

    private static String esc(String s) {
        return s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace("\"", "&quot;");
    }

    private static String lower(Enum<?> e) {
        return e.name().toLowerCase(Locale.ROOT);
    }

    private static String dash(String s) {
        return s == null ? "–" : s;
    }

    private static String num(Double d) {
        if (d == null) return "–";
        return d == Math.rint(d) ? String.valueOf(d.longValue()) : String.format(Locale.ROOT, "%.2f", d);
    }

    private static String pct(double d) {
        return Double.isNaN(d) ? "–" : String.format(Locale.ROOT, "%.0f%%", d * 100);
    }
}
