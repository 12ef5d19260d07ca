package dev.ensemble.sessions.deploy;

import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

import java.io.PrintWriter;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.concurrent.Callable;

/**
 * {@code ensemble-sessions login [--data-dir DIR]}: prints a new one-time login link for the web page of the running
 * system of the data folder ({@code POST /api/login-links} with the data folder's token), as {@code up} prints one when
 * it is ready; opened in a browser it signs that browser in (an HttpOnly, SameSite=Strict cookie). Exit code 0; 1 with
 * one line when no system runs on the data folder or it refused the token.
 */
@Command(name = "login", mixinStandardHelpOptions = true,
        description = "Print a new one-time login link for the web page of the running system.")
final class LoginCommand implements Callable<Integer> {
    @picocli.CommandLine.Mixin
    RunningSystemOption system = new RunningSystemOption();

    @picocli.CommandLine.Spec
    picocli.CommandLine.Model.CommandSpec spec;

    @Override
    public Integer call() throws Exception {
        ApiClient api = ApiClient.of(system.dataDir);
        HttpResponse<String> r = api.send(api.request("/api/login-links").timeout(Duration.ofSeconds(30))
                .POST(HttpRequest.BodyPublishers.noBody()).build());
        if (r.statusCode() == 401) {
            throw new IllegalStateException("the system at " + api.url() + " refused the token in " + api.data().token()
                    + " (" + ApiClient.message(r.body()) + ")");
        }
        if (r.statusCode() != 201) {
            throw new IllegalStateException(api.url() + "/api/login-links answered " + r.statusCode() + ": " + ApiClient.message(r.body()));
        }
        PrintWriter out = spec.commandLine().getOut();
        out.println(api.url() + DataDir.JSON.readTree(r.body()).path("path").asText());
        out.flush();
        return 0;
    }
}
