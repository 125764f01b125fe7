package dev.airlock;

/**
 * What a backend does natively. The core fills the gaps (staged env, process-group kill, files
 * through {@code sh}); the compatibility kit and callers read this to know which optional cases
 * apply. Nothing here lets a backend skip the mandatory core of the kit.
 *
 * @param stdinMode      how stdin is delivered
 * @param nativeEnv      env variables travel in the backend's protocol (else the core stages a 0600 env script)
 * @param nativeKill     the backend kills an exec's tree itself (else the core's process-group kill)
 * @param nativeFiles    the backend has its own file API for at least some operations
 * @param pty            the backend can allocate a terminal
 * @param attachable     a second environment can attach to the same sandbox
 * @param disposable     a fresh sandbox with no host mounts, thrown away on close
 * @param argvLimit      the longest command text the backend passes in one call; longer scripts are staged
 */
public record Capabilities(StdinMode stdinMode, boolean nativeEnv, boolean nativeKill, boolean nativeFiles,
                           boolean pty, boolean attachable, boolean disposable, int argvLimit) {

    /** What a shell backend with streamed stdin and nothing else native starts from. */
    public static Capabilities pipe() {
        return new Capabilities(StdinMode.PIPE, false, false, false, false, false, false, 96 * 1024);
    }

    public Capabilities withNativeEnv(boolean v) {
        return new Capabilities(stdinMode, v, nativeKill, nativeFiles, pty, attachable, disposable, argvLimit);
    }

    public Capabilities withNativeKill(boolean v) {
        return new Capabilities(stdinMode, nativeEnv, v, nativeFiles, pty, attachable, disposable, argvLimit);
    }

    public Capabilities withStdinMode(StdinMode mode) {
        return new Capabilities(mode, nativeEnv, nativeKill, nativeFiles, pty, attachable, disposable, argvLimit);
    }

    public Capabilities withAttachable(boolean v) {
        return new Capabilities(stdinMode, nativeEnv, nativeKill, nativeFiles, pty, v, disposable, argvLimit);
    }

    public Capabilities withDisposable(boolean v) {
        return new Capabilities(stdinMode, nativeEnv, nativeKill, nativeFiles, pty, attachable, v, argvLimit);
    }

    public Capabilities withArgvLimit(int bytes) {
        return new Capabilities(stdinMode, nativeEnv, nativeKill, nativeFiles, pty, attachable, disposable, bytes);
    }

    /** Whether stdin, output and files arrive exactly. False only for HEREDOC backends. */
    public boolean byteExact() {
        return stdinMode.isByteExact();
    }
}
