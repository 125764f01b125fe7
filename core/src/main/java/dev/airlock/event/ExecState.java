package dev.airlock.event;

/**
 * The states of one exec: {@code NEW -> STAGING -> STAGED -> DISPATCHED -> DONE}; {@code CANCELLED}
 * from NEW, STAGING or STAGED; {@code KILLING} from DISPATCHED; {@code FAILED} from any state before
 * DONE when Airlock itself failed (denied, staging or launch error, lost transport). Every exec ends
 * in exactly one of DONE, CANCELLED or FAILED.
 */
public enum ExecState {
    NEW, STAGING, STAGED, DISPATCHED, KILLING, CANCELLED, DONE, FAILED;

    public boolean isTerminal() {
        return this == DONE || this == CANCELLED || this == FAILED;
    }
}
