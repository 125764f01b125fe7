package dev.airlock.safety;

/** How an operation touches a path, which decides which rules apply to it. */
enum Access {
    /** Creates, replaces, appends to or changes the entry itself (also chmod, truncate, a link). */
    WRITE,
    /** Creates a directory: the protected directory itself may be created, nothing inside it. */
    MKDIR,
    /** Removes or changes a whole tree: rules on anything inside it apply too. */
    TREE,
    /** Unpacks unknown entries into a directory. */
    INTO
}
