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
def fortran_mpifort_builds(a, tmp):
    """mpifort (and its other names) builds fixed-form mpif.h programs and `use mpi` programs."""
    for name in ("mpifort", "mpif77", "mpif90"):
        exe = os.path.join(tmp, f"hello_f77_{name}")
        sh([os.path.join(a.bin, name), "-O2", "-o", exe, os.path.join(HERE, "hello.f")])
        run_job(a.bin, exe, 3, r"Fortran77 rank (\d+) of 3")
    exe = os.path.join(tmp, "hello_f90")
    obj = os.path.join(tmp, "hello_f90.o")
    sh([os.path.join(a.bin, "mpifort"), "-c", "-o", obj, os.path.join(HERE, "hello.f90")], cwd=tmp)
    sh([os.path.join(a.bin, "mpifort"), "-o", exe, obj], cwd=tmp)
    run_job(a.bin, exe, 4, r"Fortran90 rank (\d+) of 4")
    exe = os.path.join(tmp, "hello_f08")
    sh([os.path.join(a.bin, "mpif90"), "-o", exe, os.path.join(HERE, "hello_f08.f90")], cwd=tmp)
    run_job(a.bin, exe, 3, r"Fortran2008 rank (\d+) of 3")


@case
def fortran_wrapper_queries(a, tmp):
    mpifort = os.path.join(a.bin, "mpifort")
    prefix = os.path.realpath(os.path.join(a.bin, ".."))
    show = sh([mpifort, "-show", "x.f90", "-o", "x"])
    assert f"-I{prefix}/include" in show and "x.f90 -o x" in show, show
    assert re.search(r"-lmpifort_abi -lmpi_abi", show), show
    assert sh([mpifort, "-showme"]).split()[0] == sh([mpifort, "-showme:command"]).strip()
    assert sh([mpifort, "-showme:libs"]).split() == ["mpifort_abi", "mpi_abi"]
    assert "mpifort: Courier MPI" in sh([mpifort, "-showme:version"])
    assert sh([mpifort, "-show"], env=dict(os.environ, COURIER_FC="gfortran-fake")).startswith("gfortran-fake ")
    for f in ("mpif.h", "mpi.mod", "mpi_constants.mod", "mpi_f08.mod"):
        assert os.path.exists(os.path.join(prefix, "include", f)), f"no include/{f}"


@case
def fortran_pkg_config(a, tmp):
    """pkg-config courier-fort gives what gfortran needs for use mpi_f08 (and mpi, mpif.h)."""
    env = dict(os.environ, PKG_CONFIG_PATH=os.path.join(a.build, "lib", "pkgconfig"))
    flags = sh(["pkg-config", "--cflags", "--libs", "courier-fort"], env=env).split()
    assert "-lmpifort_abi" in flags and "-lmpi_abi" in flags, flags
    exe = os.path.join(tmp, "hello_f08_pc")
    sh(["gfortran", "-o", exe, os.path.join(HERE, "hello_f08.f90"), *flags, f"-Wl,-rpath,{a.build}/lib"], cwd=tmp)
    run_job(a.bin, exe, 2, r"Fortran2008 rank (\d+) of 2")


@case
def fortran_cmake_find_package(a, tmp):
    bdir = os.path.join(tmp, "cmake-build")
    env = dict(os.environ, PATH=a.bin + os.pathsep + os.environ["PATH"])
    out = sh(["cmake", "-S", os.path.join(HERE, "cmake_fortran"), "-B", bdir,
              f"-DMPI_Fortran_COMPILER={a.bin}/mpifort", f"-DMPIEXEC_EXECUTABLE={a.bin}/mpiexec"], env=env)
    assert "MPI_Fortran_VERSION=5.0" in out and "HAVE_F77_HEADER=TRUE" in out and "HAVE_F90_MODULE=TRUE" in out, out
    assert "HAVE_F08_MODULE=TRUE" in out, out
    sh(["cmake", "--build", bdir], env=env)
    run_job(a.bin, os.path.join(bdir, "hello_f77"), 2, r"Fortran77 rank (\d+) of 2")
    run_job(a.bin, os.path.join(bdir, "hello_f90"), 3, r"Fortran90 rank (\d+) of 3")
    run_job(a.bin, os.path.join(bdir, "hello_f08"), 2, r"Fortran2008 rank (\d+) of 2")


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
    if os.path.exists(os.path.join(a.bin, "mpifort")):  # built with Fortran: it installs too
        for f in ("bin/mpifort", "bin/mpif77", "bin/mpif90", "include/mpif.h", "include/mpi.mod",
                  "include/mpi_f08.mod", "lib/libmpifort_abi.so.1"):
            assert os.path.exists(os.path.join(moved, f)), f"{f} is not installed"
        exe = os.path.join(tmp, "hello_f90_inst")
        sh([os.path.join(moved, "bin/mpifort"), "-o", exe, os.path.join(HERE, "hello.f90")], cwd=tmp)
        assert "libmpifort_abi" in sh(["ldd", exe]) and moved in sh(["ldd", exe])
        run_job(os.path.join(moved, "bin"), exe, 2, r"Fortran90 rank (\d+) of 2")


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
