package dev.airlock.docker;

import com.github.dockerjava.api.DockerClient;
import com.github.dockerjava.api.async.ResultCallback;
import com.github.dockerjava.api.command.PullImageCmd;
import com.github.dockerjava.api.exception.DockerException;
import com.github.dockerjava.api.model.AuthConfig;
import com.github.dockerjava.api.model.PullResponseItem;
import dev.airlock.BackendException;

import java.io.Closeable;
import java.io.IOException;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.TimeUnit;

/**
 * One image pull: a single tag or digest (never a whole repository), with the daemon's or the
 * transport's failure returned as text for one line, and nothing logged (docker-java's own
 * callback logs each failure with a stack trace).
 */
final class ImagePull extends ResultCallback.Adapter<PullResponseItem> {
    private volatile String error;
    private volatile Throwable failure;

    private ImagePull() {
    }

    /** Pulls {@code image} (which has a tag or digest) with {@code auth} if given; returns why it failed, or null when it came. */
    static String pull(DockerClient client, String image, Duration apiTimeout, Optional<AuthConfig> auth) {
        String[] ref = DockerSettings.splitReference(image);
        ImagePull pull = new ImagePull();
        try {
            PullImageCmd cmd = client.pullImageCmd(ref[0]).withTag(ref[1]);
            auth.ifPresent(cmd::withAuthConfig); // else docker-java's own: config.json's auths for the registry
            cmd.exec(pull);
            if (!pull.awaitCompletion(Math.max(10, apiTimeout.toMinutes()), TimeUnit.MINUTES)) {
                closeQuietly(pull);
                throw new BackendException("pulling image " + image + " did not finish in time; pull it by hand (docker pull "
                        + image + ")");
            }
            return pull.failure();
        } catch (InterruptedException e) {
            closeQuietly(pull);
            Thread.currentThread().interrupt();
            throw new BackendException("interrupted while pulling image " + image);
        } catch (DockerException e) {
            return DockerDaemon.reason(e);
        } catch (BackendException e) {
            throw e;
        } catch (RuntimeException e) {
            return DockerDaemon.rootMessage(e);
        }
    }

    @Override
    public void onNext(PullResponseItem item) {
        if (item != null && item.isErrorIndicated() && error == null) {
            error = item.getErrorDetail() != null && item.getErrorDetail().getMessage() != null
                    ? item.getErrorDetail().getMessage() : item.getError();
        }
    }

    @Override
    public void onError(Throwable t) {
        if (failure == null) {
            failure = t;
        }
        closeQuietly(this);
    }

    /** What went wrong, or null when the image came. */
    private String failure() {
        Throwable t = failure;
        if (t instanceof DockerException d) {
            return DockerDaemon.reason(d);
        }
        return t != null ? DockerDaemon.rootMessage(t) : error;
    }

    private static void closeQuietly(Closeable c) {
        try {
            c.close();
        } catch (IOException ignored) {
            // nothing left to free
        }
    }
}
