package dev.airlock;

import java.time.Instant;

/**
 * What {@link RemoteFiles#stat} and {@link RemoteFiles#list} report for one path (the entry
 * itself: a symlink is reported as a symlink, not followed).
 *
 * @param path  the path as given (for list: the directory joined with the name)
 * @param name  the last path component
 * @param type  file, directory, symlink or other
 * @param size  bytes (for a symlink: the length of its target text)
 * @param mode  permission bits, e.g. {@code 0644}
 * @param mtime last modification, second precision
 */
public record FileStat(String path, String name, Type type, long size, int mode, Instant mtime) {

    public enum Type { FILE, DIRECTORY, SYMLINK, OTHER }

    public boolean isDirectory() {
        return type == Type.DIRECTORY;
    }

    public boolean isFile() {
        return type == Type.FILE;
    }
}
