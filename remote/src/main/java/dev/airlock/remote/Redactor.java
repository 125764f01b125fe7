package dev.airlock.remote;

import dev.airlock.settings.Secret;

import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Takes secrets out of text that came from elsewhere (a service's error body may echo a header
 * back) before it reaches an exception or a log line: the known secret values, and anything that
 * looks like a bearer token or a token query parameter.
 */
public final class Redactor {
    static final String MARK = "[redacted]";
    private static final Pattern BEARER = Pattern.compile("(?i)(bearer|basic|token)(\\s+|=|:\\s*)[A-Za-z0-9._~+/=-]{8,}");
    private static final Pattern QUERY = Pattern.compile("(?i)([?&](?:token|access_token|api_key|apikey|key|secret)=)[^&\\s\"]+");

    private final List<String> values;

    private Redactor(List<String> values) {
        this.values = values;
    }

    /** A redactor for these secrets (empty ones are ignored). */
    public static Redactor of(Secret... secrets) {
        List<String> v = new ArrayList<>();
        for (Secret s : secrets) {
            if (s != null && !s.isEmpty()) {
                String clear = s.reveal();
                if (clear.length() >= 4) { // shorter values would redact ordinary words
                    v.add(clear);
                }
            }
        }
        v.sort((a, b) -> b.length() - a.length()); // longest first, so a secret containing another goes whole
        return new Redactor(List.copyOf(v));
    }

    public String redact(String text) {
        if (text == null || text.isEmpty()) {
            return text == null ? "" : text;
        }
        String t = text;
        for (String v : values) {
            t = t.replace(v, MARK);
        }
        t = BEARER.matcher(t).replaceAll(m -> Matcher.quoteReplacement(m.group(1) + m.group(2) + MARK));
        return QUERY.matcher(t).replaceAll(m -> Matcher.quoteReplacement(m.group(1) + MARK));
    }

    @Override
    public String toString() {
        return "Redactor[" + values.size() + " secrets]";
    }
}
