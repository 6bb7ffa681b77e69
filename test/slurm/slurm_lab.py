#!/usr/bin/env python3
"""A Slurm cluster of one machine for tests and benchmarks: a private munged, one slurmctld and
three slurmd (nodes n1..n3, each claiming 8 CPUs whatever the machine has, so that
jobs of up to 24 tasks run on two cores), all configured,
logged and spooled under one temporary folder, and all stopped and removed on exit, whatever
happened (../shared/launch-ecosystem.md, section 2). Nothing under /etc or /run is touched:
srun, sinfo and the daemons find the configuration through SLURM_CONF.

The caller should be a child subreaper (prctl PR_SET_CHILD_SUBREAPER): slurmd starts each
job step's slurmstepd detached, so with a subreaper they stay our descendants and teardown
can end any step a failed test left running.

usage as a module:  with SlurmLab() as lab: lab.srun(["-N", "3", "-n", "6", "--mpi=pmi2", prog])
usage by hand:      slurm_lab.py shell   (starts the cluster, runs $SHELL with SLURM_CONF set)
"""

import ctypes
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

DAEMONS = ("munged", "slurmctld", "slurmd", "srun", "sinfo")
PR_SET_CHILD_SUBREAPER = 36


class LabError(Exception):
    pass


def missing():
    """What this machine lacks to run the lab, or None."""
    if os.geteuid() != 0:
        return "not root (slurmd runs jobs as their user and must be root)"
    absent = [d for d in DAEMONS if not shutil.which(d) and not os.path.exists("/usr/sbin/" + d)]
    if absent:
        return "no " + ", ".join(absent) + " (Debian: apt-get install slurm-wlm munge)"
    if not os.path.exists("/etc/munge/munge.key"):
        return "no /etc/munge/munge.key (Debian's munge package makes it)"
    return None


def become_subreaper():
    ctypes.CDLL(None, use_errno=True).prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)


def free_ports(n):
    """n ports free now, below the kernel's ephemeral range (from which the daemons' own
    outgoing connections take theirs, so a port chosen there may be gone when slurmd binds it)."""
    import random
    ports = []
    for port in random.Random(os.getpid() ^ int(time.time() * 1000)).sample(range(20000, 32000), 400):
        with socket.socket() as s:
            s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            try:
                s.bind(("0.0.0.0", port))
            except OSError:
                continue
        ports.append(port)
        if len(ports) == n:
            return ports
    raise LabError("no free ports between 20000 and 32000")


def descendants(root):
    kids = {}
    for d in os.listdir("/proc"):
        if d.isdigit():
            try:
                with open(f"/proc/{d}/stat") as f:
                    ppid = int(f.read().rsplit(")", 1)[1].split()[1])
                kids.setdefault(ppid, []).append(int(d))
            except (OSError, ValueError, IndexError):
                pass
    out, todo = [], [root]
    while todo:
        for c in kids.get(todo.pop(), []):
            out.append(c)
            todo.append(c)
    return out


def reap(keep=()):
    """Collects our zombie children except `keep` (the Popen objects' own): each job step's
    slurmstepd ends as our child (we are its subreaper), and nobody else would reap it."""
    me = os.getpid()
    for d in os.listdir("/proc"):
        if not d.isdigit() or int(d) in keep:
            continue
        try:
            with open(f"/proc/{d}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
            if fields[0] == "Z" and int(fields[1]) == me:
                os.waitpid(int(d), 0)
        except (OSError, ValueError, IndexError, ChildProcessError):
            pass


def sbin(name):
    return shutil.which(name) or "/usr/sbin/" + name


class SlurmLab:
    def __init__(self, nodes=3, cpus=8):
        self.nodes = [f"n{i}" for i in range(1, nodes + 1)]
        self.cpus = cpus
        self.procs = []
        self.names = []

    # ------------------------------------------------------------------ start
    def __enter__(self):
        for attempt in range(3):
            try:
                self._start()
                return self
            except LabError as e:
                self.__exit__(None, None, None)
                # a port taken between the choice and the bind: choose again
                if "Address already in use" not in str(e) or attempt == 2:
                    raise
            except BaseException:
                self.__exit__(None, None, None)
                raise

    def _start(self):
        self.dir = d = tempfile.mkdtemp(prefix="cr-slurm-")
        os.chmod(d, 0o711)
        for sub in ("munge", "log", "spool/ctld", *[f"spool/{n}" for n in self.nodes],
                    *[f"tmp/{n}" for n in self.nodes]):
            os.makedirs(os.path.join(d, sub), exist_ok=True)
        os.chmod(os.path.join(d, "munge"), 0o711)
        key = os.path.join(d, "munge", "key")
        shutil.copyfile("/etc/munge/munge.key", key)
        os.chmod(key, 0o600)
        self.munge_sock = os.path.join(d, "munge", "sock")
        self._spawn([sbin("munged"), "-F", "--force", "--socket=" + self.munge_sock, "--key-file=" + key,
                     "--log-file=" + os.path.join(d, "log", "munged.log"),
                     "--pid-file=" + os.path.join(d, "munge", "pid"),
                     "--seed-file=" + os.path.join(d, "munge", "seed")], "munged")
        self._wait(lambda: os.path.exists(self.munge_sock), 10, "munged did not create its socket")
        host = socket.gethostname().split(".")[0]
        ports = free_ports(1 + len(self.nodes))
        lines = [
            f"ClusterName=cr{os.getpid()}", f"SlurmctldHost={host}", "SlurmUser=root", "SlurmdUser=root",
            f"SlurmctldPort={ports[0]}", "AuthType=auth/munge", f"AuthInfo=socket={self.munge_sock}",
            "CredType=cred/munge", "MpiDefault=none", "ProctrackType=proctrack/linuxproc", "TaskPlugin=task/none",
            "JobAcctGatherType=jobacct_gather/none", "AccountingStorageType=accounting_storage/none",
            "SchedulerType=sched/backfill", "SelectType=select/cons_tres", "SelectTypeParameters=CR_Core",
            "ReturnToService=2", "MailProg=/bin/true",
            # the nodes claim more CPUs than there are: slurmd reports the configured ones
            "SlurmdParameters=config_overrides",
            # one TmpFS per node: srun --mpi=pmix makes a folder there named by job and step only
            f"TmpFS={d}/tmp/%n", f"StateSaveLocation={d}/spool/ctld", f"SlurmdSpoolDir={d}/spool/%n",
            f"SlurmctldPidFile={d}/ctld.pid", f"SlurmdPidFile={d}/slurmd-%n.pid",
            f"SlurmctldLogFile={d}/log/slurmctld.log", f"SlurmdLogFile={d}/log/slurmd-%n.log",
            "SlurmctldDebug=info", "SlurmdDebug=info", "KillWait=2", "MessageTimeout=20",
        ]
        for n, port in zip(self.nodes, ports[1:]):
            lines.append(f"NodeName={n} NodeHostname={host} NodeAddr=127.0.0.1 Port={port} CPUs={self.cpus} "
                         "RealMemory=2000 State=UNKNOWN")
        lines.append(f"PartitionName=debug Nodes={','.join(self.nodes)} Default=YES MaxTime=INFINITE State=UP "
                     "OverSubscribe=FORCE:8")
        self.conf = os.path.join(d, "slurm.conf")
        with open(self.conf, "w") as f:
            f.write("\n".join(lines) + "\n")
        self.env = dict(os.environ, SLURM_CONF=self.conf)
        self._spawn([sbin("slurmctld"), "-D", "-i", "-f", self.conf], "slurmctld")
        for n in self.nodes:
            self._spawn([sbin("slurmd"), "-D", "-f", self.conf, "-N", n], "slurmd-" + n)
        want = f"idle {len(self.nodes)}"

        def idle():
            p = subprocess.run(["sinfo", "-h", "-o", "%T %D"], capture_output=True, text=True, env=self.env)
            return p.stdout.strip() == want
        self._wait(idle, 60, "the three slurmd did not come up idle")

    def _spawn(self, cmd, name):
        log = open(os.path.join(self.dir, "log", name + ".out"), "w")
        self.procs.append(subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, start_new_session=True))
        self.names.append(name)
        log.close()

    def _wait(self, cond, seconds, why):
        deadline = time.monotonic() + seconds
        while not cond():
            if time.monotonic() > deadline:
                raise LabError(why + ": " + self.logs())
            for p, name in zip(self.procs, self.names):
                if p.poll() is not None:
                    raise LabError(f"{name} exited with {p.returncode}: " + self.logs(first=name))
            time.sleep(0.05)

    def logs(self, tail=1500, first=None):
        out = []
        files = sorted(os.listdir(os.path.join(self.dir, "log")), key=lambda f: not (first and f.startswith(first)))
        for f in files:
            with open(os.path.join(self.dir, "log", f), errors="replace") as fh:
                text = fh.read()
            if text.strip():
                out.append(f"--- {f}:\n{text[-tail:]}")
        return "\n".join(out)

    # ------------------------------------------------------------------ use
    def srun(self, args, env=None, timeout=120):
        """Runs `srun ARGS`; returns the CompletedProcess with .elapsed (seconds). A job still
        running after `timeout` seconds is cancelled and raises LabError with its output."""
        e = dict(self.env)
        e.update(env or {})
        t0 = time.monotonic()
        try:
            p = subprocess.run(["srun", *args], capture_output=True, text=True, env=e, timeout=timeout)
        except subprocess.TimeoutExpired as t:
            subprocess.run(["scancel", "--full", "--quiet", "-u", "root"], env=self.env, capture_output=True)
            out = (t.stdout or b"").decode(errors="replace")[-2000:]
            err = (t.stderr or b"").decode(errors="replace")[-2000:]
            raise LabError(f"srun {' '.join(args)}: still running after {timeout} s\n--- stdout:\n{out}\n"
                           f"--- stderr:\n{err}")
        p.elapsed = time.monotonic() - t0
        reap({q.pid for q in self.procs})
        return p

    def idle(self, seconds=30):
        """Waits until no job is left (a step's end takes a moment after srun returns)."""
        def empty():
            p = subprocess.run(["squeue", "-h"], capture_output=True, text=True, env=self.env)
            return p.returncode == 0 and not p.stdout.strip()
        self._wait(empty, seconds, "jobs still queued")

    def steps_left(self):
        """Processes of job steps still running (slurmstepd or tasks), as (pid, command)."""
        daemons = {p.pid for p in self.procs}
        left = []
        for pid in descendants(os.getpid()):
            if pid in daemons:
                continue
            try:
                with open(f"/proc/{pid}/cmdline", "rb") as f:
                    cmd = f.read().replace(b"\0", b" ").decode(errors="replace").strip()
            except OSError:
                continue
            # (slurmctld's helper slurmscriptd is a daemon too)
            if cmd and not cmd.startswith(("srun", "sinfo", "squeue", "scancel", "slurmctld", "slurmd ")):
                left.append((pid, cmd))
        return left

    # ------------------------------------------------------------------ stop
    def __exit__(self, *exc):
        env = getattr(self, "env", None)
        if env:
            subprocess.run(["scancel", "--full", "--quiet", "-u", "root"], env=env, capture_output=True)
        for p in reversed(self.procs):
            if p.poll() is None:
                p.send_signal(signal.SIGTERM)
        deadline = time.monotonic() + 10
        for p in self.procs:
            try:
                p.wait(max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()
        # whatever a step left (slurmstepd and its tasks are our descendants as a subreaper's)
        for pid in descendants(os.getpid()):
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        time.sleep(0.1)
        reap()
        if getattr(self, "dir", None):
            shutil.rmtree(self.dir, ignore_errors=True)
        self.procs, self.names, self.dir, self.env = [], [], None, None
        return False


def main():
    if len(sys.argv) != 2 or sys.argv[1] != "shell":
        print(__doc__)
        return 2
    why = missing()
    if why:
        print("cannot run Slurm here:", why)
        return 1
    become_subreaper()
    with SlurmLab() as lab:
        print(f"SLURM_CONF={lab.conf}; exit the shell to stop the cluster")
        subprocess.run([os.environ.get("SHELL", "/bin/sh")], env=lab.env)
    return 0


if __name__ == "__main__":
    sys.exit(main())
