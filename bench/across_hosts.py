#!/usr/bin/env python3
"""Point-to-point between two hosts over TCP: Courier beside MPICH and Open MPI (PyPI), with one
process in each of two network namespaces joined through a bridge (veth pairs; the hosts of
test/hosts/netns_test.py), each implementation started by its own launcher across them
(Courier's mpiexec and MPICH's Hydra through test/hosts/ns_ssh, Open MPI's mpirun with ns_ssh
as its ssh). Every implementation is held to TCP over the namespaces' eth0: MPICH's UCX would
otherwise notice that both processes share a machine and use shared memory (UCX_TLS=self,tcp),
Open MPI gets btl self,tcp on eth0. Needs root and `ip`.

Each round also runs bench/tcp_limit.c between the same two namespaces: plain sockets with no
MPI (ping-pong on one connection, a stream of writes), the limit an MPI over TCP can approach.

Rounds are interleaved (each round runs every implementation once); each figure is the median
of the rounds with its spread (min-max), "vs best peer" Courier's ratio to the best peer's
median (above 1: Courier is better; for latency the peer's time over Courier's), and "of limit"
Courier's median against the sockets' (1: at the limit).

usage: bench/across_hosts.py [--courier BUILD/bin] [--baseline OTHER_BUILD/bin] [--rounds N]
                             [--peers mpich,openmpi] [--rma]
(--baseline adds another Courier build, say the commit before a change, as one more column in
every round. --rma measures one-sided communication instead, bench/rma.c with its origin on h1
and its target on h2: put and get latency and bandwidth under lock_all + flush, fetch-and-op,
fence; there is no sockets column then.)
"""

import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(ROOT, "test", "hosts"))
import compare  # noqa: E402
import netns_test  # noqa: E402

ROWS = [("latency", 8, "us"), ("latency", 1024, "us"), ("latency", 65536, "us"), ("bandwidth", 1 << 20, "MB/s"),
        ("bandwidth", 16 << 20, "MB/s")]
RMA_ROWS = [("rma_put_lockall", 8, "us"), ("rma_get_lockall", 8, "us"), ("rma_put_lockall", 1 << 20, "MB/s"),
            ("rma_get_lockall", 1 << 20, "MB/s"), ("rma_put_lock", 8, "us"), ("rma_acc_lockall", 1 << 20, "MB/s"),
            ("rma_fetch_and_op", 8, "Mops/s"), ("rma_fence", 0, "us")]


class Across:
    """An implementation whose `mpiexec -n 2` runs one process on h1 and one on h2."""

    def __init__(self, key, name, lab, launch, env):
        self.key, self.name, self.lab, self.launch = key, name, lab, launch
        self.env = dict(env, CR_NETNS_PREFIX=lab.prefix)

    def mpiexec(self, n, exe, *args):
        return ["ip", "netns", "exec", self.lab.prefix + "h1", "unshare", "--uts", "/bin/sh", "-c",
                'hostname h1; exec "$@"', "h1", *self.launch, exe, *args]


def placed(impl):
    """Exits unless impl's `mpiexec -n 2` puts one process on each host: a launcher that maps
    both to h1 measures TCP over loopback, and its figures would say nothing about two hosts."""
    p = subprocess.run(impl.mpiexec(2, "/bin/sh", "-c", "echo host=$(hostname) net=$(readlink /proc/self/ns/net)"),
                       capture_output=True, text=True, env=impl.env, timeout=120)
    hosts = sorted(re.findall(r"host=(\S+) net=(\S+)", p.stdout))
    if len(hosts) != 2 or hosts[0][0] != "h1" or hosts[1][0] != "h2" or hosts[0][1] == hosts[1][1]:
        sys.exit(f"{impl.name}: the launch does not put one process on h1 and one on h2 (placed: {hosts}, "
                 f"exit {p.returncode}): {p.stderr[-500:]}")


def tcp_limit(lab, exe):
    """One run of bench/tcp_limit.c from h1 to h2: figures keyed as compare.run's."""
    server = subprocess.Popen(["ip", "netns", "exec", lab.prefix + "h2", exe, "serve", "7070"])
    try:
        out = subprocess.run(["ip", "netns", "exec", lab.prefix + "h1", exe, "measure", "10.77.0.2", "7070"],
                             capture_output=True, text=True, timeout=300).stdout
    finally:
        try:
            server.wait(timeout=10)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()
    res = {}
    for line in out.splitlines():
        f = line.split()
        if len(f) == 4 and f[1].startswith("bytes="):
            res[(f[0], "2", int(f[1][6:]))] = (float(f[2][6:]), f[3][5:])
    return res


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--courier", default=os.path.join(ROOT, "build", "bin"))
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--peers", default="mpich,openmpi")
    ap.add_argument("--baseline", help="another Courier build's bin/, run beside it in every round")
    ap.add_argument("--rma", action="store_true", help="one-sided communication (bench/rma.c) instead")
    args = ap.parse_args()
    benches = (("rma", "1048576 0.05"),) if args.rma else (("latency", str(64 << 10)), ("bandwidth", str(16 << 20)))
    rows = RMA_ROWS if args.rma else ROWS
    if os.geteuid() != 0:
        sys.exit("needs root (network namespaces)")
    work = tempfile.mkdtemp(prefix="cr-hosts-bench-")
    impls = [("courier", "Courier", compare.MPI("courier", "Courier", args.courier, dict(os.environ)))]
    if args.baseline:
        impls.append(("baseline", "Courier baseline", compare.MPI("courier", "Courier baseline", args.baseline,
                                                                  dict(os.environ))))
    for key in args.peers.split(","):
        if key:
            peer = compare.ensure_peer(key)
            impls.append((key, peer.name, peer))
    exes = {"limit": os.path.join(work, "tcp_limit")}
    subprocess.run(["cc", "-O2", "-o", exes["limit"], os.path.join(HERE, "tcp_limit.c")], check=True)
    for key, _, mpi in impls:
        for b, _ in benches:
            exes[key, b] = os.path.join(work, f"{key}-{b}")
            subprocess.run([mpi.mpicc(), "-O2", "-o", exes[key, b], os.path.join(HERE, f"{b}.c")], check=True,
                           env=mpi.env, cwd=HERE)
    ns_ssh = netns_test.NS_SSH
    figures = {}
    with netns_test.Lab(hosts=2) as lab:
        runners = []
        for key, name, mpi in impls:
            b = mpi.bindir
            if key in ("courier", "baseline"):
                launch = [os.path.join(b, "mpiexec"), "-hosts", "h1,h2", "--launcher-exec", ns_ssh, "-n", "2"]
            elif key == "mpich":
                launch = [os.path.join(b, "mpiexec.hydra"), "-launcher", "ssh", "-launcher-exec", ns_ssh,
                          "-hosts", "h1,h2", "-n", "2"]
            else:  # Open MPI: PRRTE starts its daemons with ns_ssh as ssh, TCP over eth0
                # --map-by node: by default PRRTE counts h1's cores as its slots and puts both ranks
                # there (TCP over loopback inside one namespace, not across hosts)
                launch = [os.path.join(b, "mpirun"), "--host", "h1:1,h2:1", "--map-by", "node", "-n", "2", "--prtemca",
                          "plm_ssh_agent", ns_ssh, "--mca", "btl", "self,tcp", "--mca", "btl_tcp_if_include", "eth0"]
            env = dict(mpi.env)
            if key == "mpich":
                # UCX finds the two namespaces on one machine and would use shared memory: TCP only
                env.update(UCX_TLS="self,tcp", UCX_NET_DEVICES="eth0")
            runners.append((key, name, Across(key, name, lab, launch, env)))
        for key, name, impl in runners:
            placed(impl)
        for r in range(args.rounds):
            for (bench, _np, size), (value, unit) in ({} if args.rma else tcp_limit(lab, exes["limit"])).items():
                figures.setdefault(("limit", bench, size), []).append(value)
            for key, name, impl in runners:
                for b, arg in benches:
                    for (bench, _np, size), (value, unit) in compare.run(impl, 2, exes[key, b], *arg.split(),
                                                                        timeout=300).items():
                        figures.setdefault((key, bench, size), []).append(value)
            print(f"round {r + 1} of {args.rounds} done", file=sys.stderr)
    names = [name for _, name, _ in runners]
    print(f"Across two hosts (network namespaces, TCP over veth): median of {args.rounds} interleaved rounds [min-max]")
    print(f"{'row':<18}" + "".join(f"{n:>26}" for n in names + ["TCP limit"]) + f"{'vs best peer':>14}{'of limit':>10}")
    for bench, size, unit in rows:
        cells, med = [], {}
        for key, name, _ in runners:
            v = figures.get((key, bench, size))
            if v:
                med[key] = statistics.median(v)
                cells.append(f"{med[key]:.4g} [{min(v):.4g}-{max(v):.4g}]")
            else:
                cells.append("-")
        peers = [m for k, m in med.items() if k not in ("courier", "baseline")]
        ratio = "-"
        if "courier" in med and peers:
            best = min(peers) if unit == "us" else max(peers)
            ratio = f"{(best / med['courier'] if unit == 'us' else med['courier'] / best):.2f}x"
        lim, of_limit = figures.get(("limit", bench, size)), "-"
        cells.append(f"{statistics.median(lim):.4g} [{min(lim):.4g}-{max(lim):.4g}]" if lim else "-")
        if lim and "courier" in med:
            m = statistics.median(lim)
            of_limit = f"{(m / med['courier'] if unit == 'us' else med['courier'] / m):.2f}"
        label = f"{bench} {compare.human(size)}"
        print(f"{label:<18}" + "".join(f"{c:>26}" for c in cells) + f"{ratio:>14}{of_limit:>10}  {unit}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
