/**
 * The compatibility kit: {@link dev.airlock.tck.EnvironmentCompatibilityKit}, an abstract JUnit
 * Jupiter class every backend's test extends in about ten lines. Its {@code @Nested} groups (exec,
 * stdin, output, files, timeouts and cancel, concurrency, secrecy, errors) are the mandatory core;
 * staged stdin and attach follow the backend's capabilities and print why they skip. Payloads are
 * generated from seeds and compared streamed, so memory stays bounded at 64 MiB and beyond.
 */
package dev.airlock.tck;
