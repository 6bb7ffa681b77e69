#!/usr/bin/env python3
"""Courier jobs started by Slurm's srun over three slurmd on this machine (slurm_lab.py): with
--mpi=pmi2 (Courier speaks PMI-2 to it; PMI-1 too when asked) and --mpi=pmix (Courier loads
Slurm's libpmix), the MPI test programs of the across-hosts tests at their process counts, with
ranks in blocks over the three nodes (shared memory within a node, TCP between them: each slurmd
is a node of its own although all run here). Plain srun, without an MPI plugin, must refuse
loudly rather than start unrelated one-process worlds. Failures end the job and leave nothing.

usage: slurm_test.py --mpi BUILD/test/mpi --prog LAUNCHER_PROG CASE
       slurm_test.py --list
Exits 77 (skipped) where the cluster cannot run (not root, Slurm or munge not installed).
"""

import argparse
import os
import re
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "hosts"))
import slurm_lab  # noqa: E402
from netns_test import PROGRAMS  # noqa: E402  (the same programs and counts as across hosts)

SKIP = 77
CASES = {}


class Failure(Exception):
    pass


def check(cond, msg):
    if not cond:
        raise Failure(msg)


def case(fn):
    CASES[fn.__name__] = fn
    return fn


def describe(p):
    return f"exit {p.returncode} after {p.elapsed:.2f}s\n--- stdout:\n{p.stdout[-3000:]}\n--- stderr:\n{p.stderr[-3000:]}"


def courier_shm():
    return sorted(e for e in os.listdir("/dev/shm") if "courier" in e.lower())


def finished(lab, shm_before):
    """After a job: no step or task of it left, nothing new in /dev/shm."""
    lab.idle()
    deadline = time.monotonic() + 5
    while lab.steps_left() and time.monotonic() < deadline:
        time.sleep(0.05)
    check(not lab.steps_left(), f"processes left after the job: {lab.steps_left()}")
    new = sorted(set(courier_shm()) - set(shm_before))
    check(not new, f"left in /dev/shm: {new}")


def in_blocks(np):
    """srun options placing NP tasks on n1..n3 in blocks of at most ceil(NP/3) (left to itself,
    Slurm fills the first node's CPUs first), and the environment telling the test programs
    so: TEST_NODES=3, whose layout (the first NP % 3 nodes one task more) is Slurm's where NP
    divides by 3, as at every count pt2pt/across_nodes runs at. (-m arbitrary with a host file
    would place tasks anywhere, but then Slurm's pmi2 plugin gives every task a node of its
    own in PMI_process_mapping.)"""
    per = -(-np // 3)
    return ["-N", "3", "-n", str(np), f"--ntasks-per-node={per}"], {"TEST_NODES": "3"}


def programs(plugin, names=None, env=None):
    def run():
        with slurm_lab.SlurmLab() as lab:
            before = courier_shm()
            for name, (nps, args) in PROGRAMS.items():
                if names and name not in names:
                    continue
                for np in nps:
                    opts, e = in_blocks(np)
                    p = lab.srun([*opts, f"--mpi={plugin}", os.path.join(ARGS.mpi, name), *args], env={**e, **(env or {})})
                    check(p.returncode == 0 and "FAIL" not in p.stdout + p.stderr,
                          f"{name} at {np} ranks under srun --mpi={plugin}: " + describe(p))
                    finished(lab, before)
    return run


CASES["pmi2_programs"] = programs("pmi2")
CASES["pmix_programs"] = programs("pmix")
# Slurm's pmi2 plugin also takes PMI-1 lines (what MPICH's simple PMI speaks)
CASES["pmi1_over_pmi2_plugin"] = programs("pmi2", ("pt2pt/across_nodes", "coll/allreduce"), {"COURIER_PMI": "pmi1"})


def hello_ranks(p, n):
    return sorted(int(r) for r, size in re.findall(r"hello rank (\d+) of (\d+)", p.stdout) if int(size) == n)


@case
def hello_both_plugins():
    """One world of 7 from each plugin, every rank once; srun -n 8 on one node too."""
    with slurm_lab.SlurmLab() as lab:
        for plugin in ("pmi2", "pmix"):
            for nodes, n in (("3", 7), ("1", 8)):
                p = lab.srun(["-N", nodes, "-n", str(n), f"--mpi={plugin}", ARGS.prog, "hello"], timeout=60)
                check(p.returncode == 0 and hello_ranks(p, n) == list(range(n)), describe(p))


@case
def plain_srun_refuses():
    """srun without --mpi (MpiDefault=none): every task refuses to start, naming the fix."""
    with slurm_lab.SlurmLab() as lab:
        p = lab.srun(["-N", "3", "-n", "3", ARGS.prog, "hello"], timeout=60)
        check(p.returncode != 0, "started anyway: " + describe(p))
        check("hello rank" not in p.stdout, "a task ran as a singleton: " + describe(p))
        check(p.stderr.count("srun --mpi=pmi2 or srun --mpi=pmix") == 3, describe(p))


def failure(plugin, mode, extra=()):
    def run():
        with slurm_lab.SlurmLab() as lab:
            before = courier_shm()
            opts, e = in_blocks(6)
            p = lab.srun([*extra, *opts, f"--mpi={plugin}", ARGS.prog, mode], timeout=60,
                         env={**e, "ASAN_OPTIONS": os.environ.get("ASAN_OPTIONS", "") + ":handle_segv=0"})
            check(p.returncode != 0, describe(p))
            check(p.elapsed < 20, "the job did not end promptly: " + describe(p))
            if mode == "abort":
                check("MPI_Abort" in p.stderr, "the abort is not named: " + describe(p))
            finished(lab, before)
    return run


# MPI_Abort reaches Slurm through PMI and ends the step; a rank that dies ends it with srun -K
# (--kill-on-bad-exit), as Slurm's documentation advises for MPI jobs.
CASES["abort_pmi2"] = failure("pmi2", "abort")
CASES["abort_pmix"] = failure("pmix", "abort")
CASES["rank_dies_pmi2"] = failure("pmi2", "segv", ("-K",))
CASES["rank_dies_pmix"] = failure("pmix", "segv", ("-K",))


def dies_in_collective(plugin):
    """Without -K, Slurm leaves the other tasks of a step running when one dies: rank 5 kills
    itself while the job loops in MPI_Allreduce, and the ranks that talk to it over TCP notice
    its connections end without its MPI_Finalize and end the job, naming it."""
    def run():
        with slurm_lab.SlurmLab() as lab:
            before = courier_shm()
            opts, e = in_blocks(6)
            # (an allreduce in tiers would leave rank 5 talking to its node's leader only, through
            # shared memory, where the node's watch names it: rank 5 must have TCP peers here)
            e = dict(e or {}, COURIER_COLL_ALLREDUCE="recursive_doubling")
            p = lab.srun([*opts, f"--mpi={plugin}", ARGS.prog, "coll", "allreduce", "5", "300"], timeout=60, env=e)
            check(p.returncode != 0, describe(p))
            check(p.elapsed < 20, "the job did not end promptly: " + describe(p))
            # (named by a TCP peer, or by rank 4, which shares its node and watches it, if that comes first)
            check(re.search(r"world rank 5 (\(pid \d+, on this node\) )?ended without MPI_Finalize", p.stderr),
                  "the dead rank is not named: " + describe(p))
            finished(lab, before)
    return run


CASES["rank_dies_no_K_pmi2"] = dies_in_collective("pmi2")
CASES["rank_dies_no_K_pmix"] = dies_in_collective("pmix")


def dies_on_one_node(plugin, wait):
    """The same on one node, where no connection closes: the ranks that share memory with
    rank 5 watch it (pidfds) and end the job, naming it, whether they spin or sleep while they
    wait. Without the watch the job is still running at the 60 s timeout."""
    def run():
        with slurm_lab.SlurmLab() as lab:
            before = courier_shm()
            p = lab.srun(["-N", "1", "-n", "6", f"--mpi={plugin}", ARGS.prog, "coll", "allreduce", "5", "300"],
                         timeout=60, env={"COURIER_WAIT": wait})
            check(p.returncode != 0, describe(p))
            check(p.elapsed < 20, "the job did not end promptly: " + describe(p))
            check("world rank 5 (pid" in p.stderr and "ended without MPI_Finalize" in p.stderr,
                  "the dead rank is not named: " + describe(p))
            finished(lab, before)
    return run


CASES["rank_dies_one_node_pmi2_sleep"] = dies_on_one_node("pmi2", "sleep")
CASES["rank_dies_one_node_pmix_spin"] = dies_on_one_node("pmix", "spin")


def main():
    global ARGS
    ap = argparse.ArgumentParser()
    ap.add_argument("--mpi")
    ap.add_argument("--prog")
    ap.add_argument("--list", action="store_true")
    ap.add_argument("case", nargs="?")
    ARGS = ap.parse_args()
    if ARGS.list:
        print("\n".join(CASES))
        return 0
    why = slurm_lab.missing()
    if why:
        print(f"SKIP {ARGS.case}: cannot run Slurm here: {why}")
        return SKIP
    slurm_lab.become_subreaper()
    # (under the sanitizers: what Slurm's libpmix keeps until exit is not Courier's leak)
    os.environ["LSAN_OPTIONS"] = ("suppressions=" + os.path.join(HERE, "..", "launcher", "lsan-foreign.supp") + ":" +
                                  os.environ.get("LSAN_OPTIONS", ""))
    try:
        CASES[ARGS.case]()
    except (Failure, slurm_lab.LabError) as f:
        print(f"FAIL {ARGS.case}: {f}")
        return 1
    print(f"PASS {ARGS.case}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
