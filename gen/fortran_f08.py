"""Module mpi_f08 for gen_fortran.py: the handle types, TYPE(MPI_Status), the constants with
their types, the callbacks' abstract interfaces, and one specific procedure per procedure and
large-count form, all from the Forum's Fortran 2008 declarations.

Each specific procedure (MPI_Send_f08ts, MPI_Send_c_f08ts for the MPI_Count form, behind the
generic name MPI_Send; PMPI_Send_f08ts and so on behind PMPI_Send) is an external procedure, so
a profiling tool can define its own, and calls an entry point of libmpifort_abi, passing its
handles as they are: a TYPE(MPI_Comm) is one INTEGER in a BIND(C) type, so its address is that of the INTEGER `use mpi`
passes, and TYPE(MPI_Status) is the same eight INTEGERs. The optional ierror is set only when
present. Where every choice buffer comes with its count and datatype (ts_capable), buffers are
TYPE(*), DIMENSION(..) and the entry point is pmpi_send_ts, called through BIND(C) with C
descriptors: an array section with gaps becomes a datatype over the section itself, so
nonblocking calls on sections work. Elsewhere (the v-variants, MPI_Pack, ...) buffers are
TYPE(*), DIMENSION(*) with gfortran's NO_ARG_CHECK and the entry point is `use mpi`'s (pmpi_x_);
the specific name ends in _f08 instead of _f08ts. MPI_SUBARRAYS_SUPPORTED stays .FALSE. until
those take sections too.
"""

import re

PROC_CHUNKS = 4  # files the specific procedures are written to (src/fortran/CMakeLists.txt lists them)
HANDLE_TYPES = ["Comm", "Datatype", "Errhandler", "File", "Group", "Info", "Message", "Op",
                "Request", "Session", "Win"]
# C type of a predefined handle -> its Fortran 2008 type
F08_TYPE = {"MPI_Comm": "Comm", "MPI_Datatype": "Datatype", "MPI_Errhandler": "Errhandler",
            "MPI_File": "File", "MPI_Group": "Group", "MPI_Info": "Info", "MPI_Message": "Message",
            "MPI_Op": "Op", "MPI_Request": "Request", "MPI_Session": "Session", "MPI_Win": "Win"}


def split_top(text):
    """Splits at the commas outside parentheses: 'a, b(n, m)' -> ['a', 'b(n, m)']."""
    out, depth, cur = [], 0, ""
    for ch in text:
        if ch == "," and depth == 0:
            out.append(cur.strip())
            cur = ""
            continue
        depth += ch == "("
        depth -= ch == ")"
        cur += ch
    out.append(cur.strip())
    return out


def split_decl(line):
    """'TYPE(X), INTENT(IN) :: a, b(n)' -> ('TYPE(X)', ['INTENT(IN)'], ['a', 'b(n)'])."""
    attrs, names = line.split("::", 1)
    parts = split_top(attrs)
    return parts[0], parts[1:], split_top(names)


def parse(expr):
    """The head (function type or None, name, argument names) and the declaration lines."""
    lines = [l.strip() for l in str(expr).replace("\t", " ").split("\n") if l.strip()]
    head = lines[0]
    m = re.match(r"(?:(.*?)\s+)?(MPI_\w+)\((.*)\)$", head)
    ftype, name, args = m.groups()
    args = [a.strip() for a in args.split(",") if a.strip()]
    uses = [l for l in lines[1:] if l.startswith("USE")]
    decls = [l for l in lines[1:] if not l.startswith("USE")]
    return ftype, name, args, uses, decls


def arg_types(decls):
    """name -> (base type, attributes, declarator) for every dummy argument."""
    out = {}
    for d in decls:
        base, attrs, names = split_decl(d)
        for n in names:
            out[n.split("(")[0]] = (base, attrs, n)
    return out


def handle_type(base):
    m = re.match(r"TYPE\(MPI_(\w+)\)", base)
    return m.group(1) if m and m.group(1) in HANDLE_TYPES else None


INTEROPERABLE = re.compile(r"INTEGER(\(KIND=MPI_(ADDRESS|COUNT|OFFSET)_KIND\))?$|TYPE\(MPI_\w+\)$")


def ts_capable(expr):
    """Whether every choice buffer is followed by its count and datatype, and every other
    argument is interoperable with C: the procedure then takes its buffers as assumed-rank arrays
    (TYPE(*), DIMENSION(..)) through a BIND(C) entry point that gets C descriptors."""
    _, _, args, _, decls = parse(expr)
    types = arg_types(decls)
    found = False
    for i, a in enumerate(args):
        base = types[a][0]
        if base == "TYPE(*)":
            if i + 2 >= len(args) or not types[args[i + 1]][0].startswith("INTEGER") \
                    or types[args[i + 2]][0] != "TYPE(MPI_Datatype)" or "(" in types[args[i + 1]][2]:
                return False
            found = True
        elif not INTEROPERABLE.match(base):
            return False
    return found


def wrapper_decls(types, ts=False):
    """The module procedure's own declarations: the standard's; choice buffers are assumed-rank
    (ts) or type-less assumed-size."""
    out = []
    for n, (base, attrs, decl) in types.items():
        attrs = list(attrs)
        if base == "TYPE(*)" and ts:
            out.append(", ".join(["TYPE(*)"] + attrs) + f" :: {n}")
            continue
        if base == "TYPE(*)":
            attrs = [a for a in attrs if not a.startswith("DIMENSION")]
            out.append(f"!GCC$ ATTRIBUTES NO_ARG_CHECK :: {n}")
            out.append(", ".join(["TYPE(*)", "DIMENSION(*)"] + attrs) + f" :: {n}")
            continue
        if base.startswith("CHARACTER"):
            base = "CHARACTER(LEN=*)"
        out.append(", ".join([base] + attrs) + f" :: {decl}")
    return out


def c_entry_decls(types, ts=False):
    """The declarations of the same arguments as libmpifort_abi's entry point takes them."""
    out = []
    for n, (base, attrs, decl) in types.items():
        dims = "(*)" if "(" in decl else ""
        if base == "TYPE(*)" and ts:
            out.append(f"TYPE(*), DIMENSION(..) :: {n}")
        elif base == "TYPE(*)":
            out.append(f"!GCC$ ATTRIBUTES NO_ARG_CHECK :: {n}")
            out.append(f"TYPE(*), DIMENSION(*) :: {n}")
        elif base.startswith("PROCEDURE"):
            out.append(f"EXTERNAL :: {n}")
        elif handle_type(base):  # the same INTEGER: the types are BIND(C) wrappers of one
            out.append(f"{base} :: {n}{dims}")
        elif base.startswith("CHARACTER"):
            out.append(f"CHARACTER(LEN=*) :: {n}{dims}")
        else:
            out.append(f"{base} :: {n}{dims}")
    return out


def emit_procedure(expr, specific, c_symbol, wrap):
    """For one form of one procedure: (the entry point's interface, the external procedure
    `specific` and its profiling twin P`specific`, the interface body of each, the generic name,
    the specific name). A procedure whose buffers can be assumed-rank calls the BIND(C) entry
    point pmpi_x_ts and its specific name ends in ts (MPI_Send_f08ts), as the standard names it."""
    ftype, name, args, uses, decls = parse(expr)
    types = arg_types(decls)
    ts = ts_capable(expr)
    has_ierror = "ierror" in args
    entry = []
    kind = "FUNCTION" if ftype else "SUBROUTINE"
    if ts:
        specific += "ts"
        entry.append(f'{kind} {c_symbol}_TS({", ".join(args)}) BIND(C, NAME="{c_symbol.lower()}_ts")')
        c_symbol += "_TS"
    else:
        entry.append(f"{kind} {c_symbol}({', '.join(args)})")
    entry += uses
    entry.append("IMPORT")
    if ftype:
        entry.append(f"{ftype} :: {c_symbol}")
    entry += c_entry_decls(types, ts)
    entry.append(f"END {kind}")

    def head(proc_name):
        return [f"{kind} {proc_name}({', '.join(args)})" + (" RESULT(res)" if ftype else "")]

    spec = ([f"{ftype} :: res"] if ftype else []) + wrapper_decls(types, ts)
    call_args = ["ierror_c" if a == "ierror" else a for a in args]
    procs, bodies = [], []
    for proc_name in (specific, "P" + specific):
        body = head(proc_name) + list(uses) + ["USE mpi_f08_types", f"USE mpi_f08_entries, ONLY : {c_symbol}",
                                               "IMPLICIT NONE"]
        body += spec
        if ftype:
            body.append(f"res = {c_symbol}({', '.join(call_args)})")
        else:
            if has_ierror:
                body.append("INTEGER :: ierror_c")
            body.append(f"CALL {c_symbol}({', '.join(call_args)})")
            if has_ierror:
                body.append("IF (PRESENT(ierror)) ierror = ierror_c")
        body.append(f"END {kind} {proc_name}")
        procs += [wrap(l, "  " if i else "") for i, l in enumerate(body)]
        iface = head(proc_name) + list(uses) + ["IMPORT"] + spec + [f"END {kind} {proc_name}"]
        bodies.append([wrap(l, "      ") for l in iface])
    return [wrap(l, "    ") for l in entry], procs, bodies, name, specific


def emit_files(abi, consts, procs, sentinels, predefined, callbacks, wrap):
    """procs: [(Forum procedure, Fortran 2008 expression of its _c form or None)]. Returns
    {file: text} for the sources of mpi_f08:
      mpi_f08_types.f90    module mpi_f08_types: handle types, TYPE(MPI_Status), constants,
                           sentinels, the callbacks' abstract interfaces, ==, /=, MPI_Sizeof;
      mpi_f08_entries.f90  module mpi_f08_entries: the interfaces of libmpifort_abi's entry
                           points as the procedures below call them;
      mpi_f08_procs_N.f90  the specific procedures (MPI_Send_f08ts, MPI_Send_c_f08ts, ...) and
                           their profiling twins (PMPI_Send_f08ts, ...), external procedures as the
                           standard's profiling interface needs: a tool defines MPI_Send_f08ts
                           and calls PMPI_Send;
      mpi_f08.f90          module mpi_f08: mpi_f08_types, and the generic names MPI_X and PMPI_X
                           with the explicit interfaces of their specific procedures."""
    types_mod = ["! mpi_f08_types.f90: the types, constants and operators of mpi_f08 (module mpi_f08_types).",
                 "! Generated by gen/gen_fortran.py (gen/fortran_f08.py). Do not edit.",
                 "module mpi_f08_types",
                 "  use, intrinsic :: iso_c_binding, only : c_ptr",
                 "  implicit none",
                 "  private :: c_ptr"]
    spec = []
    for t in HANDLE_TYPES:
        spec += [f"  type, bind(c) :: MPI_{t}", "    integer :: MPI_VAL", f"  end type MPI_{t}"]
    spec += ["  type, bind(c) :: MPI_Status",
             "    integer :: MPI_SOURCE, MPI_TAG, MPI_ERROR",
             "    integer :: MPI_internal(5)",
             "  end type MPI_Status"]
    for n, ftype, value in consts:
        c = abi["constants"].get(n)
        if c and c["kind"] == "handle" and c["c_type"] in F08_TYPE:
            t = F08_TYPE[c["c_type"]]
            spec.append(f"  type(MPI_{t}), parameter :: {n} = MPI_{t}({value})")
        else:
            spec.append(f"  {ftype}, parameter :: {n} = {value}")
    for name, (block, decl, _) in sentinels.items():
        if name.startswith("MPI_STATUS"):
            decl = decl.replace("INTEGER MPI_STATUS_IGNORE(MPI_STATUS_SIZE)", "type(MPI_Status) MPI_STATUS_IGNORE")
            decl = decl.replace("INTEGER MPI_STATUSES_IGNORE(MPI_STATUS_SIZE,1)", "type(MPI_Status) MPI_STATUSES_IGNORE(1)")
        spec += [f"  {decl}", f"  common /{block}/ {name}"]
    spec.append("  abstract interface")
    for cb in callbacks:
        ftype, name, args, uses, decls = parse_callback(cb)
        spec.append(f"    subroutine {name}({', '.join(args)})")
        spec += [f"      {u}" for u in uses]
        spec.append("      import")
        spec += [wrap(d, "      ") for d in decls]
        spec.append(f"    end subroutine {name}")
    spec.append("  end interface")
    for fn, iface in predefined:
        spec.append(f"  procedure({iface}) :: {fn}")
    ops = []
    for op, sym in (("eq", "=="), ("ne", "/=")):
        fs = [f"mpi_{t.lower()}_{op}" for t in HANDLE_TYPES]
        spec += [f"  interface operator({sym})", wrap("module procedure " + ", ".join(fs), "    "),
                 "  end interface"]
        for t, f in zip(HANDLE_TYPES, fs):
            ops += [f"  elemental logical function {f}(a, b)",
                    f"    type(MPI_{t}), intent(in) :: a, b",
                    f"    {f} = a%MPI_VAL {sym} b%MPI_VAL",
                    f"  end function {f}"]
    spec += ["  interface MPI_Sizeof", "    module procedure MPI_Sizeof_f08", "  end interface"]
    ops += ["  subroutine MPI_Sizeof_f08(x, size, ierror)",
            "    class(*), intent(in) :: x(..)",
            "    integer, intent(out) :: size",
            "    integer, optional, intent(out) :: ierror",
            "    size = int(storage_size(x) / 8)",
            "    if (present(ierror)) ierror = MPI_SUCCESS",
            "  end subroutine MPI_Sizeof_f08"]
    types_text = types_mod + spec + ["contains"] + ops + ["end module mpi_f08_types"]

    entries, externals, generics = [], [], {}
    for proc, big_expr in procs:
        base = proc._parseset["name"]
        forms = [(proc.express.f08, f"{base}_f08", "P" + base.upper())]
        if big_expr is not None:
            forms.append((big_expr, f"{base}_c_f08", "P" + base.upper() + "_C"))
        for expr, specific, c_symbol in forms:
            e, x, bodies, gname, spec_name = emit_procedure(expr, specific, c_symbol, wrap)
            entries += e
            externals += x + [""]
            if expr is big_expr and signature(big_expr) == signature(proc.express.f08) \
                    and gname == parse(proc.express.f08)[1]:
                # MPI_COUNT_KIND is MPI_ADDRESS_KIND here: the two forms of MPI_Type_get_extent
                # cannot share a generic name, so the large one is only MPI_Type_get_extent_c.
                gname += "_c"
            generics.setdefault(gname, []).append((spec_name, bodies[0]))
            generics.setdefault("P" + gname, []).append(("P" + spec_name, bodies[1]))
    entries_text = ["! mpi_f08_entries.f90: libmpifort_abi's entry points as mpi_f08's procedures call them",
                    "! (module mpi_f08_entries). Generated by gen/gen_fortran.py (gen/fortran_f08.py).",
                    "module mpi_f08_entries", "  use mpi_f08_types", "  implicit none", "  interface"] \
        + entries + ["  end interface", "end module mpi_f08_entries"]
    # The procedures go to PROC_CHUNKS files, compiled in parallel (each procedure USEs the
    # modules, which costs more than the procedure itself); a file ends between procedures.
    chunks = [[] for _ in range(PROC_CHUNKS)]
    per = (len(externals) + PROC_CHUNKS - 1) // PROC_CHUNKS
    for k, line in enumerate(externals):
        chunks[min(k // per, PROC_CHUNKS - 1)].append(line)
    for i in range(PROC_CHUNKS - 1):
        while chunks[i] and chunks[i][-1] != "":
            chunks[i + 1].insert(0, chunks[i].pop())
    mod = ["! mpi_f08.f90: module mpi_f08 (use mpi_f08) of Courier MPI: the types and constants",
           "! (mpi_f08_types) and the generic names of every procedure and its profiling twin.",
           "! Generated by gen/gen_fortran.py (gen/fortran_f08.py). Do not edit.",
           "module mpi_f08", "  use mpi_f08_types", "  implicit none"]
    for g, specifics in generics.items():
        mod.append(f"  interface {g}")
        for _, body in specifics:
            mod += body
        mod.append("  end interface")
    mod.append("end module mpi_f08")
    out = {"mpi_f08_types.f90": "\n".join(types_text) + "\n",
           "mpi_f08_entries.f90": "\n".join(entries_text) + "\n",
           "mpi_f08.f90": "\n".join(mod) + "\n"}
    for i, chunk in enumerate(chunks):
        out[f"mpi_f08_procs_{i}.f90"] = "\n".join(
            [f"! mpi_f08_procs_{i}.f90: specific procedures of mpi_f08 and their profiling twins "
             f"({i + 1} of {PROC_CHUNKS}).", "! Generated by gen/gen_fortran.py (gen/fortran_f08.py). Do not edit."]
            + chunk) + "\n"
    return out


def signature(expr):
    """What tells two specific procedures apart: each argument's type, kind and rank (the
    address, count and offset kinds are all 8 bytes here)."""
    _, _, args, _, decls = parse(expr)
    types = arg_types(decls)
    out = []
    for a in args:
        base, _, decl = types[a]
        base = re.sub(r"KIND=MPI_(ADDRESS|COUNT|OFFSET)_KIND", "KIND=8", base)
        out.append((base, "(" in decl))
    return tuple(out)


def parse_callback(expr):
    text = str(expr).replace("ABSTRACT INTERFACE", "").strip()
    ftype, name, args, uses, decls = parse(text)
    return ftype, name, args, uses, decls
