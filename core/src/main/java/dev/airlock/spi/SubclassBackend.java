package dev.airlock.spi;

import dev.airlock.Capabilities;
import dev.airlock.Payload;
import dev.airlock.RemoteFiles;
import dev.airlock.Target;
import dev.airlock.containment.Containment;

import java.io.IOException;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.Set;

/** An {@link AbstractEnvironment} subclass's hooks as the {@link Backend} the core runs. */
final class SubclassBackend implements Backend, Stager, Killer {
    private final AbstractEnvironment env;
    private final String name;
    private final String id;

    SubclassBackend(AbstractEnvironment env, String name, String id) {
        this.env = env;
        this.name = name;
        this.id = id;
    }

    @Override
    public String name() {
        return name;
    }

    @Override
    public String id() {
        return id;
    }

    @Override
    public String destination() {
        return env.destination();
    }

    @Override
    public Capabilities capabilities() {
        return env.capabilities();
    }

    @Override
    public RemoteProcess launch(Launch launch, Deadline deadline) throws IOException {
        return env.launch(launch);
    }

    @Override
    public void stopSandbox(Deadline deadline) {
        env.closeControlShell();
        env.stopSandbox();
    }

    @Override
    public Optional<Stager> stager() {
        return Optional.of(this);
    }

    @Override
    public Optional<Killer> killer() {
        return Optional.of(this);
    }

    @Override
    public Optional<RemoteFiles> files() {
        return env.nativeFiles();
    }

    @Override
    public Optional<StdinWriter> stdinWriter() {
        return env.stdinWriter();
    }

    @Override
    public Optional<String> privateDirBase() {
        return Optional.of(env.privateDirBase());
    }

    @Override
    public Optional<byte[]> probe(String privateDirBase, Set<String> unset, Deadline deadline) {
        return env.probe(privateDirBase, unset);
    }

    @Override
    public boolean makeHome(String home, Deadline deadline) {
        return env.makeHome(home);
    }

    @Override
    public boolean removePrivateDir(String dir, Deadline deadline) {
        return env.removePrivateDir(dir);
    }

    @Override
    public void onTargetReady(Target target, Containment containment) {
        env.onTargetReady(target, containment);
    }

    @Override
    public String isolation() {
        return env.isolation();
    }

    @Override
    public boolean credentialsReadOnly() {
        return env.credentialsReadOnly();
    }

    @Override
    public java.time.Duration killStepCost() {
        return env.killStepCost();
    }

    @Override
    public Set<String> childUnset(Set<String> proposed) {
        return env.childUnset();
    }

    @Override
    public void stage(String path, Payload data, Deadline deadline) throws IOException {
        env.stage(path, data);
    }

    @Override
    public void remove(String path, Deadline deadline) throws IOException {
        env.removeStaged(path);
    }

    @Override
    public void kill(RemoteProcess process, OptionalLong group, boolean force, Deadline deadline) throws IOException {
        env.kill(process, group, force);
    }

    @Override
    public GroupState groupState(long pgid, Deadline deadline) throws IOException {
        return env.groupState(pgid);
    }
}
