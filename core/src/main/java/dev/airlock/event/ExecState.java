package dev.airlock.event;

/** The states of one exec: {@code NEW -> STAGING -> STAGED -> DISPATCHED -> DONE}, {@code CANCELLED}, {@code KILLING}. */
public enum ExecState {
    NEW, STAGING, STAGED, DISPATCHED, KILLING, CANCELLED, DONE;

    public boolean isTerminal() {
        return this == DONE || this == CANCELLED;
    }
}
