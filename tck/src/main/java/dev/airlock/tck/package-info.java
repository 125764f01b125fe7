/** The compatibility kit. */
package dev.airlock.tck;
