package dev.airlock.remote;

import dev.airlock.AirlockException;
import dev.airlock.BackendException;
import dev.airlock.BackendUnavailableException;
import dev.airlock.ConfigurationException;
import dev.airlock.DispatchOutcomeUnknownException;
import dev.airlock.EnvironmentClosedException;
import dev.airlock.NoSuchPathException;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.time.Duration;
import java.util.Optional;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The one table, read from both protocols: an HTTP status and its gRPC code end the same way. */
class ErrorMappingTest {
    static final Service MODAL = new Service("Modal", "MODAL_TOKEN_SECRET", "airlock.modal.server-url");

    @ParameterizedTest(name = "{0} / {1}")
    @CsvSource({
            "401, UNAUTHENTICATED,    ConfigurationException,      check MODAL_TOKEN_SECRET",
            "403, PERMISSION_DENIED,  ConfigurationException,      lacks access",
            "404, NOT_FOUND,          EnvironmentClosedException,  sandbox sb-7 no longer exists",
            "429, RESOURCE_EXHAUSTED, BackendUnavailableException, rate limited",
            "503, UNAVAILABLE,        BackendUnavailableException, try again later",
            "500, INTERNAL,           BackendUnavailableException, having trouble",
            "504, DEADLINE_EXCEEDED,  BackendException,            timed out",
            "501, UNIMPLEMENTED,      BackendException,            does not support",
            "409, ALREADY_EXISTS,     BackendException,            refused",
            "400, INVALID_ARGUMENT,   BackendException,            refused",
    })
    void httpAndGrpcShareEveryRow(int http, String grpc, String type, String says) {
        for (WireFailure f : new WireFailure[] {
                WireFailure.http(http, "detail", Optional.of(Duration.ofSeconds(7))),
                WireFailure.grpc(grpc, "detail", Optional.of(Duration.ofSeconds(7)))}) {
            AirlockException e = ErrorMapping.map(MODAL, "sandbox-create", Resource.sandbox("sb-7"), f);
            assertEquals(type, e.getClass().getSimpleName(), e.getMessage());
            assertTrue(e.getMessage().contains(says), e.getMessage());
            assertEquals(1, e.getMessage().lines().count());
        }
    }

    @Test
    void aRefusalOverAQuotaSaysSoAndDoesNotBlameTheToken() {
        String over = ErrorMapping.map(MODAL, "sandbox create", Resource.none(),
                WireFailure.http(403, "CPU request 512 exceeds maximum allowed per sandbox (4)", Optional.empty())).getMessage();
        assertEquals("Modal denied sandbox create (403) (CPU request 512 exceeds maximum allowed per sandbox (4));"
                + " the request is over a limit of the account: ask for less, or raise the limit", over);
        String denied = ErrorMapping.map(MODAL, "sandbox create", Resource.none(),
                WireFailure.http(403, "forbidden: Not authorized", Optional.empty())).getMessage();
        assertTrue(denied.endsWith("; the token in MODAL_TOKEN_SECRET lacks access to this project or team"), denied);
    }

    @Test
    void aMissingPathIsNoSuchPathAndAWaitIsNamed() {
        assertEquals(NoSuchPathException.class, ErrorMapping.map(MODAL, "read", Resource.path("/w/a"),
                WireFailure.http(404, "", Optional.empty())).getClass());
        assertTrue(ErrorMapping.map(MODAL, "x", Resource.none(), WireFailure.http(429, "", Optional.of(Duration.ofSeconds(7))))
                .getMessage().contains("wait 7 s"));
    }

    @Test
    void notSentIsUnavailableAndLostDispatchIsUnknown() {
        WireFailure notSent = WireFailure.notSent(new java.net.ConnectException("Connection refused"));
        assertTrue(ErrorMapping.map(MODAL, "x", Resource.none(), notSent) instanceof BackendUnavailableException);
        assertTrue(ErrorMapping.map(MODAL, "x", Resource.none(), notSent).getMessage().contains("airlock.modal.server-url"));
        DispatchOutcomeUnknownException u = ErrorMapping.outcomeUnknown(MODAL, "exec", WireFailure.lost(new IOException("reset")));
        assertTrue(u.getMessage().contains("not sent again"), u.getMessage());
    }

    @Test
    void unknownGrpcNamesAreRefused() {
        assertThrows(IllegalArgumentException.class, () -> WireFailure.grpc("NOPE", "", Optional.empty()));
        assertEquals(BackendException.class, ErrorMapping.map(MODAL, "x", Resource.none(),
                WireFailure.grpc("CANCELLED", "", Optional.empty())).getClass());
        assertEquals(ConfigurationException.class.getSimpleName(), "ConfigurationException");
        assertEquals(EnvironmentClosedException.class, ErrorMapping.map(MODAL, "x", Resource.sandbox("s"),
                WireFailure.http(410, "sandbox_stopped", Optional.empty())).getClass());
    }
}
