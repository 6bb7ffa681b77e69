#!/usr/bin/env python3
"""Start-up under Slurm: the wall time of `srun -n 8 init_finalize` (bench/init_finalize.c: MPI_Init
then MPI_Finalize) for Courier and MPICH (PyPI) under the same srun, on a private cluster of
three slurmd on this machine (test/slurm/slurm_lab.py; needs root, slurm-wlm and munge).

Rows: all 8 tasks on one node, and 8 tasks over the three nodes (TCP between them), each with
--mpi=pmi2 (Courier speaks PMI-2, MPICH its PMI-1) and, for Courier, --mpi=pmix. Rounds are
interleaved; each figure is the median of the rounds with its spread (min-max), and the ratio
is MPICH's median over Courier's (above 1: Courier starts faster). Open MPI's PyPI wheel is not
measured: its bundled PMIx client does not work with Debian's Slurm PMIx server here.

usage: bench/srun_startup.py [--courier BUILD/bin] [--rounds N] [-n TASKS]
"""

import argparse
import os
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(ROOT, "test", "slurm"))
import compare  # noqa: E402
import slurm_lab  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--courier", default=os.path.join(ROOT, "build", "bin"))
    ap.add_argument("--rounds", type=int, default=9)
    ap.add_argument("-n", type=int, default=8)
    args = ap.parse_args()
    why = slurm_lab.missing()
    if why:
        sys.exit(f"cannot run Slurm here: {why}")
    mpich = compare.ensure_peer("mpich")
    work = tempfile.mkdtemp(prefix="cr-srun-bench-")
    src = os.path.join(HERE, "init_finalize.c")
    exes = {"courier": os.path.join(work, "courier"), "mpich": os.path.join(work, "mpich")}
    subprocess.run([os.path.join(args.courier, "mpicc"), "-O2", "-o", exes["courier"], src], check=True)
    subprocess.run([mpich.mpicc(), "-O2", "-o", exes["mpich"], src], check=True, env=mpich.env)
    mpich_env = {"LD_LIBRARY_PATH": mpich.env["LD_LIBRARY_PATH"]}
    runs = [  # (row, implementation, srun options, environment)
        (f"-N 1 -n {args.n} --mpi=pmi2", "courier", ["-N", "1", "--mpi=pmi2"], {}),
        (f"-N 1 -n {args.n} --mpi=pmi2", "mpich", ["-N", "1", "--mpi=pmi2"], mpich_env),
        (f"-N 3 -n {args.n} --mpi=pmi2", "courier", ["-N", "3", "--mpi=pmi2"], {}),
        (f"-N 3 -n {args.n} --mpi=pmi2", "mpich", ["-N", "3", "--mpi=pmi2"], mpich_env),
        (f"-N 1 -n {args.n} --mpi=pmix", "courier", ["-N", "1", "--mpi=pmix"], {}),
        (f"-N 3 -n {args.n} --mpi=pmix", "courier", ["-N", "3", "--mpi=pmix"], {}),
    ]
    times, hangs = {}, {}
    slurm_lab.become_subreaper()
    with slurm_lab.SlurmLab() as lab:
        for r in range(args.rounds + 1):  # round 0 warms the page cache and the daemons
            for row, impl, opts, env in runs:
                try:
                    p = lab.srun([*opts, "-n", str(args.n), exes[impl]], env=env, timeout=60)
                except slurm_lab.LabError as e:  # a stuck start-up is reported, and not timed
                    print(f"warning: {impl}: {e}\n{lab.logs(first='slurmd')[-3000:]}", file=sys.stderr)
                    hangs[(row, impl)] = hangs.get((row, impl), 0) + 1
                    continue
                if p.returncode != 0:
                    sys.exit(f"{impl}: srun {' '.join(opts)} failed ({p.returncode}): {p.stderr[-1500:]}")
                if r:
                    times.setdefault((row, impl), []).append(p.elapsed * 1e3)
    print(f"srun start-up (MPI_Init + MPI_Finalize, wall ms), median of {args.rounds} interleaved rounds "
          "[min-max]; ratio = MPICH / Courier")
    print(f"{'srun':<28} {'Courier':>22} {'MPICH':>22} {'ratio':>6}")

    def cell(t):
        return f"{statistics.median(t):7.0f} [{min(t):.0f}-{max(t):.0f}]" if t else "-"
    for row in dict.fromkeys(r[0] for r in runs):
        c, m = times.get((row, "courier")), times.get((row, "mpich"))
        ratio = f"{statistics.median(m) / statistics.median(c):6.2f}" if c and m else "     -"
        stuck = "".join(f"  ({n} stuck runs of {impl})" for (r_, impl), n in hangs.items() if r_ == row)
        print(f"{row:<28} {cell(c or []):>22} {cell(m or []):>22} {ratio}{stuck}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
