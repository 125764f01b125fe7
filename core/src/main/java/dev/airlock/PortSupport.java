package dev.airlock;

/**
 * How a backend exposes a sandbox's ports ({@link Environment#ports()}), declared in
 * {@link Capabilities#ports()}.
 */
public enum PortSupport {
    /** No ports: {@link Ports#expose} fails in one line naming the backend. The default for a plugin that says nothing. */
    NONE,
    /** Any port, when asked (local: the port itself; ssh: a forward made then). */
    ANY,
    /** Only the ports declared at open in {@code airlock.ports} (docker publishes them when it creates the container). */
    DECLARED
}
