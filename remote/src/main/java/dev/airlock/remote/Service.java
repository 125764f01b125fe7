package dev.airlock.remote;

import java.util.Objects;

/**
 * The service a client talks to, as its error messages name it: {@code name} ("Daytona"), the
 * variable that holds its token ({@code DAYTONA_API_KEY}, named by a 401), and the setting that
 * points at it ({@code airlock.daytona.api-url}, named when it cannot be reached).
 */
public record Service(String name, String tokenVariable, String endpointSetting) {
    public Service {
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(tokenVariable, "tokenVariable");
        Objects.requireNonNull(endpointSetting, "endpointSetting");
    }
}
