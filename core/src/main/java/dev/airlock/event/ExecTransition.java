package dev.airlock.event;

/**
 * One state change of one exec.
 *
 * @param environmentId the environment
 * @param execId        the exec, unique within the environment
 * @param from          the state before
 * @param to            the state after
 * @param internal      whether the exec is one of Airlock's own scripts (files, staging, kill)
 */
public record ExecTransition(String environmentId, long execId, ExecState from, ExecState to, boolean internal) {
}
