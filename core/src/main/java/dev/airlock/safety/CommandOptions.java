package dev.airlock.safety;

import java.util.ArrayList;
import java.util.List;
import java.util.Set;

/** Getopt-style reading of a command's expanded words: options, their values, and operands. */
final class CommandOptions {
    private CommandOptions() {
    }

    /** Index of the first operand after options ({@code --} consumed); options in shortArgs/longArgs take a value. */
    static int skipOptions(List<String> args, String shortArgs, Set<String> longArgs) {
        int i = 0;
        while (i < args.size()) {
            String a = Marks.plain(args.get(i));
            if (a.equals("--")) {
                return i + 1;
            }
            if (!a.startsWith("-") || a.equals("-")) {
                return i;
            }
            if (a.startsWith("--")) {
                i += (!a.contains("=") && longArgs.contains(a)) ? 2 : 1;
                continue;
            }
            int step = 1;
            for (int k = 1; k < a.length(); k++) {
                if (shortArgs.indexOf(a.charAt(k)) >= 0) {
                    step = k == a.length() - 1 ? 2 : 1;
                    break;
                }
            }
            i += step;
        }
        return i;
    }

    static List<String> skipAssignments(List<String> args, int from) {
        int i = Math.min(from, args.size());
        while (i < args.size() && CommandReader.isPlainAssignment(Marks.plain(args.get(i)))) {
            i++;
        }
        return args.subList(i, args.size());
    }

    /** All operands (non-options) of a command. */
    static List<String> operands(List<String> args, String shortArgs, Set<String> longArgs) {
        List<String> out = new ArrayList<>();
        for (int i = 0; i < args.size(); i++) {
            String a = Marks.plain(args.get(i));
            if (a.equals("--")) {
                out.addAll(args.subList(i + 1, args.size()));
                break;
            }
            if (a.startsWith("--")) {
                if (!a.contains("=") && longArgs.contains(a)) {
                    i++;
                }
                continue;
            }
            if (a.startsWith("-") && a.length() > 1) {
                for (int k = 1; k < a.length(); k++) {
                    if (shortArgs.indexOf(a.charAt(k)) >= 0) {
                        if (k == a.length() - 1) {
                            i++;
                        }
                        break;
                    }
                }
                continue;
            }
            out.add(args.get(i));
        }
        return out;
    }

    /** The values of the options in {@code wanted} (short letters) or {@code wantedLong}. */
    static List<String> optionValues(List<String> args, String wanted, Set<String> wantedLong,
                                             String shortArgs, Set<String> longArgs) {
        List<String> out = new ArrayList<>();
        for (int i = 0; i < args.size(); i++) {
            String a = Marks.plain(args.get(i));
            if (a.equals("--")) {
                break;
            }
            if (a.startsWith("--")) {
                String key = a.contains("=") ? a.substring(0, a.indexOf('=')) : a;
                if (wantedLong.contains(key)) {
                    if (a.contains("=")) {
                        out.add(args.get(i).substring(args.get(i).indexOf('=') + 1));
                    } else if (i + 1 < args.size()) {
                        out.add(args.get(++i));
                    }
                } else if (!a.contains("=") && longArgs.contains(key)) {
                    i++;
                }
                continue;
            }
            if (a.startsWith("-") && a.length() > 1) {
                for (int k = 1; k < a.length(); k++) {
                    char ch = a.charAt(k);
                    if (wanted.indexOf(ch) >= 0 || shortArgs.indexOf(ch) >= 0) {
                        String value = null;
                        if (k < a.length() - 1) {
                            value = args.get(i).substring(k + 1);
                        } else if (i + 1 < args.size()) {
                            value = args.get(++i);
                        }
                        if (value != null && wanted.indexOf(ch) >= 0) {
                            out.add(value);
                        }
                        break;
                    }
                }
            }
        }
        return out;
    }

    static boolean hasFlag(List<String> args, char letter, String longName) {
        for (String w : args) {
            String a = Marks.plain(w);
            if (a.equals("--")) {
                return false;
            }
            if (a.equals(longName)) {
                return true;
            }
            if (a.startsWith("-") && !a.startsWith("--") && a.indexOf(letter, 1) > 0) {
                return true;
            }
        }
        return false;
    }

    static int indexOfPlain(List<String> args, String v) {
        for (int i = 0; i < args.size(); i++) {
            if (Marks.plain(args.get(i)).equals(v)) {
                return i;
            }
        }
        return -1;
    }
}
