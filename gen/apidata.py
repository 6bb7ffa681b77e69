"""Loads the two inputs every Courier generator reads, and joins them.

Inputs:
  * gen/abi/mpi-abi-5.0.json: the MPI 5.0 standard ABI facts (constant values and C types,
    the status layout, the list of exported functions);
  * the MPI Forum's API data (PyPI package `pympistandard`): every procedure, its parameters,
    their kinds and directions, and the large-count `_c` forms.

The ABI function list is authoritative for *which* C procedures exist (it excludes the Fortran
handle conversions that the standard ABI replaces with MPI_<Obj>_toint/_fromint); the Forum's
data is authoritative for *how* each is declared.
"""

import json
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ABI_JSON = os.path.join(HERE, "abi", "mpi-abi-5.0.json")
PYMPISTANDARD_VERSION = "0.2.0"

try:
    import pympistandard as std
except ImportError:  # pragma: no cover - reported to the user, not a code path
    sys.exit(
        "gen: the MPI Forum's API data is missing: run\n"
        f"    python3 -m pip install pympistandard=={PYMPISTANDARD_VERSION}\n"
        "(`make` does this by itself into build/pydeps)"
    )

# Procedures whose ABI declaration differs from the Forum's current data. The standard's errata
# (and the ABI stub header every ABI library is checked against) give MPI_Psend_init and
# MPI_Precv_init an `int count` with a `_c` twin taking `MPI_Count`; pympistandard 0.2.0 still
# has a single form with `MPI_Count`. We follow the ABI: that is what binaries are built against.
POLY_OVERRIDES = {
    "mpi_psend_init": {"count": "POLYXFER_NUM_ELEM_NNI"},
    "mpi_precv_init": {"count": "POLYXFER_NUM_ELEM_NNI"},
}


# Parameters the Forum's data renders wrongly in C (pympistandard 0.2.0 loses the pointer of
# MPI_Info_create_env's argv): (procedure, parameter) -> (C type, array suffix).
DECL_OVERRIDES = {
    ("mpi_info_create_env", "argv"): ("char*", "[]"),
}


class Param:
    """One C parameter of one C procedure, with the Forum's kind and direction."""

    def __init__(self, name, ctype, array, const, kind, direction, large, optional):
        self.name = name
        self.ctype = ctype          # e.g. "MPI_Comm*", "void*", "int"
        self.array = array          # "", "[]" or "[][3]"
        self.const = const
        self.kind = kind            # Forum kind, e.g. COMMUNICATOR, POLYXFER_NUM_ELEM_NNI
        self.direction = direction  # in / out / inout
        self.large = large          # True when this is the MPI_Count/MPI_Aint form of a POLY kind
        self.optional = optional

    @property
    def is_poly(self):
        return self.kind.startswith("POLY")

    @property
    def base_type(self):
        return self.ctype.rstrip("*")

    @property
    def pointer(self):
        return len(self.ctype) - len(self.ctype.rstrip("*"))

    def decl(self):
        """The parameter as it appears in a prototype."""
        if self.kind == "VARARGS":
            return "..."
        base = ("const " if self.const else "") + self.base_type
        return f"{base} {'*' * self.pointer}{self.name}{self.array}"


class Func:
    """One C entry point: MPI_X or its large-count twin MPI_X_c."""

    def __init__(self, name, ret, params, large, base, returns_error=True):
        self.name = name      # "MPI_Send_c"
        self.ret = ret        # "int", "double", "MPI_Comm", ...
        self.returns_error = returns_error  # the int it returns is an MPI error code
        self.params = params
        self.large = large    # this is the _c form
        self.base = base      # "MPI_Send" for both forms
        self.has_twin = False  # set when both forms exist

    def proto(self, prefix="MPI_"):
        name = prefix + self.name[len("MPI_"):]
        args = ", ".join(p.decl() for p in self.params) or "void"
        return f"{self.ret} {name}({args})"

    def param(self, name):
        for p in self.params:
            if p.name == name:
                return p
        return None


def _clean_type(t):
    return re.sub(r"\s+\*", "*", t.strip())


def _params_from(expr, parseset, large):
    out = []
    overrides = POLY_OVERRIDES.get(parseset["name"].lower(), {})
    for q in expr.parameters:
        ps = q._parseset
        kind = overrides.get(ps["name"], ps["kind"])
        if kind == "VARARGS":
            out.append(Param("...", "...", "", False, kind, "in", False, False))
            continue
        ctype = _clean_type(q.type)
        array = q.array
        if ps["name"] in overrides:
            ctype = "MPI_Count" if large else "int"
        fix = DECL_OVERRIDES.get((parseset["name"].lower(), ps["name"]))
        if fix:
            ctype, array = fix
        out.append(Param(ps["name"], ctype, array, bool(q.constant), kind,
                         ps["param_direction"], large and kind.startswith("POLY"),
                         ps["optional"]))
    return out


def load_abi():
    with open(ABI_JSON) as f:
        return json.load(f)


def load_functions(abi=None):
    """Returns {name: Func} for exactly the C procedures of the standard ABI."""
    abi = abi or load_abi()
    std.use_api_version(1)
    procs = {}
    for p in std.PROCEDURES.values():
        ps = p._parseset
        if not ps["attributes"]["c_expressible"]:
            continue
        base = ps["name"]
        iso = p.express.iso_c
        poly = p.has_embiggenment() or base.lower() in POLY_OVERRIDES
        rerr = ps["return_kind"] == "ERROR_CODE"
        procs[base] = Func(base, _clean_type(iso.return_type),
                           _params_from(iso, ps, False), False, base, rerr)
        if poly:
            emb = p.express.embiggen.iso_c if p.has_embiggenment() else iso
            procs[base + "_c"] = Func(base + "_c", _clean_type(emb.return_type),
                                      _params_from(emb, ps, True), True, base, rerr)
            procs[base].has_twin = procs[base + "_c"].has_twin = True
    wanted = abi["functions"]
    missing = sorted(set(wanted) - set(procs))
    if missing:
        sys.exit(f"gen: ABI functions without Forum data: {missing}")
    funcs = {n: procs[n] for n in sorted(wanted)}
    for n, f in funcs.items():
        if f.ret != wanted[n]["return_type"]:
            sys.exit(f"gen: {n}: Forum returns {f.ret}, ABI says {wanted[n]['return_type']}")
    return funcs


def load_callbacks():
    """Returns a list of (name, typedef text) for the callback function types."""
    std.use_api_version(1)
    out = []
    for c in std.CALLBACKS.values():
        for expr in (c.express.iso_c, c.express.embiggen.iso_c):
            if expr is None:
                continue
            text = str(expr).replace("\\ldots", "...")
            m = re.match(r"typedef (\w+) (\w+)\((.*)\)$", text)
            ret, name, args = m.groups()
            args = re.sub(r"(\w)\* ", r"\1 *", args)
            out.append((name, f"typedef {ret} ({name})({args});"))
    return sorted(out)
