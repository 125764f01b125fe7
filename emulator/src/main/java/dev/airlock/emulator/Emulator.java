package dev.airlock.emulator;

import java.net.URI;

/** A running emulator. Closing it stops every sandbox it made (no process left) and the server. */
public interface Emulator extends AutoCloseable {
    /** The base URL a client is configured with ({@code http://127.0.0.1:PORT}). */
    URI url();

    /**
     * The PEM certificate a client must trust when the emulator serves TLS with a certificate it
     * generated (a client's custom-CA setting takes it); empty for plaintext.
     */
    default java.util.Optional<java.nio.file.Path> caFile() {
        return java.util.Optional.empty();
    }

    /**
     * The credentials it accepts, named by the service's own variables; any other is refused as
     * the service refuses it. {@link EmulatorCredentials#NONE} for an emulator without auth.
     */
    default EmulatorCredentials credentials() {
        return EmulatorCredentials.NONE;
    }

    @Override
    void close();
}
