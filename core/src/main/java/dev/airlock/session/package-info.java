/**
 * Shell sessions: execs that share a working directory, exported variables and (on bash)
 * functions and aliases, like commands typed into one terminal. The state is a snapshot file in
 * the environment's private dir on the target, sourced before each command and refreshed after
 * it; the script that does so is composed into the command the exec core sends
 * ({@link dev.airlock.session.SessionScript}).
 */
package dev.airlock.session;
