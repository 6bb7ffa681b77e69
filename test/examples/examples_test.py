#!/usr/bin/env python3
"""The example programs give the right answers, at several process counts: the demo a
newcomer runs first must be correct, not only run.

usage: examples_test.py --bin BUILD/bin --examples BUILD/examples CASE
"""
import argparse
import os
import re
import subprocess
import sys
import struct
import tempfile

CASES = {}


def case(fn):
    CASES[fn.__name__] = fn
    return fn


def run(a, n, prog, *args, cwd=None):
    p = subprocess.run([os.path.join(a.bin, "mpiexec"), "-n", str(n), os.path.join(a.examples, prog), *args],
                       capture_output=True, text=True, timeout=120, cwd=cwd)
    assert p.returncode == 0, f"{prog} at n={n} exited {p.returncode}:\n{p.stdout}\n{p.stderr}"
    return p.stdout


@case
def hello(a):
    for n in (1, 3, 8):
        out = run(a, n, "hello")
        ranks = sorted(int(r) for r in re.findall(rf"Hello from rank (\d+) of {n} ", out))
        assert ranks == list(range(n)), out


@case
def first_to_last(a):
    for n in (2, 5):
        out = run(a, n, "first_to_last")
        assert f"rank {n - 1} received 1234 from rank 0 (tag 17)" in out, out


@case
def integrate(a):
    for n in (1, 4, 7):
        out = run(a, n, "integrate", "1000000")
        err = float(re.search(r"error ([\d.e+-]+)", out).group(1))
        assert err < 1e-9, out


@case
def halo(a):
    """The halo exchange computes exactly what a serial run does, by either exchange."""
    for n in (1, 2, 4, 6, 9):
        for how in ([], ["sendrecv"]):
            out = run(a, n, "halo", "37", "29", "40", *how)
            m = re.search(r"max difference from the serial run (\S+)", out)
            assert m and float(m.group(1)) == 0.0, out


@case
def shared_primes(a):
    """A shared-memory window hands out blocks and collects counts: the serial count, every block once."""
    for n in (1, 3, 4, 8):
        out = run(a, n, "shared_primes", "200000")
        m = re.search(r"primes below 200000: (\d+) \(serial count (\d+)\), (\d+) blocks taken", out)
        assert m and m.group(1) == m.group(2) == "17984" and m.group(3) == "20", out


@case
def shared_window(a):
    """Neighbours write each other's ghost cells in one shared window (plain stores after
    Win_sync + barrier, or puts between fences): the rod matches the serial run to the last bit."""
    for n in (1, 2, 3, 4, 8, 16):
        for how in ("direct", "put"):
            out = run(a, n, "shared_window", "203", "400", how)
            m = re.search(r"rod of 203 cells, 400 steps on (\d+) processes .* max difference from the serial run (\S+),", out)
            assert m and int(m.group(1)) == n and float(m.group(2)) == 0.0, out


@case
def checkpoint(a):
    """A grid written in blocks through subarray views is, byte for byte, the grid a serial
    program writes, and reads back right in bands of rows; the file goes at the end."""
    for n in (1, 2, 3, 4, 6, 8):
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "grid.dat")
            out = run(a, n, "checkpoint", "37", "23", path, cwd=d)
            m = re.search(r"checkpoint of a 37 x 23 grid by (\d+) processes .*: (\d+) bytes in", out)
            assert m and int(m.group(1)) == n and int(m.group(2)) == 8 + 37 * 23 * 8, out
            assert "read back in %d bands of rows: 0 values wrong" % n in out, out
            with open(path, "rb") as f:
                data = f.read()
            want = struct.pack("<2i", 37, 23) + b"".join(struct.pack("<d", i * 1000.0 + j + 0.25)
                                                          for i in range(37) for j in range(23))
            assert data == want, f"the file at n={n} differs from the serial grid"
            run(a, n, "checkpoint", cwd=d)  # the default file, removed at the end
            assert os.listdir(d) == ["grid.dat"], os.listdir(d)


PALETTE = set(" .:-=+*#%@")


def mandelbrot_preview(out, w, h):
    """The text preview before the summary line: min(16, h) lines of min(64, w) characters."""
    lines = out.split("\n")
    end = next(k for k, line in enumerate(lines) if re.match(rf"{w}x{h} image \(checksum \d+\)", line))
    picture = lines[:end]
    rows, cols = min(16, h), min(64, w)
    assert len(picture) == rows, f"the {w}x{h} preview has {len(picture)} lines, not {rows}:\n{out}"
    for k, line in enumerate(picture):
        assert len(line) == cols, f"line {k} of the {w}x{h} preview has {len(line)} characters, not {cols}:\n{out}"
        assert set(line) <= PALETTE, f"line {k} of the {w}x{h} preview has characters not in the palette: {line!r}"
    assert len(set("".join(picture))) > 2, f"the {w}x{h} preview is flat:\n{out}"
    return "\n".join(picture)


@case
def mandelbrot(a):
    """The picture is the same whatever the process count (and every row arrives once), and
    the text preview is a picture: the right number of lines, each of the right width."""
    for w, h, counts in ((320, 200, (1, 3, 8)), (40, 10, (1, 4)), (801, 601, (5,))):
        sums, previews = set(), set()
        with tempfile.TemporaryDirectory() as d:
            for n in counts:
                out = run(a, n, "mandelbrot", str(w), str(h), cwd=d)
                sums.add(re.search(r"checksum (\d+)", out).group(1))
                previews.add(mandelbrot_preview(out, w, h))
                assert os.path.getsize(os.path.join(d, "mandelbrot.pgm")) == len(f"P5\n{w} {h}\n255\n") + w * h
        assert len(sums) == 1, f"different {w}x{h} pictures at different process counts: {sums}"
        assert len(previews) == 1, f"different {w}x{h} previews at different process counts"


@case
def bounce(a):
    out = run(a, 4, "bounce")
    assert len(re.findall(r"^\s+\d+\s+[\d.]+\s+[\d.]+$", out, re.M)) == 7, out


@case
def fortran_bounce(a):
    """The Fortran bounce (use mpi): one line per size from 1 byte to 1 MiB, data checked by itself."""
    out = run(a, 2, "bounce_f")
    rows = re.findall(r"^\s+(\d+)\s+\d+\s+[\d.]+\s+[\d.]+$", out, re.M)
    assert [int(r) for r in rows] == [2 ** k for k in range(21)], out
    out = run(a, 3, "bounce_f")  # other ranks wait
    assert "1048576" in out, out


@case
def fortran_particles_f08(a):
    """Particles of a Fortran derived type gathered through an MPI struct type (use mpi_f08):
    the centre of mass and total mass a serial computation gives, at several sizes."""
    for n, per in ((1, 5), (3, 5), (4, 2), (8, 3)):
        out = run(a, n, "particles_f08", str(per))
        k = n * per
        mass = [1 + i % 3 for i in range(k)]
        c = sum(m * i for m, i in zip(mass, range(k))) / sum(mass)
        assert f"{k} particles on {n} processes, total mass {sum(mass)}.0" in out, out
        got = [float(v) for v in re.search(r"centre of mass (\S+) (\S+) (\S+)", out).groups()]
        assert all(abs(g - e) < 1e-6 for g, e in zip(got, (c, 2 * c, -c))), (got, c, out)


@case
def timings(a):
    out = run(a, 3, "timings")
    for what in ("send/recv", "isend/irecv", "barrier", "bcast", "reduce"):
        assert what in out, out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin")
    ap.add_argument("--examples")
    ap.add_argument("--list", action="store_true")
    ap.add_argument("case", nargs="?")
    a = ap.parse_args()
    if a.list:
        print("\n".join(CASES))
        return 0
    try:
        CASES[a.case](a)
    except AssertionError as e:
        print(f"FAIL {a.case}: {e}")
        return 1
    print(f"PASS {a.case}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
