#!/usr/bin/env python3
"""Across hosts for real: three network namespaces on one bridge stand for three hosts (each with
its own network stack, addresses 10.77.0.1-3 and its own host name), Courier's mpiexec runs in
the first and starts one proxy per host through test/hosts/ns_ssh (a stand-in for ssh), and the
MPI test programs run with their ranks spread over the hosts in blocks: shared memory within a
host, TCP between hosts. Each case makes its own namespaces and removes them, and everything in
them, whatever happens (../shared/launch-ecosystem.md, section 3): a case that is stopped by a
signal it can catch cleans up on the way out, and the namespaces of a run killed outright (ctest's
timeout sends SIGKILL) are removed by the next run, which finds their owner gone.

usage: netns_test.py --bin BUILD/bin --mpi BUILD/test/mpi --prog LAUNCHER_PROG [--sanitized] CASE
       netns_test.py --list
Exits 77 (skipped) where network namespaces cannot be made (not root, no `ip`).
"""

import argparse
import os
import re
import shutil
import signal
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
NS_SSH = os.path.join(HERE, "ns_ssh")
SKIP = 77
CASES = {}


class Failure(Exception):
    pass


def check(cond, msg):
    if not cond:
        raise Failure(msg)


def sh(*cmd, ok=False):
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode and not ok:
        raise Failure(f"{' '.join(cmd)}: {p.stderr.strip()}")
    return p


def remove_namespace(ns):
    """Kills what runs in network namespace NS, then removes it and its /etc/netns files."""
    for pid in sh("ip", "netns", "pids", ns, ok=True).stdout.split():
        try:
            os.kill(int(pid), signal.SIGKILL)
        except OSError:
            pass
    sh("ip", "netns", "del", ns, ok=True)
    shutil.rmtree(f"/etc/netns/{ns}", ignore_errors=True)


def owner_alive(pid):
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            return b"netns_test.py" in f.read()
    except OSError:
        return False


def reap_stale_labs():
    """Removes the namespaces of earlier runs whose netns_test.py is gone (killed by a signal it
    could not catch), so a killed run leaves nothing behind for long. A namespace whose owner's
    pid now belongs to another netns_test.py is left alone: it may be that run's own."""
    for line in sh("ip", "netns", "list", ok=True).stdout.splitlines():
        name = line.split()[0] if line.split() else ""
        m = Lab.NAME.match(name)
        if m and int(m.group(1)) != os.getpid() and not owner_alive(int(m.group(1))):
            remove_namespace(name)


class Lab:
    """Namespaces <prefix>h1..h3 on a bridge in <prefix>lab; names unique to this process."""

    # c<pid of the netns_test.py that made it>-<name>: the owner's pid lets a later run tell the
    # namespaces of a live run from those of a dead one (reap_stale_labs)
    NAME = re.compile(r"^c(\d+)-(lab|h\d+|probe)$")

    def __init__(self, hosts=3):
        tag = f"c{os.getpid()}"
        self.prefix = tag + "-"
        self.lab = tag + "-lab"
        self.hosts = [f"h{i}" for i in range(1, hosts + 1)]
        self.made = []

    def __enter__(self):
        # `with` calls __exit__ only once __enter__ has returned: a step that fails part-way
        # removes what the earlier steps made
        try:
            return self._make()
        except BaseException:
            self.__exit__()
            raise

    def _make(self):
        sh("ip", "netns", "add", self.lab)
        self.made.append(self.lab)
        sh("ip", "-n", self.lab, "link", "add", "br0", "type", "bridge")
        sh("ip", "-n", self.lab, "link", "set", "br0", "up")
        for i, h in enumerate(self.hosts, 1):
            ns = self.prefix + h
            sh("ip", "netns", "add", ns)
            self.made.append(ns)
            veth = f"{self.prefix}v{i}"
            sh("ip", "link", "add", veth, "type", "veth", "peer", "name", "eth0", "netns", ns)
            sh("ip", "link", "set", veth, "netns", self.lab)
            sh("ip", "-n", self.lab, "link", "set", veth, "master", "br0")
            sh("ip", "-n", self.lab, "link", "set", veth, "up")
            sh("ip", "-n", ns, "addr", "add", f"10.77.0.{i}/24", "dev", "eth0")
            sh("ip", "-n", ns, "link", "set", "eth0", "up")
            sh("ip", "-n", ns, "link", "set", "lo", "up")
            # host names for launchers that resolve them (Hydra): `ip netns exec` mounts this
            # file over /etc/hosts inside the namespace (Courier's mpiexec needs none)
            os.makedirs(f"/etc/netns/{ns}", exist_ok=True)
            with open(f"/etc/netns/{ns}/hosts", "w") as f:
                f.write("127.0.0.1 localhost\n" + "".join(f"10.77.0.{k} h{k}\n" for k in range(1, len(self.hosts) + 1)))
        return self

    def __exit__(self, *exc):
        for ns in reversed(self.made):
            remove_namespace(ns)
        self.made = []
        return False

    def leftovers(self):
        left = {ns: sh("ip", "netns", "pids", ns, ok=True).stdout.split() for ns in self.made}
        return {ns: p for ns, p in left.items() if p}

    def mpiexec(self, args, np, hosts=None, env=None, timeout=120):
        """Runs `mpiexec -hosts h1,h2,h3 -n NP args...` from inside h1."""
        e = dict(os.environ)
        e["CR_NETNS_PREFIX"] = self.prefix
        e.update(env or {})
        hosts = hosts or self.hosts
        inner = [ARGS.mpiexec, "-hosts", ",".join(hosts), "--launcher-exec", NS_SSH, "-n", str(np), *args]
        cmd = ["ip", "netns", "exec", self.prefix + self.hosts[0], "unshare", "--uts", "/bin/sh", "-c",
               'hostname "$0"; exec "$@"', self.hosts[0], *inner]
        t0 = time.monotonic()
        p = subprocess.run(cmd, capture_output=True, text=True, env=e, timeout=timeout)
        p.elapsed = time.monotonic() - t0
        # nothing of the job may be left on any host once mpiexec returned
        deadline = time.monotonic() + 2
        while self.leftovers() and time.monotonic() < deadline:
            time.sleep(0.05)
        check(not self.leftovers(), f"processes left on the hosts: {self.leftovers()}")
        return p


def describe(p):
    return f"exit {p.returncode} after {p.elapsed:.2f}s\n--- stdout:\n{p.stdout[-3000:]}\n--- stderr:\n{p.stderr[-3000:]}"


# MPI test programs (test/mpi/AREA/NAME), the process counts, and arguments: ranks in blocks over
# three hosts, so every count above 3 mixes shared memory and TCP.
PROGRAMS = {
    "pt2pt/across_nodes": ((3, 6, 12), ()),
    "pt2pt/first_contact": ((3, 9), ()),
    "pt2pt/modes": ((4, 7), ()),
    "pt2pt/ordering": ((6,), ()),
    "pt2pt/probe": ((6,), ()),
    "pt2pt/large": ((3,), ()),
    "pt2pt/unexpected_flood": ((6,), ()),
    "pt2pt/sendrecv": ((5,), ()),
    "pt2pt/persistent": ((6,), ()),
    "coll/allreduce": ((6, 8), ()),
    "coll/bcast": ((7,), ()),
    "coll/mixed": ((6,), ()),
    "coll/nonblocking": ((6,), ()),
    "coll/persistent": ((5,), ()),
    "coll/vector": ((6,), ()),
    "coll/node_comms": ((6,), ()),
    "datatype/derived": ((3,), ()),
    "threads/pt2pt": ((3,), ("4",)),
}


def program_case(name, nps, args):
    def run_case():
        with Lab() as lab:
            for np in nps:
                p = lab.mpiexec([os.path.join(ARGS.mpi, name), *args], np, env={"TEST_NODES": "3"})
                check(p.returncode == 0 and "FAIL" not in p.stdout + p.stderr, f"{name} at {np} ranks: " + describe(p))
    return run_case


for _name, (_nps, _args) in PROGRAMS.items():
    CASES[_name.replace("/", "_")] = program_case(_name, _nps, _args)


def case(fn):
    CASES[fn.__name__] = fn
    return fn

# Every other MPI test program (test/mpi/*/testlist) runs once across the three hosts, at the
# largest of its listed process counts up to 9 (the first listed line's arguments, default
# settings), except where the program itself assumes one node: the tests of node-local machinery (the node
# collectives, cross-memory attach, the algorithm counters), and comm/split, which expects
# MPI_Comm_split_type(SHARED) to give the whole world (coll/node_comms checks it across nodes).
ONE_NODE_ONLY = {"env/mpit_pvar", "env/pmi_cloexec", "comm/split_type", "comm/split",
                 "pt2pt/cma_refused", "coll/node", "coll/node_blocks", "coll/node_large", "coll/node_nonblocking",
                 "coll/node_scan"}


def testlist_programs():
    """{program: (process count, arguments)} for the programs this file does not list itself."""
    progs = {}
    mpi_src = os.path.join(HERE, "..", "mpi")
    for area in sorted(os.listdir(mpi_src)):
        path = os.path.join(mpi_src, area, "testlist")
        if not os.path.exists(path):
            continue
        with open(path) as f:
            for line in f:
                words = line.split("#", 1)[0].split()
                if len(words) < 2:
                    continue
                name = f"{area}/{words[0]}"
                if name in progs or name in PROGRAMS or name in ONE_NODE_ONLY or f"{area}/*" in ONE_NODE_ONLY:
                    continue
                if "label:no-sanitize" in words and ARGS.sanitized:
                    continue  # too big for the sanitizers, as in the testlist's own run
                counts = [int(c) for c in words[1].split(",") if c.isdigit()]
                # (NAME NP,... [timeout=S] [env:V=X ...] [label:L ...] [ARGS...], as test/CMakeLists.txt reads it)
                args = [w for w in words[2:] if not re.match(r"timeout=\d+$|env:|label:", w)]
                if counts and max(counts) >= 2:
                    progs[name] = (max(c for c in counts if c <= 9), args)
    return progs


@case
def every_program():
    """Every test program not in PROGRAMS above, once across the hosts."""
    with Lab() as lab:
        failed = []
        for name, (np, args) in testlist_programs().items():
            if not os.path.exists(os.path.join(ARGS.mpi, name)):
                continue  # not built here (the Fortran programs without a Fortran compiler)
            p = lab.mpiexec([os.path.join(ARGS.mpi, name), *args], np)
            if p.returncode != 0 or "FAIL" in p.stdout + p.stderr:
                failed.append(f"{name} at {np} ranks: " + describe(p))
        check(not failed, f"{len(failed)} programs failed across hosts:\n" + "\n".join(failed))



@case
def hostnames():
    """Each rank runs on its host: MPI_Get_processor_name says h1, h2, h3 in blocks."""
    with Lab() as lab:
        p = lab.mpiexec([ARGS.prog, "hello"], 6)
        check(p.returncode == 0, describe(p))
        got = sorted(re.findall(r"hello rank (\d+) of 6 pid \d+ on (\S+)", p.stdout))
        check([(int(r), h) for r, h in got] == [(r, f"h{r // 2 + 1}") for r in range(6)], describe(p))


@case
def rank_dies_on_a_host():
    """A rank on h3 crashes: the job ends at once, names the rank and its host, nothing stays."""
    with Lab() as lab:
        p = lab.mpiexec([ARGS.prog, "segv"], 6, env={"ASAN_OPTIONS": os.environ.get("ASAN_OPTIONS", "") +
                                                  ":handle_segv=0"})
        check(p.returncode == 139, describe(p))
        check(re.search(r"mpiexec: rank 5 \(pid \d+\) on host h3: killed by signal 11", p.stderr), describe(p))
        check(p.elapsed < 5, describe(p))


@case
def abort_on_a_host():
    with Lab() as lab:
        p = lab.mpiexec([ARGS.prog, "abort"], 6)
        check(p.returncode == 7 and re.search(r"rank 5 \(pid \d+\) on host h3: called MPI_Abort", p.stderr), describe(p))


def start_in_h1(lab, np, args, hosts="h1,h2,h3"):
    """Starts `mpiexec -hosts HOSTS -n NP ARGS` inside h1 without waiting for it."""
    e = dict(os.environ, CR_NETNS_PREFIX=lab.prefix)
    inner = [ARGS.mpiexec, "-hosts", hosts, "--launcher-exec", NS_SSH, "-n", str(np), *args]
    cmd = ["ip", "netns", "exec", lab.prefix + "h1", "unshare", "--uts", "/bin/sh", "-c", 'hostname h1; exec "$@"',
           "h1", *inner]
    return subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=e)


def wait_ready(p, pattern, count):
    """Reads the job's output until `count` lines match `pattern`; returns {rank: pid}."""
    ready = {}
    while len(ready) < count:
        ln = p.stdout.readline()
        if not ln:
            raise Failure("the job ended before every rank was ready: " + p.stderr.read())
        m = re.match(pattern, ln)
        if m:
            ready[int(m.group(1))] = int(m.group(2))
    return ready


def job_ends(lab, p, t0, host, within):
    """The job ends non-zero within `within` seconds of t0, naming `host`, and leaves nothing."""
    try:
        out, err = p.communicate(timeout=30)
    except subprocess.TimeoutExpired:
        p.kill()
        raise Failure("the job did not end within 30 s")
    elapsed = time.monotonic() - t0
    check(p.returncode != 0 and f"host {host}:" in err, f"exit {p.returncode}: {err}")
    check(elapsed < within, f"the job took {elapsed:.1f}s to end: {err}")
    deadline = time.monotonic() + 10
    while lab.leftovers() and time.monotonic() < deadline:
        time.sleep(0.1)
    check(not lab.leftovers(), f"processes left on the hosts: {lab.leftovers()}")
    return err


@case
def link_cut():
    """h2's link goes down while the job runs (no reset, only silence): the front notices within
    seconds (keep-alives on its proxy connections), names h2, stops the other hosts, and h2's
    proxy, cut off from the front, ends its ranks by itself."""
    with Lab() as lab:
        p = start_in_h1(lab, 6, [ARGS.prog, "hang"])
        wait_ready(p, r"ready (\d+) pid (\d+)", 6)
        t0 = time.monotonic()
        sh("ip", "-n", lab.prefix + "h2", "link", "set", "eth0", "down")
        job_ends(lab, p, t0, "h2", 10)


@case
def link_cut_mid_transfer():
    """The same while rank 0 (h1) streams 64 MiB messages to rank 1 (h2) over TCP: both sides
    are inside MPI, in the middle of a rendezvous, when the link goes silent."""
    with Lab() as lab:
        p = start_in_h1(lab, 2, [ARGS.prog, "xfer", "64", "-1", "0"], hosts="h1,h2")
        wait_ready(p, r"xfer ready (\d+) pid (\d+)", 2)
        time.sleep(0.3)
        t0 = time.monotonic()
        sh("ip", "-n", lab.prefix + "h2", "link", "set", "eth0", "down")
        job_ends(lab, p, t0, "h2", 10)


def killed_mid_rendezvous(victim):
    def run_case():
        """Rank VICTIM (0 sends on h1, 1 receives on h2) is killed from outside while 64 MiB
        messages stream between the hosts: the job ends at once, naming the rank and its host."""
        with Lab() as lab:
            p = start_in_h1(lab, 2, [ARGS.prog, "xfer", "64", "-1", "0"], hosts="h1,h2")
            pids = wait_ready(p, r"xfer ready (\d+) pid (\d+)", 2)
            time.sleep(0.3)
            t0 = time.monotonic()
            os.kill(pids[victim], 9)
            err = job_ends(lab, p, t0, f"h{victim + 1}", 5)
            check(re.search(rf"rank {victim} \(pid {pids[victim]}\) on host h{victim + 1}: killed by signal 9", err), err)
            check(p.returncode == 137, f"exit {p.returncode}: {err}")
    return run_case


CASES["sender_killed_mid_rendezvous"] = killed_mid_rendezvous(0)
CASES["receiver_killed_mid_rendezvous"] = killed_mid_rendezvous(1)


def hydra():
    """MPICH's Hydra mpiexec (from PyPI, as bench/compare.py installs it), or None."""
    for d in (os.environ.get("COURIER_TEST_PEERS"), os.path.expanduser("~/.cache/courier-bench"), "/opt/peers"):
        if d and os.path.exists(os.path.join(d, "mpich", "bin", "mpiexec.hydra")):
            return os.path.join(d, "mpich", "bin", "mpiexec.hydra")
    return None


@case
def hydra_across_hosts():
    """Hydra starts Courier binaries across the hosts (its proxies through ns_ssh; PMI-1)."""
    exe = hydra()
    if not exe:
        raise Skip("no MPICH Hydra installed (pip install mpich into COURIER_TEST_PEERS/mpich)")
    with Lab() as lab:
        e = dict(os.environ, CR_NETNS_PREFIX=lab.prefix, TEST_NODES="3")
        for prog, np in ((os.path.join(ARGS.mpi, "pt2pt/across_nodes"), 6), (ARGS.prog, 3)):
            cmd = ["ip", "netns", "exec", lab.prefix + "h1", "unshare", "--uts", "/bin/sh", "-c",
                   'hostname h1; exec "$@"', "h1", exe, "-launcher", "ssh", "-launcher-exec", NS_SSH,
                   "-hosts", "h1,h2,h3", "-n", str(np), prog, *(["hello"] if prog == ARGS.prog else [])]
            p = subprocess.run(cmd, capture_output=True, text=True, env=e, timeout=120)
            p.elapsed = 0
            check(p.returncode == 0 and "FAIL" not in p.stdout + p.stderr, describe(p))
            if prog == ARGS.prog:
                got = sorted(re.findall(r"hello rank (\d+) of 3 pid \d+ on (\S+)", p.stdout))
                check(got == [("0", "h1"), ("1", "h2"), ("2", "h3")], describe(p))


class Skip(Exception):
    pass


def on_stop_signal(signum, frame):
    raise Failure(f"stopped by signal {signum}")


def main():
    global ARGS
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin")
    ap.add_argument("--mpi")
    ap.add_argument("--prog")
    ap.add_argument("--sanitized", action="store_true", help="the programs are built with the sanitizers")
    ap.add_argument("--list", action="store_true")
    ap.add_argument("case", nargs="?")
    ARGS = ap.parse_args()
    if ARGS.list:
        print("\n".join(CASES))
        return 0
    ARGS.mpiexec = os.path.join(ARGS.bin, "mpiexec")
    if os.geteuid() != 0 or not shutil.which("ip") or not shutil.which("unshare"):
        print(f"SKIP {ARGS.case}: needs root, ip and unshare to make network namespaces")
        return SKIP
    probe = f"c{os.getpid()}-probe"
    if subprocess.run(["ip", "netns", "add", probe], capture_output=True).returncode != 0:
        print(f"SKIP {ARGS.case}: cannot make network namespaces here")
        return SKIP
    subprocess.run(["ip", "netns", "del", probe], capture_output=True)
    reap_stale_labs()
    # a stop asked by a signal (ctest interrupted, a terminal closed) unwinds through the Lab's
    # __exit__ like any failure
    for sig in (signal.SIGTERM, signal.SIGHUP, signal.SIGINT):
        signal.signal(sig, on_stop_signal)
    try:
        CASES[ARGS.case]()
    except Skip as s:
        print(f"SKIP {ARGS.case}: {s}")
        return SKIP
    except Failure as f:
        print(f"FAIL {ARGS.case}: {f}")
        return 1
    print(f"PASS {ARGS.case}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
