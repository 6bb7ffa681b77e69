#!/usr/bin/env python3
"""Launcher tests: each case runs Courier's mpiexec on test/launcher/prog.c (or another test
program) and checks what a user sees: the output, the exit status, the failure message, how fast
a failed job ends, and that nothing is left behind (no process, no zombie, no /dev/shm file).

usage: launcher_test.py --bin BUILD/bin --prog PROG --fatal FATAL CASE
       launcher_test.py --list

This process makes itself a child subreaper, so ranks orphaned by a killed mpiexec become its
children: it can then tell whether they died (and reap them) instead of losing track of them.
"""

import argparse
import ctypes
import os
import re
import signal
import subprocess
import sys
import time
import uuid

PR_SET_CHILD_SUBREAPER = 36
CASES = {}


def case(fn):
    CASES[fn.__name__] = fn
    return fn


class Failure(Exception):
    pass


def check(cond, msg):
    if not cond:
        raise Failure(msg)


class Env:
    def __init__(self, args):
        self.mpiexec = os.path.join(args.bin, "mpiexec")
        self.prog = args.prog
        self.fatal = args.fatal


def marked_pids(mark):
    """Processes (alive or zombie) whose environment carries this test's mark."""
    pids = []
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            with open(f"/proc/{d}/environ", "rb") as f:
                if f"COURIER_TEST_MARK={mark}".encode() in f.read():
                    pids.append(int(d))
        except OSError:
            pass
    return pids


def reap_orphans():
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return


def shm_entries():
    return set(os.listdir("/dev/shm"))


class Run:
    def __init__(self, proc, out, err, elapsed):
        self.status = proc.returncode
        self.out = out
        self.err = err
        self.elapsed = elapsed

    def describe(self):
        return f"exit {self.status}, {self.elapsed:.2f}s\n--- stdout:\n{self.out[-3000:]}\n--- stderr:\n{self.err[-3000:]}"


def leftovers_check(mark, shm_before, grace=2.0):
    """Everything the job started must be gone; nothing new in /dev/shm."""
    deadline = time.monotonic() + grace
    while True:
        reap_orphans()
        alive = [p for p in marked_pids(mark) if not is_zombie(p)]
        if not alive or time.monotonic() > deadline:
            break
        time.sleep(0.02)
    check(not alive, f"processes left running after the job ended: {alive}")
    reap_orphans()
    zombies = [p for p in marked_pids(mark) if is_zombie(p)]
    check(not zombies, f"zombie processes left: {zombies}")
    new = shm_entries() - shm_before
    check(not new, f"/dev/shm entries left behind: {sorted(new)}")


def is_zombie(pid):
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] == "Z"
    except OSError:
        return False


def run(env, np, *args, prog=None, mpiexec_args=(), stdin=b"", extra_env=None, timeout=60):
    mark = uuid.uuid4().hex
    e = dict(os.environ)
    e["COURIER_TEST_MARK"] = mark
    e.update(extra_env or {})
    before = shm_entries()
    cmd = [env.mpiexec, *mpiexec_args, "-n", str(np), prog or env.prog, *args]
    t0 = time.monotonic()
    p = subprocess.run(cmd, input=stdin, capture_output=True, env=e, timeout=timeout)
    r = Run(p, p.stdout.decode(errors="replace"), p.stderr.decode(errors="replace"), time.monotonic() - t0)
    leftovers_check(mark, before)
    return r


# ------------------------------------------------------------------------------------- cases

def hello(env, np):
    r = run(env, np, "hello")
    check(r.status == 0, f"hello at n={np} failed: " + r.describe())
    lines = [ln for ln in r.out.splitlines() if ln.startswith("hello")]
    ranks = sorted(int(re.match(r"hello rank (\d+) of (\d+)", ln).group(1)) for ln in lines)
    sizes = {int(re.match(r"hello rank (\d+) of (\d+)", ln).group(2)) for ln in lines}
    check(ranks == list(range(np)), f"ranks seen: {ranks}")
    check(sizes == {np}, f"sizes seen: {sizes}")
    pids = {re.search(r"pid (\d+)", ln).group(1) for ln in lines}
    check(len(pids) == np, "ranks are not distinct processes")


for _n in (1, 2, 3, 4, 8, 16, 32):
    CASES[f"hello_np{_n}"] = (lambda n: lambda env: hello(env, n))(_n)


@case
def singleton(env):
    mark = uuid.uuid4().hex
    e = {k: v for k, v in os.environ.items() if not k.startswith("PMI_")}
    e["COURIER_TEST_MARK"] = mark
    p = subprocess.run([env.prog, "hello"], capture_output=True, env=e, timeout=30)
    out = p.stdout.decode()
    check(p.returncode == 0 and re.search(r"hello rank 0 of 1 ", out), f"singleton: {p.returncode} {out!r} {p.stderr!r}")


@case
def no_silent_singleton(env):
    """A process that some launcher says is one of several, with no PMI to reach, refuses."""
    for var, val in (("OMPI_COMM_WORLD_SIZE", "4"), ("PMI_SIZE", "4"), ("SLURM_STEP_NUM_TASKS", "2")):
        e = {k: v for k, v in os.environ.items() if not k.startswith("PMI_")}
        e[var] = val
        p = subprocess.run([env.prog, "hello"], capture_output=True, env=e, timeout=30)
        err = p.stderr.decode()
        check(p.returncode != 0, f"{var}={val}: started anyway: {p.stdout!r}")
        check("no PMI server can be reached" in err and var in err, f"{var}: unclear message: {err!r}")


@case
def env_passing(env):
    r = run(env, 3, "env", "CR_A", "CR_B", "CR_C", "CR_INHERITED",
            mpiexec_args=("-x", "CR_A=apple", "-genv", "CR_B", "banana split", "-x", "CR_C"),
            extra_env={"CR_C": "cherry", "CR_INHERITED": "yes"})
    check(r.status == 0, r.describe())
    for rank in range(3):
        for k, v in (("CR_A", "apple"), ("CR_B", "banana split"), ("CR_C", "cherry"), ("CR_INHERITED", "yes")):
            check(f"rank {rank} {k}={v}" in r.out, f"rank {rank} does not see {k}={v}:\n{r.out}")


@case
def stdin_to_rank0(env):
    data = os.urandom(1 << 20) + b"the end\n"
    r = run(env, 3, "stdin", stdin=data)
    check(r.status == 0, r.describe())
    s = 0
    for b in data:
        s = (s * 31 + b) & 0xFFFFFFFFFFFFFFFF
    check(f"rank 0 read {len(data)} bytes checksum {s}" in r.out, f"rank 0 did not get stdin:\n{r.out}")
    for rank in (1, 2):
        check(f"rank {rank} read 0 bytes" in r.out, f"rank {rank} got stdin:\n{r.out}")


def expected_line(rank, i):
    length = 20 + ((rank * 31 + i * 17) * 2654435761 & 0xFFFFFFFF) % 4000
    x = (rank * 7919 + i * 104729 + 1) & 0xFFFFFFFF
    head = f"{rank}:{i}:{length}:"
    chars = []
    for _ in range(len(head), length):
        x = (x * 1103515245 + 12345) & 0xFFFFFFFF
        chars.append(chr(ord("a") + (x >> 16) % 26))
    return head + "".join(chars)


@case
def output_lines_not_torn(env):
    nlines = 1500
    r = run(env, 8, "spam", str(nlines), timeout=120)
    check(r.status == 0, r.describe())
    seen = {}
    for ln in r.out.splitlines():
        m = re.match(r"(\d+):(\d+):(\d+):", ln)
        check(m, f"a line that is not a whole line from one rank: {ln[:120]!r}")
        rank, i = int(m.group(1)), int(m.group(2))
        check(ln == expected_line(rank, i), f"line {rank}:{i} is torn or mixed: {ln[:120]!r}...")
        check((rank, i) not in seen, f"line {rank}:{i} twice")
        seen[(rank, i)] = True
        check(i == 0 or (rank, i - 1) in seen, f"line {rank}:{i} before {rank}:{i-1}")
    check(len(seen) == 8 * nlines, f"{len(seen)} lines, expected {8 * nlines}")


@case
def tag_output(env):
    r = run(env, 4, "spam", "50", mpiexec_args=("--tag-output",))
    check(r.status == 0, r.describe())
    for ln in r.out.splitlines():
        m = re.match(r"\[(\d+)\] (\d+):(\d+):", ln)
        check(m and m.group(1) == m.group(2), f"untagged or mistagged line: {ln[:80]!r}")


def expect_failure(env, np, mode_args, status, message_re, within=2.5, **kw):
    r = run(env, np, *mode_args, **kw)
    check(r.status == status, f"exit status {r.status}, expected {status}: " + r.describe())
    check(re.search(message_re, r.err), f"message {message_re!r} not found: " + r.describe())
    check(r.elapsed < within, f"the job took {r.elapsed:.2f}s to end (limit {within}s): " + r.describe())
    return r


@case
def exit_status_before_finalize(env):
    expect_failure(env, 4, ("exit", "42"), 42,
                   r"mpiexec: rank 3 \(pid \d+\) on host \S+: exited with status 42 before calling MPI_Finalize")


@case
def exit_zero_without_finalize(env):
    expect_failure(env, 3, ("exit", "0"), 1, r"rank 2 \(pid \d+\) on host \S+: exited \(status 0\) without calling MPI_Finalize")


@case
def exit_status_after_finalize(env):
    r = run(env, 3, "exit", "5", "after")
    check(r.status == 5, "exit status after MPI_Finalize not propagated: " + r.describe())


@case
def exit_status_success(env):
    r = run(env, 4, "hello")
    check(r.status == 0 and not r.err, r.describe())


@case
def non_mpi_program(env):
    r = run(env, 2, "nompi")
    check(r.status == 0 and r.out.count("plain program") == 2, r.describe())
    r = run(env, 2, "nompi", "3")
    check(r.status == 3, r.describe())


@case
def killed_by_segv(env):
    # Under AddressSanitizer the program must die of the signal, not of ASan's report of it.
    asan = os.environ.get("ASAN_OPTIONS", "")
    expect_failure(env, 4, ("segv",), 128 + 11, r"rank 3 \(pid \d+\) on host \S+: killed by signal 11 \(Segmentation fault\)",
                   extra_env={"ASAN_OPTIONS": asan + ":handle_segv=0"})


@case
def mpi_abort(env):
    expect_failure(env, 4, ("abort",), 7, r"rank 3 \(pid \d+\) on host \S+: called MPI_Abort\(MPI_COMM_WORLD, 7\)")


def start_hanging(env, np, mpiexec_args=()):
    mark = uuid.uuid4().hex
    e = dict(os.environ)
    e["COURIER_TEST_MARK"] = mark
    before = shm_entries()
    p = subprocess.Popen([env.mpiexec, *mpiexec_args, "-n", str(np), env.prog, "hang"], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, env=e)
    pids = {}
    while len(pids) < np:
        ln = p.stdout.readline().decode()
        check(ln, "the job ended before all ranks were ready")
        m = re.match(r"ready (\d+) pid (\d+)", ln)
        if m:
            pids[int(m.group(1))] = int(m.group(2))
    return p, pids, mark, before


@case
def rank_killed_from_outside(env):
    p, pids, mark, before = start_hanging(env, 4)
    t0 = time.monotonic()
    os.kill(pids[2], signal.SIGKILL)
    out, err = p.communicate(timeout=30)
    elapsed = time.monotonic() - t0
    err = err.decode()
    check(p.returncode == 128 + 9, f"exit status {p.returncode}: {err}")
    check(re.search(rf"rank 2 \(pid {pids[2]}\) on host \S+: killed by signal 9 \(Killed\)", err), err)
    check(elapsed < 1.5, f"the job took {elapsed:.2f}s to end after a rank was killed")
    leftovers_check(mark, before)


@case
def mpiexec_killed(env):
    p, pids, mark, before = start_hanging(env, 4)
    t0 = time.monotonic()
    os.kill(p.pid, signal.SIGKILL)
    p.wait()
    # The ranks must die with it (they are our children now: we are their subreaper).
    deadline = t0 + 1.0
    while time.monotonic() < deadline:
        reap_orphans()
        if not [q for q in marked_pids(mark) if not is_zombie(q)]:
            break
        time.sleep(0.01)
    alive = [q for q in marked_pids(mark) if not is_zombie(q)]
    check(not alive, f"ranks survived mpiexec being killed: {alive}")
    leftovers_check(mark, before)


@case
def interrupt(env):
    p, pids, mark, before = start_hanging(env, 3)
    t0 = time.monotonic()
    p.send_signal(signal.SIGINT)
    out, err = p.communicate(timeout=30)
    check(p.returncode == 130, f"exit status {p.returncode} after Ctrl-C: {err.decode()}")
    check(time.monotonic() - t0 < 1.5, "Ctrl-C took too long")
    leftovers_check(mark, before)


@case
def timeout(env):
    expect_failure(env, 3, ("hang",), 124, r"did not finish within its time limit of 1 seconds", within=3.0,
                   mpiexec_args=("--timeout", "1"))


@case
def fatal_error(env):
    r = expect_failure(env, 3, (), 36, r"rank 2 \(pid \d+\) on host \S+: fatal error in MPI_Comm_get_attr \(MPI_ERR_KEYVAL",
                       prog=env.fatal)
    check(re.search(r"Courier: rank 2: MPI_Comm_get_attr: keyval=31337 is not a valid communicator keyval \(MPI_ERR_KEYVAL\)",
                    r.err), "the error message does not name the call, argument and value: " + r.describe())
    check("MPI_ERRORS_ARE_FATAL" in r.err, r.describe())


@case
def errors_abort(env):
    r = expect_failure(env, 3, ("abort",), 36, r"fatal error in MPI_Comm_get_attr", prog=env.fatal)
    check("MPI_ERRORS_ABORT" in r.err, r.describe())


@case
def program_not_found(env):
    r = run(env, 2, prog="./no-such-program-here")
    check(r.status == 127 and "cannot run './no-such-program-here'" in r.err, r.describe())


@case
def bad_options(env):
    for args, text in ((["-n", "0", "true"], "number of processes"), (["--frobnicate", "true"], "unknown option"),
                       (["-n", "2"], "no program")):
        p = subprocess.run([env.mpiexec, *args], capture_output=True, timeout=10)
        check(p.returncode == 2 and text in p.stderr.decode(), f"{args}: {p.returncode} {p.stderr!r}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin")
    ap.add_argument("--prog")
    ap.add_argument("--fatal")
    ap.add_argument("--list", action="store_true")
    ap.add_argument("case", nargs="?")
    args = ap.parse_args()
    if args.list:
        print("\n".join(CASES))
        return 0
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
    try:
        CASES[args.case](Env(args))
    except Failure as f:
        print(f"FAIL {args.case}: {f}")
        return 1
    print(f"PASS {args.case}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
