package dev.airlock.safety;

/** The three write tiers, weakest first. */
public enum Tier {
    /** Anyone may write it. */
    FREE,
    /** A human must approve the write (through the approval gate). */
    APPROVAL,
    /** Never written: credentials, system files, devices. Nothing unlocks it, yolo included. */
    HARD
}
