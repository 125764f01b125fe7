package dev.airlock.docker;

import org.bouncycastle.asn1.pkcs.PrivateKeyInfo;
import org.bouncycastle.openssl.PEMKeyPair;
import org.bouncycastle.openssl.PEMParser;
import org.bouncycastle.openssl.jcajce.JcaPEMKeyConverter;
import dev.airlock.ConfigurationException;

import java.io.IOException;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.security.GeneralSecurityException;
import java.security.KeyStore;
import java.security.PrivateKey;
import java.security.cert.Certificate;
import java.security.cert.CertificateFactory;
import java.security.cert.X509Certificate;
import java.io.InputStream;
import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.TrustManagerFactory;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLParameters;
import javax.net.ssl.SSLSocket;

/**
 * TLS to a {@code tcp://} daemon, as the Docker CLI does it with {@code DOCKER_TLS_VERIFY}: the
 * daemon's certificate checked against {@code ca.pem} and its host name, and this client's
 * {@code cert.pem} and {@code key.pem} presented. The three files live in one directory
 * ({@code DOCKER_CERT_PATH}, a context's TLS material, or the CLI's configuration directory).
 * Verification is never skipped: a daemon worth a client certificate is worth checking.
 *
 * @param certPath the directory holding {@code ca.pem}, {@code cert.pem} and {@code key.pem}
 * @param origin   where the directory came from, for error messages (a setting or variable name)
 */
record DockerTls(Path certPath, String origin) {
    static final List<String> FILES = List.of("ca.pem", "cert.pem", "key.pem");
    /** The in-memory key store's password: it never reaches a file. */
    private static final char[] STORE_PASSWORD = "airlock".toCharArray();

    /** Fails in one line when a file is missing or unreadable; the files themselves are read by {@link #context()}. */
    DockerTls {
        List<String> missing = new ArrayList<>();
        for (String f : FILES) {
            if (!Files.isReadable(certPath.resolve(f))) {
                missing.add(f);
            }
        }
        if (!missing.isEmpty()) {
            throw new ConfigurationException("TLS to the Docker daemon needs ca.pem, cert.pem and key.pem in " + certPath
                    + " (" + origin + "), but " + String.join(", ", missing) + (missing.size() == 1 ? " is" : " are")
                    + " missing or unreadable: point " + DockerSettings.CERT_PATH + " or DOCKER_CERT_PATH at the directory"
                    + " docker itself uses");
        }
    }

    /**
     * The client's TLS context: the CA as the only trust anchor, the client certificate as its key.
     * TLS 1.3 where the daemon speaks it (docker-java's own context stops at 1.2, where a
     * half-close is not defined: stdin's end could not be told apart from the connection's), and
     * no security provider registered in the user's JVM (docker-java's registers BouncyCastle).
     */
    SSLContext context() {
        try {
            List<X509Certificate> chain = certificates("cert.pem");
            KeyStore keys = KeyStore.getInstance("PKCS12");
            keys.load(null, null);
            keys.setKeyEntry("client", privateKey(), STORE_PASSWORD, chain.toArray(new X509Certificate[0]));
            KeyManagerFactory kmf = KeyManagerFactory.getInstance(KeyManagerFactory.getDefaultAlgorithm());
            kmf.init(keys, STORE_PASSWORD);
            KeyStore trust = KeyStore.getInstance("PKCS12");
            trust.load(null, null);
            List<X509Certificate> cas = certificates("ca.pem");
            for (int i = 0; i < cas.size(); i++) {
                trust.setCertificateEntry("ca" + i, cas.get(i));
            }
            TrustManagerFactory tmf = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
            tmf.init(trust);
            SSLContext c = SSLContext.getInstance("TLS");
            c.init(kmf.getKeyManagers(), tmf.getTrustManagers(), null);
            return c;
        } catch (IOException | GeneralSecurityException e) {
            throw unusable(DockerDaemon.oneLine(String.valueOf(e.getMessage())));
        }
    }

    private List<X509Certificate> certificates(String file) throws IOException, GeneralSecurityException {
        List<X509Certificate> out = new ArrayList<>();
        try (InputStream in = Files.newInputStream(certPath.resolve(file))) {
            for (Certificate c : CertificateFactory.getInstance("X.509").generateCertificates(in)) {
                out.add((X509Certificate) c);
            }
        }
        if (out.isEmpty()) {
            throw unusable(file + " holds no certificate");
        }
        return out;
    }

    /** key.pem in any form openssl writes unencrypted: PKCS#8, PKCS#1 (RSA) or SEC1 (EC); parsed with the JDK's own key factories. */
    private PrivateKey privateKey() throws IOException {
        try (PEMParser pem = new PEMParser(Files.newBufferedReader(certPath.resolve("key.pem"), StandardCharsets.US_ASCII))) {
            Object o = pem.readObject();
            JcaPEMKeyConverter converter = new JcaPEMKeyConverter();
            if (o instanceof PEMKeyPair pair) {
                return converter.getKeyPair(pair).getPrivate();
            }
            if (o instanceof PrivateKeyInfo info) {
                return converter.getPrivateKey(info);
            }
            throw unusable("key.pem holds " + (o == null ? "no PEM key" : "no unencrypted private key")
                    + " (docker's keys are unencrypted PEM; decrypt it with openssl pkey)");
        }
    }

    private ConfigurationException unusable(String why) {
        return new ConfigurationException("cannot use the TLS files in " + certPath + " (" + origin + "): " + why
                + "; they must be PEM files as docker's own (ca.pem, cert.pem, key.pem)");
    }

    /**
     * Layers TLS over a connected socket and completes the handshake, checking that the daemon's
     * certificate names {@code host} (as HTTPS does). Closing the TLS socket closes {@code raw}.
     */
    static SSLSocket layer(SSLContext context, Socket raw, String host, int port) throws IOException {
        SSLSocket s = (SSLSocket) context.getSocketFactory().createSocket(raw, host, port, true);
        SSLParameters p = s.getSSLParameters();
        p.setEndpointIdentificationAlgorithm("HTTPS");
        s.setSSLParameters(p);
        s.startHandshake();
        return s;
    }
}
