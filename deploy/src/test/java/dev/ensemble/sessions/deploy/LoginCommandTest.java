package dev.ensemble.sessions.deploy;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@code ensemble-sessions login} against a stand-in for the API (the real endpoint is tested in GatewayHttpTest and
 * the link in a browser in WebPageBrowserTest): it asks {@code POST /api/login-links} with the data folder's token and
 * prints the link on the data folder's address; a refused token names its file; nothing running is one line.
 */
class LoginCommandTest {
    private static final String NL = System.lineSeparator();

    @Test
    void printsANewLoginLink(@TempDir Path dir) throws Exception {
        List<String> asked = new CopyOnWriteArrayList<>();
        com.sun.net.httpserver.HttpServer server = com.sun.net.httpserver.HttpServer.create(
                new java.net.InetSocketAddress(java.net.InetAddress.getLoopbackAddress(), 0), 0);
        server.createContext("/api/login-links", x -> {
            asked.add(x.getRequestMethod() + " " + x.getRequestHeaders().getFirst("Authorization"));
            boolean known = "Bearer t-1".equals(x.getRequestHeaders().getFirst("Authorization"));
            byte[] body = (known ? "{\"url\": \"http://127.0.0.1:1/login?token=abc\", \"path\": \"/login?token=abc\"}"
                    : "{\"error\": \"unauthorized\", \"message\": \"this token is not known\"}").getBytes(StandardCharsets.UTF_8);
            x.sendResponseHeaders(known ? 201 : 401, body.length);
            x.getResponseBody().write(body);
            x.close();
        });
        server.start();
        try {
            String url = "http://127.0.0.1:" + server.getAddress().getPort();
            new DataDir(dir).writeEndpoints(url, "127.0.0.1:1");
            Files.writeString(dir.resolve("token"), "t-1\n");
            ChooseCommandTest.Run ok = ChooseCommandTest.cli("login", "--data-dir", dir.toString());
            assertThat(ok.code()).as(ok.err()).isZero();
            assertThat(ok.out()).isEqualTo(url + "/login?token=abc" + NL);
            assertThat(asked).containsExactly("POST Bearer t-1");

            Files.writeString(dir.resolve("token"), "t-old\n");
            ChooseCommandTest.Run refused = ChooseCommandTest.cli("login", "--data-dir", dir.toString());
            assertThat(refused.code()).isEqualTo(1);
            assertThat(refused.err()).isEqualTo("error: the system at " + url + " refused the token in " + dir.resolve("token")
                    + " (this token is not known)" + NL);
        } finally {
            server.stop(0);
        }
        ChooseCommandTest.Run none = ChooseCommandTest.cli("login", "--data-dir", dir.resolve("nothing").toString());
        assertThat(none.code()).isEqualTo(1);
        assertThat(none.err()).startsWith("error: no running system found in ");
    }
}
