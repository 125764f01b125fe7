package dev.airlock.remote;

import okhttp3.OkHttpClient;
import okhttp3.Request;
import okhttp3.Response;
import okhttp3.ResponseBody;

import java.io.IOException;
import java.io.InputStream;
import java.net.ConnectException;
import java.net.NoRouteToHostException;
import java.net.UnknownHostException;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import javax.net.ssl.SSLHandshakeException;

/**
 * One OkHttp exchange as a {@link RemoteCalls} call: a success is read by the caller's
 * {@link BodyReader}; everything else becomes a {@link WireFailure} (not sent, lost, or an
 * error status with the service's message, redacted, and its Retry-After).
 */
public final class Http {
    private static final int ERROR_BODY_MAX = 4096;
    // The shapes in use: Daytona {"message": ...}, Vercel {"error": {"message": ...}}, both flat enough for this.
    private static final Pattern MESSAGE = Pattern.compile("\"message\"\\s*:\\s*\"((?:[^\"\\\\]|\\\\.)*)\"");
    private static final Pattern CODE = Pattern.compile("\"code\"\\s*:\\s*\"([A-Za-z0-9_.-]{1,64})\"");

    /** Reads a successful response; an IOException while reading means the answer was lost. */
    @FunctionalInterface
    public interface BodyReader<T> {
        T read(Response response) throws IOException;
    }

    private Http() {
    }

    /**
     * Runs {@code request}. {@code bucket} names the rate-limit bucket for a
     * {@code Retry-After-<bucket>} header (Daytona's {@code sandbox-create}), or is empty.
     */
    public static <T> T execute(OkHttpClient client, Request request, String bucket, Redactor redactor,
                                BodyReader<T> reader) {
        Response response;
        try {
            response = client.newCall(request).execute();
        } catch (ConnectException | UnknownHostException | NoRouteToHostException | SSLHandshakeException e) {
            throw WireFailure.notSent(redacted(e, redactor));
        } catch (IOException e) {
            throw WireFailure.lost(redacted(e, redactor));
        }
        try (response) {
            if (!response.isSuccessful()) {
                throw WireFailure.http(response.code(), redactor.redact(errorMessage(response)),
                        RetryAfter.fromHeaders(response::header, response.headers().names(), bucket, Instant.now()));
            }
            return reader.read(response);
        } catch (IOException e) {
            throw WireFailure.lost(redacted(e, redactor));
        }
    }

    private static String errorMessage(Response response) {
        ResponseBody body = response.body();
        String text;
        try (InputStream in = body.byteStream()) {
            text = new String(in.readNBytes(ERROR_BODY_MAX), StandardCharsets.UTF_8);
        } catch (IOException e) {
            text = "";
        }
        Matcher m = MESSAGE.matcher(text);
        if (m.find()) {
            String msg = m.group(1).replace("\\\"", "\"").replace("\\\\", "\\");
            Matcher c = CODE.matcher(text);
            return c.find() ? c.group(1) + ": " + msg : msg;
        }
        String t = text.strip();
        return t.startsWith("<") ? "" : t; // an HTML error page says nothing useful in one line
    }

    private static IOException redacted(IOException e, Redactor redactor) {
        String m = e.getMessage();
        if (m == null || redactor.redact(m).equals(m)) {
            return e;
        }
        IOException r = new IOException(e.getClass().getSimpleName() + ": " + redactor.redact(m));
        r.setStackTrace(e.getStackTrace());
        return r;
    }
}
