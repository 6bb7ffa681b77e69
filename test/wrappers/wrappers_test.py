#!/usr/bin/env python3
"""Tests of the compiler wrappers, the pkg-config file, CMake's FindMPI and `make install`:
programs are built the ways users build them, then run with mpiexec and checked.

usage: wrappers_test.py --build BUILD_DIR --src SOURCE_DIR CASE
"""
import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
CASES = {}


def case(fn):
    CASES[fn.__name__] = fn
    return fn


def sh(cmd, **kw):
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=300, **kw)
    if p.returncode != 0:
        raise SystemExit(f"FAIL: {' '.join(cmd)} exited {p.returncode}\n{p.stdout}\n{p.stderr}")
    return p.stdout


def run_job(bindir, exe, np, pattern):
    out = sh([os.path.join(bindir, "mpiexec"), "-n", str(np), exe])
    ranks = sorted(int(m) for m in re.findall(pattern, out))
    if ranks != list(range(np)):
        raise SystemExit(f"FAIL: {exe} at n={np} printed:\n{out}")


@case
def mpicc_builds_c(a, tmp):
    exe = os.path.join(tmp, "hello_c")
    sh([os.path.join(a.bin, "mpicc"), "-O2", "-Wall", "-o", exe, os.path.join(HERE, "hello.c")])
    run_job(a.bin, exe, 3, r"C rank (\d+) of 3")
    # separate compile and link steps
    obj = os.path.join(tmp, "hello.o")
    sh([os.path.join(a.bin, "mpicc"), "-c", "-o", obj, os.path.join(HERE, "hello.c")])
    sh([os.path.join(a.bin, "mpicc"), "-o", exe + "2", obj])
    run_job(a.bin, exe + "2", 2, r"C rank (\d+) of 2")


@case
def mpicxx_builds_cxx(a, tmp):
    exe = os.path.join(tmp, "hello_cxx")
    sh([os.path.join(a.bin, "mpicxx"), "-O2", "-Wall", "-o", exe, os.path.join(HERE, "hello.cpp")])
    run_job(a.bin, exe, 4, r"C\+\+ rank (\d+) of 4")


@case
def wrapper_queries(a, tmp):
    mpicc = os.path.join(a.bin, "mpicc")
    prefix = os.path.realpath(os.path.join(a.bin, ".."))
    show = sh([mpicc, "-show", "x.c", "-o", "x"])
    assert f"-I{prefix}/include" in show and "x.c -o x" in show and "-lmpi_abi" in show, show
    assert sh([mpicc, "-showme:compile"]).strip().startswith(f"-I{prefix}/include")
    link = sh([mpicc, "-showme:link"])
    assert f"-L{prefix}/lib" in link and "-lmpi_abi" in link, link
    assert "-lmpi_abi" not in sh([mpicc, "-compile-info", "x.c"]) and "-lmpi_abi" in sh([mpicc, "-link-info", "x.o"])
    assert sh([mpicc, "-showme:incdirs"]).strip() == f"{prefix}/include"
    assert sh([mpicc, "-showme:libdirs"]).strip() == f"{prefix}/lib"
    assert "Courier MPI" in sh([mpicc, "-showme:version"])
    # COURIER_CC picks the compiler
    assert sh([mpicc, "-show"], env=dict(os.environ, COURIER_CC="clang-fake")).startswith("clang-fake ")


@case
def pkg_config(a, tmp):
    if not shutil.which("pkg-config"):
        raise SystemExit("FAIL: pkg-config is not installed (.ci/run installs it)")
    env = dict(os.environ, PKG_CONFIG_PATH=os.path.join(a.build, "lib", "pkgconfig"))
    flags = sh(["pkg-config", "--cflags", "--libs", "courier"], env=env).split()
    exe = os.path.join(tmp, "hello_pc")
    sh(["cc", "-o", exe, os.path.join(HERE, "hello.c"), *flags, f"-Wl,-rpath,{a.build}/lib"])
    run_job(a.bin, exe, 2, r"C rank (\d+) of 2")


@case
def cmake_find_package(a, tmp):
    bdir = os.path.join(tmp, "cmake-build")
    env = dict(os.environ, PATH=a.bin + os.pathsep + os.environ["PATH"])
    out = sh(["cmake", "-S", os.path.join(HERE, "cmake_project"), "-B", bdir,
              f"-DMPI_C_COMPILER={a.bin}/mpicc", f"-DMPI_CXX_COMPILER={a.bin}/mpicxx",
              f"-DMPIEXEC_EXECUTABLE={a.bin}/mpiexec"], env=env)
    assert "MPI_C_VERSION=5.0" in out, out
    sh(["cmake", "--build", bdir], env=env)
    run_job(a.bin, os.path.join(bdir, "hello_c"), 2, r"C rank (\d+) of 2")
    run_job(a.bin, os.path.join(bdir, "hello_cxx"), 3, r"C\+\+ rank (\d+) of 3")


@case
def install_prefix(a, tmp):
    prefix = os.path.join(tmp, "inst")
    sh(["cmake", "--install", a.build, "--prefix", prefix])
    for f in ("bin/mpicc", "bin/mpicxx", "bin/mpiexec", "bin/mpirun", "bin/courier-info", "include/mpi.h",
              "lib/libmpi_abi.so.1", "lib/libmpi_abi.so", "lib/pkgconfig/courier.pc"):
        assert os.path.exists(os.path.join(prefix, f)), f"{f} is not installed"
    assert os.readlink(os.path.join(prefix, "lib/libmpi_abi.so")) == "libmpi_abi.so.1"
    # The installed tree works on its own, even moved elsewhere (everything is relative).
    moved = os.path.join(tmp, "moved")
    shutil.move(prefix, moved)
    exe = os.path.join(tmp, "hello_inst")
    sh([os.path.join(moved, "bin/mpicc"), "-o", exe, os.path.join(HERE, "hello.c")])
    assert moved in sh(["ldd", exe]), "the program does not use the installed library"
    run_job(os.path.join(moved, "bin"), exe, 2, r"C rank (\d+) of 2")
    run_job(os.path.join(moved, "bin"), exe, 2, r"C rank (\d+) of 2")
    out = sh([os.path.join(moved, "bin/courier-info")])
    assert "Courier MPI" in out and "COURIER_VERBOSE" in out and moved in out, out
    out = sh([os.path.join(moved, "bin/mpirun"), "-n", "2", exe])
    assert out.count("C rank") == 2


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build")
    ap.add_argument("--list", action="store_true")
    ap.add_argument("case", nargs="?")
    a = ap.parse_args()
    if a.list:
        print("\n".join(CASES))
        return 0
    a.bin = os.path.join(a.build, "bin")
    with tempfile.TemporaryDirectory() as tmp:
        try:
            CASES[a.case](a, tmp)
        except AssertionError as e:
            print(f"FAIL {a.case}: {e}")
            return 1
    print(f"PASS {a.case}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
