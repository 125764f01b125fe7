/**
 * The {@code ssh} backend: commands and files on a remote host over SSH, with JSch (the mwiede
 * fork). {@link dev.airlock.ssh.SshProvider} is found through ServiceLoader; settings are in
 * {@code SshSettings}.
 *
 * <ul>
 *   <li>One exec channel per command (PIPE stdin; its end is an SSH EOF), from a small pool of
 *       connections that each carry at most {@code airlock.ssh.channels-per-connection} channels.</li>
 *   <li>Each command runs under {@code setsid}; its launcher prints a nonce-tagged marker with the
 *       process group id on stderr before the command starts, and the stderr stream removes it.
 *       Timeouts and cancel are the core's process-group kill in a second exec.</li>
 *   <li>Environment values travel in the core's staged 0600 file, never in the command text.</li>
 *   <li>The login shell must be POSIX-compatible (sh, bash, dash, zsh, ksh, busybox); anything a
 *       non-interactive login prints to stdout (a noisy {@code .bashrc}) reaches the command's stdout,
 *       as with plain {@code ssh}.</li>
 * </ul>
 */
package dev.airlock.ssh;
