package dev.airlock.remote;

import dev.airlock.ConfigurationException;
import okhttp3.Credentials;
import okhttp3.OkHttpClient;

import java.io.IOException;
import java.io.InputStream;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.security.GeneralSecurityException;
import java.security.KeyStore;
import java.security.cert.Certificate;
import java.security.cert.CertificateFactory;
import java.util.Collection;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import javax.net.ssl.SSLContext;
import javax.net.ssl.TrustManager;
import javax.net.ssl.TrustManagerFactory;
import javax.net.ssl.X509TrustManager;

/**
 * Builds the OkHttp client a cloud backend uses: timeouts from {@link HttpSettings}, a custom CA
 * file, the proxy from the environment, and OkHttp's own retry off (resilience4j owns retries in
 * {@link RemoteCalls}; two layers would multiply them and could resend a dispatch). No logging
 * interceptor: headers are never logged, so the Authorization header has nothing to leak through.
 * Each environment owns its client and calls {@link #close(OkHttpClient)} when it closes.
 */
public final class HttpClients {
    private HttpClients() {
    }

    public static OkHttpClient create(HttpSettings s) {
        OkHttpClient.Builder b = new OkHttpClient.Builder()
                .connectTimeout(s.connectTimeout().toMillis(), TimeUnit.MILLISECONDS)
                .readTimeout(s.readTimeout().toMillis(), TimeUnit.MILLISECONDS)
                .writeTimeout(s.readTimeout().toMillis(), TimeUnit.MILLISECONDS)
                .callTimeout(s.callTimeout().toMillis(), TimeUnit.MILLISECONDS)
                .retryOnConnectionFailure(false)
                .followRedirects(false) // a redirect could carry the Authorization header elsewhere
                .proxySelector(s.proxy())
                .proxyAuthenticator((route, response) -> {
                    if (route == null || response.request().header("Proxy-Authorization") != null
                            || !(route.proxy().address() instanceof InetSocketAddress a)) {
                        return null; // credentials already refused once: do not loop
                    }
                    Optional<EnvProxySelector.Endpoint> e = s.proxy().endpointFor(a);
                    if (e.isEmpty() || e.get().user().isEmpty()) {
                        return null;
                    }
                    String password = e.get().password().map(p -> p.reveal()).orElse("");
                    return response.request().newBuilder()
                            .header("Proxy-Authorization", Credentials.basic(e.get().user().get(), password)).build();
                });
        if (s.caFile().isPresent()) {
            X509TrustManager tm = trustOnly(s.caFile().get());
            try {
                SSLContext ctx = SSLContext.getInstance("TLS");
                ctx.init(null, new TrustManager[] {tm}, null);
                b.sslSocketFactory(ctx.getSocketFactory(), tm);
            } catch (GeneralSecurityException e) {
                throw new ConfigurationException("cannot set up TLS with the CA file " + s.caFile().get() + ": " + e.getMessage(), e);
            }
        }
        return b.build();
    }

    /** Stops the client's threads and closes its pooled connections. */
    public static void close(OkHttpClient client) {
        client.dispatcher().executorService().shutdown();
        client.connectionPool().evictAll();
    }

    private static X509TrustManager trustOnly(java.nio.file.Path pem) {
        try (InputStream in = Files.newInputStream(pem)) {
            Collection<? extends Certificate> certs = CertificateFactory.getInstance("X.509").generateCertificates(in);
            if (certs.isEmpty()) {
                throw new ConfigurationException("the CA file " + pem + " holds no certificate; it must be PEM (-----BEGIN CERTIFICATE-----)");
            }
            KeyStore ks = KeyStore.getInstance(KeyStore.getDefaultType());
            ks.load(null, null);
            int i = 0;
            for (Certificate c : certs) {
                ks.setCertificateEntry("ca-" + i++, c);
            }
            TrustManagerFactory tmf = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
            tmf.init(ks);
            for (TrustManager tm : tmf.getTrustManagers()) {
                if (tm instanceof X509TrustManager x) {
                    return x;
                }
            }
            throw new ConfigurationException("no X.509 trust manager in this JVM for the CA file " + pem);
        } catch (IOException | GeneralSecurityException e) {
            throw new ConfigurationException("cannot read the CA file " + pem + " (" + e.getMessage()
                    + "); it must be PEM certificates", e);
        }
    }
}
