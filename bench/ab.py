#!/usr/bin/env python3
"""Paired A/B of two Courier builds: is a change faster or slower, on a machine whose speed
changes minute to minute?

usage: bench/ab.py --before OLD/build/bin [--after build/bin] [--pairs N] [--only latency,...]

compare.py's rounds take minutes, and this VM moves between a fast and a slow phase (3x apart
for bandwidth) within one round, so two builds measured minutes apart can differ by the phase
alone. Here each benchmark runs with both builds back to back, `pairs` times, alternating which
goes first; every figure is the median of the per-pair ratios (after against before, above 1
meaning after is faster), with the range of those ratios. A phase change hits both runs of a
pair alike and cancels out.
"""

import argparse
import os
import statistics
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import compare  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))

# benchmark, process count, arguments: the rows of compare.py's table that a change of the
# message path or of the collectives moves.
CASES = {
    "latency": [("latency", 2, ["1048576"])],
    "bandwidth": [("bandwidth", 2, ["1048576"])],
    "msgrate": [("msgrate", 2, ["8"])],
    "collectives": [("collectives", n, [str(1 << 20), "0.3"]) for n in (2, 4, 8)],
    # The nonblocking collectives and, beside them, the blocking calls whose fast path they share.
    "icoll": [("collectives", n, [str(1 << 20), "0.2", "barrier", "allreduce", "iallreduce", "ialltoall"])
              for n in (2, 4, 8)],
    "overlap": [("overlap", n, []) for n in (2, 4)],
}
LOWER_IS_BETTER = {"us", "ms", "s"}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--before", required=True, help="the other build's bin/")
    ap.add_argument("--after", default=os.path.join(HERE, "..", "build", "bin"))
    ap.add_argument("--pairs", type=int, default=8)
    ap.add_argument("--only", default=",".join(CASES))
    ap.add_argument("--coll-bytes", type=int, default=1 << 20, help="largest collective message")
    ap.add_argument("--markdown")
    args = ap.parse_args()
    env = dict(os.environ)
    builds = {"before": compare.MPI("before", "before", os.path.abspath(args.before), env),
              "after": compare.MPI("after", "after", os.path.abspath(args.after), env)}
    work = tempfile.mkdtemp(prefix="courier-ab-")
    exes = {}
    for key, mpi in builds.items():
        os.makedirs(os.path.join(work, key))
        exes[key] = compare.build(mpi, os.path.join(work, key))
    ratios, values = {}, {}
    cases = [(b, n, [str(args.coll_bytes)] + a[1:] if b == "collectives" else a)
             for name in args.only.split(",") for b, n, a in CASES[name]]
    for i in range(args.pairs):
        order = ["before", "after"] if i % 2 == 0 else ["after", "before"]
        print(f"pair {i + 1}/{args.pairs} ...", file=sys.stderr)
        for bench, n, bargs in cases:
            got = {k: compare.run(builds[k], n, exes[k][bench], *bargs) for k in order}
            for row, (after, unit) in got["after"].items():
                if row not in got["before"] or after <= 0 or got["before"][row][0] <= 0:
                    continue
                before = got["before"][row][0]
                r = before / after if unit in LOWER_IS_BETTER else after / before
                ratios.setdefault((bench, row), []).append(r)
                values.setdefault((bench, row), ([], [], unit))
                values[(bench, row)][0].append(after)
                values[(bench, row)][1].append(before)
    lines = ["| benchmark | np | size | after | before | unit | after vs before (median of pairs) | range of pairs |",
             "|---|---|---|---|---|---|---|---|"]
    for (bench, row), rs in sorted(ratios.items()):
        name, np_, size = row
        a, b, unit = values[(bench, row)]
        lines.append(f"| {name} | {np_} | {compare.human(size) if name != 'barrier' else ''} "
                     f"| {statistics.median(a):.3g} | {statistics.median(b):.3g} | {unit} "
                     f"| {statistics.median(rs):.2f}x | {min(rs):.2f}–{max(rs):.2f} |")
    text = "\n".join(lines)
    print(text)
    if args.markdown:
        with open(args.markdown, "w") as f:
            f.write(text + "\n")


if __name__ == "__main__":
    main()
