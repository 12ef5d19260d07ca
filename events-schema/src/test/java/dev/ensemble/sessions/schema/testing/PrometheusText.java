package dev.ensemble.sessions.schema.testing;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Pattern;

/**
 * A strict reader of the Prometheus text exposition format, version 0.0.4 (what {@code GET /metrics} serves): every
 * line is a {@code # HELP}, a {@code # TYPE} (at most one per family, before its samples), another comment, a blank line
 * or a sample {@code name{label="value",...} value [timestamp]} with valid metric and label names, escapes
 * ({@code \\ \" \n}) and a float value ({@code NaN}, {@code +Inf}, {@code -Inf} included). Anything else is an
 * {@link IllegalArgumentException} naming the line; so is a series given twice. For tests that scrape {@code GET /metrics}.
 */
public final class PrometheusText {
    private static final Pattern METRIC = Pattern.compile("[a-zA-Z_:][a-zA-Z0-9_:]*");
    private static final Pattern LABEL = Pattern.compile("[a-zA-Z_][a-zA-Z0-9_]*");
    private static final Set<String> TYPES = Set.of("counter", "gauge", "histogram", "summary", "untyped");

    /** One sample: its metric name, labels (in order) and value. */
    public record Sample(String name, Map<String, String> labels, double value) {
    }

    private final Map<String, String> types = new LinkedHashMap<>();
    private final List<Sample> samples = new ArrayList<>();

    private PrometheusText() {
    }

    public static PrometheusText parse(String text) {
        PrometheusText out = new PrometheusText();
        Set<String> seen = new LinkedHashSet<>();
        String[] lines = text.split("\n", -1);
        for (int i = 0; i < lines.length; i++) {
            String line = lines[i];
            try {
                out.line(line, seen);
            } catch (RuntimeException e) {
                throw new IllegalArgumentException("line " + (i + 1) + " is not the text format (" + e.getMessage() + "): " + line, e);
            }
        }
        return out;
    }

    private void line(String line, Set<String> seen) {
        if (line.isBlank()) {
            return;
        }
        if (line.startsWith("#")) {
            String[] parts = line.split(" ", 4);
            if (parts.length >= 3 && (parts[1].equals("HELP") || parts[1].equals("TYPE"))) {
                require(METRIC.matcher(parts[2]).matches(), "bad metric name " + parts[2]);
                if (parts[1].equals("TYPE")) {
                    require(parts.length == 4 && TYPES.contains(parts[3]), "bad type");
                    require(types.put(parts[2], parts[3]) == null, "a second TYPE for " + parts[2]);
                    require(samples.stream().noneMatch(s -> family(s.name()).equals(parts[2]) || s.name().equals(parts[2])),
                            "TYPE after the samples of " + parts[2]);
                }
            }
            return;
        }
        int i = 0;
        while (i < line.length() && line.charAt(i) != '{' && line.charAt(i) != ' ') {
            i++;
        }
        String name = line.substring(0, i);
        require(METRIC.matcher(name).matches(), "bad metric name '" + name + "'");
        Map<String, String> labels = new LinkedHashMap<>();
        if (i < line.length() && line.charAt(i) == '{') {
            i++;
            while (true) {
                require(i < line.length(), "unterminated labels");
                if (line.charAt(i) == '}') {
                    i++;
                    break;
                }
                int eq = line.indexOf('=', i);
                require(eq > i, "a label without '='");
                String label = line.substring(i, eq);
                require(LABEL.matcher(label).matches(), "bad label name '" + label + "'");
                require(eq + 1 < line.length() && line.charAt(eq + 1) == '"', "a label value must be quoted");
                StringBuilder v = new StringBuilder();
                int j = eq + 2;
                while (true) {
                    require(j < line.length(), "unterminated label value");
                    char c = line.charAt(j);
                    if (c == '"') {
                        break;
                    }
                    if (c == '\\') {
                        require(j + 1 < line.length(), "a dangling escape");
                        char e = line.charAt(j + 1);
                        v.append(switch (e) {
                            case '\\' -> '\\';
                            case '"' -> '"';
                            case 'n' -> '\n';
                            default -> throw new IllegalArgumentException("bad escape \\" + e);
                        });
                        j += 2;
                    } else {
                        v.append(c);
                        j++;
                    }
                }
                require(labels.put(label, v.toString()) == null, "label " + label + " twice");
                i = j + 1;
                require(i < line.length(), "unterminated labels");
                if (line.charAt(i) == ',') {
                    i++;
                } else {
                    require(line.charAt(i) == '}', "expected ',' or '}'");
                }
            }
        }
        require(i < line.length() && line.charAt(i) == ' ', "no value");
        String[] rest = line.substring(i + 1).split(" ", -1);
        require(rest.length == 1 || rest.length == 2, "expected a value and at most a timestamp");
        double value = switch (rest[0]) {
            case "NaN" -> Double.NaN;
            case "+Inf" -> Double.POSITIVE_INFINITY;
            case "-Inf" -> Double.NEGATIVE_INFINITY;
            default -> {
                require(rest[0].matches("[-+]?(\\d+\\.?\\d*|\\.\\d+)([eE][-+]?\\d+)?"), "bad value '" + rest[0] + "'");
                yield Double.parseDouble(rest[0]);
            }
        };
        if (rest.length == 2) {
            require(rest[1].matches("-?\\d+"), "bad timestamp '" + rest[1] + "'");
        }
        require(seen.add(name + labels), "series given twice");
        samples.add(new Sample(name, labels, value));
    }

    private static String family(String sample) {
        for (String suffix : List.of("_count", "_sum", "_bucket", "_max")) {
            if (sample.endsWith(suffix)) {
                return sample.substring(0, sample.length() - suffix.length());
            }
        }
        return sample;
    }

    private static void require(boolean ok, String problem) {
        if (!ok) {
            throw new IllegalArgumentException(problem);
        }
    }

    /** The metric names of every sample. */
    public Set<String> names() {
        Set<String> out = new LinkedHashSet<>();
        samples.forEach(s -> out.add(s.name()));
        return out;
    }

    /** The declared type of a family (null when none was declared). */
    public String type(String family) {
        return types.get(family);
    }

    /** The samples of one metric name. */
    public List<Sample> series(String name) {
        return samples.stream().filter(s -> s.name().equals(name)).toList();
    }

    /** The sum of the samples named {@code name} whose labels include {@code labels}; fails when there is none. */
    public double value(String name, Map<String, String> labels) {
        List<Sample> match = matching(name, labels);
        if (match.isEmpty()) {
            throw new AssertionError("no series " + name + labels + " among " + series(name));
        }
        return match.stream().mapToDouble(Sample::value).sum();
    }

    /** {@link #value}, or {@code absent} when there is no such series. */
    public double valueOr(String name, Map<String, String> labels, double absent) {
        List<Sample> match = matching(name, labels);
        return match.isEmpty() ? absent : match.stream().mapToDouble(Sample::value).sum();
    }

    private List<Sample> matching(String name, Map<String, String> labels) {
        return samples.stream().filter(s -> s.name().equals(name) && s.labels().entrySet().containsAll(labels.entrySet())).toList();
    }
}
