package dev.ensemble.sessions.deploy;

import com.fasterxml.jackson.databind.JsonNode;

import java.io.IOException;
import java.net.ConnectException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;

/**
 * The running system as a command of the CLI reaches it: the HTTP address in the data folder's
 * {@code endpoints.json} and the local person's bearer token in its {@code token} (both written by {@code up}). Every
 * failure is an {@link IllegalStateException} with one line for a person ({@code EnsembleSessions} prints it as
 * {@code error: …} and exits 1): no system started on the data folder, nothing listening at its address (it stopped),
 * the token refused, or the API's own error message.
 */
final class ApiClient {
    /** How long a gateway that is still reading the log after a start (503 {@code starting}) is asked again. */
    static final Duration STARTING_WAIT = Duration.ofSeconds(60);

    private final Path dataDirOption;
    private final DataDir data;
    private final String url;
    private final String token;
    private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

    private ApiClient(Path dataDirOption, DataDir data, String url, String token) {
        this.dataDirOption = dataDirOption;
        this.data = data;
        this.url = url;
        this.token = token;
    }

    /**
     * The system running on the data folder of a command's {@code --data-dir} option (null: the default).
     *
     * @throws IllegalStateException when no system was started there (no endpoints, no HTTP address or no token)
     */
    static ApiClient of(Path dataDirOption) throws IOException {
        DataDir data = DataDir.of(dataDirOption);
        String url = data.readEndpoints().path("http").asText(null);
        if (url == null || url.isBlank()) {
            throw new IllegalStateException(data.endpoints() + " names no HTTP address: start the system with 'ensemble-sessions up'");
        }
        return new ApiClient(dataDirOption, data, url, readLine(data.token(), "token", dataDirOption));
    }

    DataDir data() {
        return data;
    }

    String url() {
        return url;
    }

    String token() {
        return token;
    }

    /** A request to {@code path} (with its query) carrying the token. */
    HttpRequest.Builder request(String path) {
        return HttpRequest.newBuilder(URI.create(url + path)).header("Authorization", "Bearer " + token);
    }

    /**
     * {@code GET path} as JSON; a 503 (starting) is asked again for up to {@link #STARTING_WAIT}.
     *
     * @throws IllegalStateException for any answer but 200, with the API's message
     */
    JsonNode get(String path) throws Exception {
        HttpResponse<String> r = getResponse(path);
        if (r.statusCode() != 200) {
            throw new IllegalStateException(url + path + " answered " + r.statusCode() + ": " + message(r.body()));
        }
        return DataDir.JSON.readTree(r.body());
    }

    /**
     * {@code GET path}, its answer as it came but for a 401 (an {@link IllegalStateException} naming the token file)
     * and a 503 (asked again for up to {@link #STARTING_WAIT}, then returned).
     */
    HttpResponse<String> getResponse(String path) throws Exception {
        long until = System.nanoTime() + STARTING_WAIT.toNanos();
        while (true) {
            HttpResponse<String> r = send(request(path).timeout(Duration.ofSeconds(30)).GET().build());
            if (r.statusCode() == 401) {
                throw new IllegalStateException("the system at " + url + " refused the token in " + data.token()
                        + " (" + message(r.body()) + ")");
            }
            if (r.statusCode() != 503 || System.nanoTime() > until) {
                return r;
            }
            Thread.sleep(1000); // still reading the log after a start
        }
    }

    /** Sends a request; nothing listening at the address is one line saying to start the system. */
    HttpResponse<String> send(HttpRequest request) throws Exception {
        try {
            return http.send(request, HttpResponse.BodyHandlers.ofString());
        } catch (ConnectException e) {
            throw new IllegalStateException("nothing runs at " + url + " (the address in " + data.endpoints()
                    + "): start the system with 'ensemble-sessions up" + dataDirHint(dataDirOption) + "'", e);
        }
    }

    /** The API's error {@code message} of a response body, else the body as it came. */
    static String message(String body) {
        try {
            JsonNode n = DataDir.JSON.readTree(body);
            if (n != null && n.hasNonNull("message")) return n.path("message").asText();
        } catch (IOException notJson) {
            // the body as it came
        }
        return body == null ? "" : body.strip();
    }

    /**
     * The first line of a file {@code up} writes in the data folder, e.g. the token.
     *
     * @throws IllegalStateException when it is missing: the system was not started there
     */
    String readLine(Path file, String what) throws IOException {
        return readLine(file, what, dataDirOption);
    }

    private static String readLine(Path file, String what, Path dataDirOption) throws IOException {
        if (!Files.isRegularFile(file)) {
            throw new IllegalStateException("no " + what + " in " + file + ": start the system with 'ensemble-sessions up"
                    + dataDirHint(dataDirOption) + "'");
        }
        return Files.readString(file).strip();
    }

    private static String dataDirHint(Path dataDirOption) {
        return dataDirOption == null ? "" : " --data-dir " + dataDirOption;
    }
}
