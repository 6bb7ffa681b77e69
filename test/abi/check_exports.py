#!/usr/bin/env python3
"""Checks the exported symbols of libmpi_abi.so.1 against the standard ABI: every MPI_ function
of the ABI and its PMPI_ twin is exported, nothing but MPI_/PMPI_/MPIX_ symbols is, and the
SONAME is libmpi_abi.so.1.

usage: check_exports.py LIBRARY ABI_JSON
"""
import json
import re
import subprocess
import sys


def main():
    lib, abi_json = sys.argv[1], sys.argv[2]
    functions = json.load(open(abi_json))["functions"]
    nm = subprocess.run(["nm", "-D", "--defined-only", lib], capture_output=True, text=True, check=True).stdout
    exported = {line.split()[-1].split("@")[0] for line in nm.splitlines() if line.strip()}
    fails = []
    for fn in functions:
        for sym in (fn, "P" + fn):
            if sym not in exported:
                fails.append(f"not exported: {sym}")
    for sym in sorted(exported):
        if not re.match(r"P?MPIX?_", sym):
            fails.append(f"exported but not an MPI symbol: {sym}")
    dyn = subprocess.run(["readelf", "-d", lib], capture_output=True, text=True, check=True).stdout
    m = re.search(r"\(SONAME\)\s+Library soname: \[(.*)\]", dyn)
    if not m or m.group(1) != "libmpi_abi.so.1":
        fails.append(f"SONAME is {m.group(1) if m else 'missing'}, not libmpi_abi.so.1")
    for f in fails:
        print("FAIL", f)
    print(f"{len(functions)} ABI functions, {len(exported)} exported symbols, {len(fails)} problems")
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
