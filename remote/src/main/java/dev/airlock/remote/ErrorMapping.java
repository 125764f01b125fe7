package dev.airlock.remote;

import dev.airlock.AirlockException;
import dev.airlock.BackendException;
import dev.airlock.BackendUnavailableException;
import dev.airlock.ConfigurationException;
import dev.airlock.DispatchOutcomeUnknownException;
import dev.airlock.EnvironmentClosedException;
import dev.airlock.NoSuchPathException;

import java.time.Duration;

/**
 * The one table from a failed remote call to the core's exceptions. gRPC codes arrive here as
 * their HTTP equivalents ({@link GrpcCodes}), so both protocols share every row. Each message is
 * one line that says what happened and what to do, and holds no secret.
 */
public final class ErrorMapping {
    private ErrorMapping() {
    }

    /** Maps a failure of {@code call} about {@code resource} on {@code service}. */
    public static AirlockException map(Service service, String call, Resource resource, WireFailure f) {
        String s = service.name();
        String detail = f.detail().isEmpty() ? "" : " (" + f.detail() + ")";
        String code = f.grpcCode().isEmpty() ? String.valueOf(f.httpStatus()) : f.grpcCode();
        switch (f.stage()) {
            case NOT_SENT:
                return new BackendUnavailableException("cannot reach " + s + " for " + call + detail + "; check "
                        + service.endpointSetting() + ", the network and any proxy variables", f);
            case LOST:
                return new BackendException(s + " did not answer " + call + detail + "; try again", f);
            default:
                break;
        }
        int st = f.httpStatus();
        switch (st) {
            case 401:
                return new ConfigurationException(s + " refused the credentials for " + call + " (" + code
                        + "); check " + service.tokenVariable(), f);
            case 403:
                // Services answer 403 both for a token without access and for a request over the
                // account's quota (Daytona's per-sandbox CPU, memory and disk): say which it is.
                return new ConfigurationException(s + " denied " + call + " (" + code + ")" + detail + "; "
                        + (overLimit(f.detail()) ? "the request is over a limit of the account: ask for less, or raise the limit"
                        : "the token in " + service.tokenVariable() + " lacks access to this project or team"), f);
            case 404:
            case 410:
                if (resource.type() == Resource.Type.SANDBOX) {
                    return new EnvironmentClosedException("the " + s + " sandbox " + resource.id()
                            + " no longer exists (" + code + ": removed, stopped or expired); open a new environment", f);
                }
                if (resource.type() == Resource.Type.PATH) {
                    NoSuchPathException missing = new NoSuchPathException(resource.id());
                    missing.initCause(f); // the service's code and detail stay in the chain for logs
                    return missing;
                }
                return new BackendException(s + " does not know " + call + " (" + code + ")" + detail, f);
            case 429:
                return new BackendUnavailableException(s + " rate limited " + call + " (" + code + ")"
                        + f.retryAfter().map(d -> "; it asks to wait " + seconds(d)).orElse("")
                        + "; try again later or lower the concurrency", f);
            case 499:
                return new BackendException(s + " cancelled " + call + " (" + code + ")" + detail, f);
            case 501:
                return new BackendException(s + " does not support " + call + " (" + code + ")" + detail
                        + "; the service or emulator may be older than this client", f);
            case 504:
                return new BackendException(s + " timed out on " + call + " (" + code + ")" + detail + "; try again", f);
            default:
                break;
        }
        if (st >= 500) {
            return new BackendUnavailableException(s + " failed " + call + " (" + code + ")" + detail
                    + "; the service is having trouble, try again later", f);
        }
        return new BackendException(s + " refused " + call + " (" + code + ")" + detail, f);
    }

    /** Whether a refusal's detail says the request exceeds a quota or limit, rather than a missing permission. */
    static boolean overLimit(String detail) {
        String d = detail.toLowerCase(java.util.Locale.ROOT);
        return d.contains("exceed") || d.contains("quota") || d.contains("limit") || d.contains("maximum");
    }

    /** The end of a dispatch whose answer never came: it may have run, and it will not be sent again. */
    public static DispatchOutcomeUnknownException outcomeUnknown(Service service, String call, WireFailure f) {
        String detail = f.detail().isEmpty() ? "" : " (" + f.detail() + ")";
        return new DispatchOutcomeUnknownException(service.name() + " lost the answer to " + call + detail
                + ": the command may or may not have run, and was not sent again; check its effects before rerunning it", f);
    }

    static String seconds(Duration d) {
        long ms = d.toMillis();
        return ms % 1000 == 0 ? ms / 1000 + " s" : String.format(java.util.Locale.ROOT, "%.1f s", ms / 1000.0);
    }
}
