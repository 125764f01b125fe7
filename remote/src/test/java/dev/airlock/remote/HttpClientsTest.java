package dev.airlock.remote;

import dev.airlock.AirlockException;
import dev.airlock.ConfigurationException;
import dev.airlock.settings.Secret;
import dev.airlock.settings.Settings;
import mockwebserver3.MockResponse;
import mockwebserver3.MockWebServer;
import okhttp3.OkHttpClient;
import okhttp3.Request;
import okhttp3.tls.HandshakeCertificates;
import okhttp3.tls.HeldCertificate;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.Optional;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class HttpClientsTest {
    static final String TOKEN = "tok-3f9a7c1e5b2d4a68";

    @Test
    void aCustomCaFileIsTrustedAndNothingElse(@TempDir Path dir) throws Exception {
        HeldCertificate ca = new HeldCertificate.Builder().certificateAuthority(0).commonName("test ca").build();
        HeldCertificate leaf = new HeldCertificate.Builder().signedBy(ca).addSubjectAlternativeName("localhost").build();
        HandshakeCertificates serverCerts = new HandshakeCertificates.Builder().heldCertificate(leaf, ca.certificate()).build();
        Path pem = dir.resolve("ca.pem");
        Files.writeString(pem, ca.certificatePem());
        try (MockWebServer server = new MockWebServer()) {
            server.useHttps(serverCerts.sslSocketFactory());
            server.enqueue(new MockResponse.Builder().body("hello").build());
            server.enqueue(new MockResponse.Builder().body("hello").build());
            server.start();
            Settings s = Settings.of("airlock.acme.ca-file", pem.toString());
            OkHttpClient trusting = HttpClients.create(HttpSettings.from(s, "airlock.acme", Map.of()));
            Request req = new Request.Builder().url(server.url("/x").newBuilder().host("localhost").build()).build();
            assertEquals("hello", Http.execute(trusting, req, "", Redactor.of(), r -> r.body().string()));
            OkHttpClient plain = HttpClients.create(HttpSettings.defaults());
            RemoteCalls calls = new RemoteCalls(new Service("Acme", "ACME_TOKEN", "airlock.acme.url"),
                    RetryPolicy.defaults().withSleeper(d -> { }));
            AirlockException e = assertThrows(AirlockException.class, () -> calls.call(CallKind.READ, "get",
                    Resource.none(), () -> Http.execute(plain, req, "", Redactor.of(), r -> r.body().string())));
            assertTrue(e.getMessage().startsWith("cannot reach Acme"), e.getMessage());
            HttpClients.close(trusting);
            HttpClients.close(plain);
        }
    }

    @Test
    void aBadCaFileOrTimeoutIsOneLineNamingTheKey(@TempDir Path dir) throws Exception {
        Path junk = Files.writeString(dir.resolve("junk.pem"), "not a certificate");
        ConfigurationException e = assertThrows(ConfigurationException.class, () -> HttpClients.create(
                HttpSettings.from(Settings.of("airlock.acme.ca-file", junk.toString()), "airlock.acme", Map.of())));
        assertTrue(e.getMessage().contains(junk.toString()), e.getMessage());
        assertThrows(ConfigurationException.class, () -> HttpSettings.from(
                Settings.of("airlock.acme.ca-file", dir.resolve("none.pem").toString()), "airlock.acme", Map.of()));
        assertEquals(Duration.ofSeconds(3), HttpSettings.from(Settings.of("airlock.acme.connect-timeout", "3s"),
                "airlock.acme", Map.of()).connectTimeout());
    }

    @Test
    void theTokenTravelsOnlyInItsHeaderAndNeverInTextWePrint() throws Exception {
        BearerToken token = new BearerToken(Secret.of(TOKEN));
        try (MockWebServer server = new MockWebServer()) {
            // A service that echoes the header back in its error, as some do.
            server.enqueue(new MockResponse.Builder().code(400)
                    .body("{\"message\":\"bad header Authorization: Bearer " + TOKEN + "\"}").build());
            server.start();
            OkHttpClient client = HttpClients.create(HttpSettings.defaults());
            Request req = token.apply(new Request.Builder().url(server.url("/x?token=" + TOKEN))).build();
            RemoteCalls calls = new RemoteCalls(new Service("Acme", "ACME_TOKEN", "airlock.acme.url"),
                    RetryPolicy.defaults().withSleeper(d -> { }));
            AirlockException e = assertThrows(AirlockException.class, () -> calls.call(CallKind.READ, "get", Resource.none(),
                    () -> Http.execute(client, req, "", Redactor.of(token.secret()), r -> r.body().string())));
            assertEquals("Bearer " + TOKEN, server.takeRequest().getHeaders().get("Authorization"), "sent where it belongs");
            assertFalse(e.getMessage().contains(TOKEN), e.getMessage());
            assertFalse(String.valueOf(e.getCause()).contains(TOKEN));
            assertFalse(token.toString().contains(TOKEN));
            assertFalse(req.headers().toString().contains(TOKEN), "OkHttp redacts Authorization in Headers.toString");
            assertEquals("q?token=[redacted]&a=1", Redactor.of().redact("q?token=abc&a=1"));
            HttpClients.close(client);
        }
    }

    @Test
    void proxyFromTheUsualVariablesWithNoProxyAndLoopbackDirect() {
        EnvProxySelector p = EnvProxySelector.from(Map.of("https_proxy", "http://user:pa55word@proxy.corp:3128",
                "HTTP_PROXY", "proxy.corp:8080", "NO_PROXY", "internal.corp, .svc"));
        assertEquals(3128, p.forTarget("https", "api.daytona.io").orElseThrow().port());
        assertEquals(8080, p.forTarget("http", "api.daytona.io").orElseThrow().port());
        assertEquals(Optional.empty(), p.forTarget("https", "a.internal.corp"));
        assertEquals(Optional.empty(), p.forTarget("https", "x.svc"));
        assertEquals(Optional.empty(), p.forTarget("http", "127.0.0.1"));
        assertEquals("pa55word", p.forTarget("https", "a.b").orElseThrow().password().orElseThrow().reveal());
        assertFalse(p.toString().contains("pa55word"), p.toString());
        ConfigurationException bad = assertThrows(ConfigurationException.class,
                () -> EnvProxySelector.from(Map.of("HTTPS_PROXY", "socks5://u:s3cretpw@h:1")));
        assertFalse(bad.getMessage().contains("s3cretpw"));
    }
}
