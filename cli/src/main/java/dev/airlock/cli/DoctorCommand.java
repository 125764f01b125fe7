package dev.airlock.cli;

import dev.airlock.containment.Doctor;
import dev.airlock.containment.DoctorReport;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParentCommand;

import java.io.PrintStream;
import java.util.concurrent.Callable;

/** {@code airlock doctor [--json]}: the exits table of the configured environment. */
@Command(name = "doctor", mixinStandardHelpOptions = true,
        description = {"Shows how each exit a run could leak through (HOME, crontab, the user bus, TMPDIR, argv,"
                + " sockets) stands on the configured backend: contained (enforced), steered (not enforced),"
                + " LEAKS or n/a, with the evidence and the container signal that decided.",
                "It only looks: nothing is written to the real crontab or sent on the bus.",
                "Exit status 0 when nothing leaks, 5 when something does."})
final class DoctorCommand implements Callable<Integer> {
    @ParentCommand
    AirlockCli cli;

    @Option(names = "--json", description = "Print one JSON object instead of the table.")
    boolean json;

    @Override
    public Integer call() {
        DoctorReport report;
        try (Session session = cli.openSession()) {
            report = Doctor.report(session.env(), cli.settings());
        }
        PrintStream out = System.out;
        out.print(json ? report.toJson() + "\n" : report.toText());
        out.flush();
        return report.leaks() ? ExitCodes.LEAK : ExitCodes.OK;
    }
}
