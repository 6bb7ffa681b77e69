#!/usr/bin/env python3
"""Judge a run of MPICH's test suite against Courier's lists of expected failures and flaky tests.

Reads the JUnit files that ../shared/conformance/mpich-testsuite.sh leaves in its results
directory (one per suite directory), plus basic.verdicts written by run.sh. A test is named as
runtests names it: "dir/program NP [args] [env]", whitespace collapsed, e.g. "coll/allred 4 -count=10".
A list entry applies to every test of that name (the suite lists a few twice).

  expected failure  listed in expected-failures.txt and failed          fine
  unexpected pass   listed in expected-failures.txt and passed          FAILS the run: drop the line
  flaky             listed in flaky.txt, passed or failed               fine
  unexpected fail   not listed and failed (or never ran)                FAILS the run
  stale entry       listed, its directory ran, but no such test         FAILS the run: fix the line
  skipped           the suite skipped it (strict mode, memory)          fine

The last line is "conformance: N passed, N failed, N skipped": failed counts the surprises
(unexpected failures, unexpected passes, stale entries), skipped counts expected failures, flaky
failures and suite skips.
"""
import argparse
import collections
import os
import re
import sys


def norm(name):
    return re.sub(r"\s+", " ", name.strip())


def read_list(path):
    """name -> (reason, category); category is the latest '## ' heading."""
    entries, category = {}, "uncategorised"
    if not os.path.exists(path):
        return entries
    with open(path, encoding="utf-8") as f:
        for lineno, line in enumerate(f, 1):
            if line.startswith("## "):
                category = line[3:].strip()
                continue
            if not line.strip() or line.lstrip().startswith("#"):
                continue
            if "|" not in line:
                sys.exit(f"{path}:{lineno}: expected 'test | reason', got: {line.rstrip()}")
            name, reason = line.split("|", 1)
            if not reason.strip():
                sys.exit(f"{path}:{lineno}: {norm(name)} has no reason")
            if norm(name) in entries:
                sys.exit(f"{path}:{lineno}: {norm(name)} listed twice")
            entries[norm(name)] = (reason.strip(), category)
    return entries


def junit_tests(path):
    """[(name, verdict, output lines)] from one runtests JUnit file."""
    with open(path, encoding="utf-8", errors="replace") as f:
        text = f.read()
    tests = []
    for m in re.finditer(r'<testcase(?: classname="[^"]*")? name="\s*\d*\s*-\s*\./(.*?)"'
                         r'(?: time="[^"]*")?>(.*?)</testcase>', text, re.S):
        name, body = norm(m.group(1)), m.group(2)
        if "<failure" in body:
            out = [l[3:] for l in body.splitlines()
                   if l.startswith("## ") and not l.startswith("## Test output")]
            tests.append((name, "fail", out))
        elif "<skipped" in body:
            tests.append((name, "skip", []))
        else:
            tests.append((name, "pass", []))
    return tests


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--results", required=True)
    ap.add_argument("--dirs", required=True)
    ap.add_argument("--expected", required=True)
    ap.add_argument("--flaky", required=True)
    ap.add_argument("--elapsed", type=int, default=0)
    a = ap.parse_args()
    dirs = a.dirs.split()
    expected, flaky = read_list(a.expected), read_list(a.flaky)
    both = sorted(set(expected) & set(flaky))
    if both:
        sys.exit("listed both as expected failure and as flaky: " + ", ".join(both))

    times = {}
    summary = os.path.join(a.results, "summary.txt")
    if os.path.exists(summary):
        for line in open(summary):
            f = line.split()
            if len(f) == 6:
                times[f[0]] = int(f[5])

    def dir_of(name):
        path = name.split(" ")[0]
        return max((d for d in dirs if path.startswith(d + "/")), key=len, default=path.rsplit("/", 1)[0])

    tests, problems = [], []          # tests: (dir, name, verdict, output, log)
    for d in dirs:
        if d == "basic":
            vf = os.path.join(a.results, "basic.verdicts")
            for line in open(vf) if os.path.exists(vf) else []:
                name, verdict, log = line.rstrip("\n").split("\t")
                out = open(log, errors="replace").read().splitlines() if verdict == "fail" else []
                tests.append((d, norm(name), verdict, out, log))
            continue
        s = d.replace("/", "_")
        jf, rl = os.path.join(a.results, s + ".junit.xml"), os.path.join(a.results, f"run-{s}.log")
        log_tail = open(rl, errors="replace").read().rstrip().splitlines()[-1:] if os.path.exists(rl) else []
        if not (log_tail and log_tail[0].startswith("JUNIT formatted results")):
            problems.append((d, f"{d}: runtests did not finish, so some tests never ran",
                             log_tail, rl))
        for name, verdict, out in (junit_tests(jf) if os.path.exists(jf) else []):
            tests.append((d, name, verdict, out, rl))

    per_dir = collections.OrderedDict((d, collections.Counter()) for d in dirs)
    seen = set()
    unexpected_fail, unexpected_pass = [], []
    categories = collections.Counter()
    for d, name, verdict, out, log in tests:
        seen.add(name)
        c = per_dir[d]
        c["total"] += 1
        if verdict == "skip":
            c["skipped"] += 1
        elif name in flaky:
            c["flaky"] += 1
            c["flaky passed" if verdict == "pass" else "flaky failed"] += 1
        elif name in expected:
            if verdict == "fail":
                c["xfail"] += 1
                categories[expected[name][1]] += 1
            else:
                c["xpass"] += 1
                unexpected_pass.append((name, expected[name][0]))
        elif verdict == "pass":
            c["passed"] += 1
        else:
            c["failed"] += 1
            unexpected_fail.append((name, out, log))
    stale = [n for n in list(expected) + list(flaky) if n not in seen and dir_of(n) in per_dir]
    for d, what, out, log in problems:
        per_dir[d]["failed"] += 1
        unexpected_fail.append((what, out, log))

    cols = ("total", "passed", "xfail", "flaky", "failed", "xpass", "skipped")
    print("%-14s %6s %7s %7s %6s %7s %6s %8s %8s" % (("directory",) + cols + ("time(s)",)))
    tot = collections.Counter()
    for d, c in per_dir.items():
        tot.update(c)
        print("%-14s %6d %7d %7d %6d %7d %6d %8d %8s" % ((d,) + tuple(c[k] for k in cols) + (times.get(d.replace("/", "_"), times.get(d, "")),)))
    print("%-14s %6d %7d %7d %6d %7d %6d %8d" % (("TOTAL",) + tuple(tot[k] for k in cols)))
    print("(xfail: failed as expected-failures.txt says; flaky: in flaky.txt, %d passed and %d failed; "
          "failed: unexpected failures; xpass: unexpected passes; skipped: by the suite itself)"
          % (tot["flaky passed"], tot["flaky failed"]))
    if categories:
        print("\nexpected failures by category:")
        for cat, n in sorted(categories.items(), key=lambda kv: (-kv[1], kv[0])):
            print("  %4d  %s" % (n, cat))

    rel = lambda p: os.path.relpath(p, os.getcwd()) if p else p
    if unexpected_fail:
        print(f"\nUNEXPECTED FAILURES ({len(unexpected_fail)}): fix Courier, or list the test with its "
              f"reason in {rel(a.expected)}")
        for name, out, log in unexpected_fail:
            print(f"  FAIL {name}    (log: {rel(log)})")
            for l in out[:15]:
                print(f"       | {l[:200]}")
            if len(out) > 15:
                print(f"       | ... {len(out) - 15} more lines")
    if unexpected_pass:
        print(f"\nUNEXPECTED PASSES ({len(unexpected_pass)}): these now pass; remove their lines from {rel(a.expected)}")
        for name, reason in unexpected_pass:
            print(f"  PASS {name}    (listed as: {reason})")
    if stale:
        print(f"\nSTALE ENTRIES ({len(stale)}): listed, but no such test ran in its directory; fix or remove the lines")
        for name in stale:
            print(f"  ???? {name}")

    failed = len(unexpected_fail) + len(unexpected_pass) + len(stale)
    passed = tot["passed"] + tot["flaky passed"]
    skipped = tot["xfail"] + tot["flaky failed"] + tot["skipped"]
    print(f"\nconformance: {tot['total']} tests in {len(dirs)} directories in {a.elapsed} s; "
          f"{tot['xfail']} expected failures, {tot['flaky']} flaky, {tot['skipped']} skipped by the suite; "
          f"{len(unexpected_fail)} unexpected failures, {len(unexpected_pass)} unexpected passes, "
          f"{len(stale)} stale entries")
    print(f"conformance: {passed} passed, {failed} failed, {skipped} skipped")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
