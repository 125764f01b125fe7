package dev.airlock.emulator;

import java.util.List;
import java.util.Optional;

/**
 * The images an emulated sandbox can be made from. None is pulled: each name here stands for the
 * root every emulated sandbox gets (the host's system dirs, read-only, over a directory of its
 * own), so a command sees the host's Debian userland whichever it is. Any other name is an image
 * the emulator cannot have, and an emulator fails it as its service fails an image that does not
 * exist. The catalogue: the names our tests and configurations use and the services' defaults.
 */
public final class ImageCatalogue {
    /** Every known name, exactly (tags included); {@code docker.io/} and {@code docker.io/library/} prefixes are dropped first. */
    public static final List<String> KNOWN = List.of(
            "debian:12", "debian:12-slim", "debian:bookworm", "debian:bookworm-slim", "debian:latest",
            "ubuntu:22.04", "ubuntu:24.04", "alpine:3.21", "python:3.12-slim", "python:3.13-slim",
            "daytonaio/sandbox:latest", "vercel/sandbox/universal");

    private ImageCatalogue() {
    }

    /** The catalogue's name for {@code image}, or empty when the emulator cannot have it. */
    public static Optional<String> lookup(String image) {
        String name = image.strip().replaceFirst("^docker\\.io/(library/)?", "");
        return KNOWN.contains(name) ? Optional.of(name) : Optional.empty();
    }
}
