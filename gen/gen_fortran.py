#!/usr/bin/env python3
"""Generates Courier's Fortran interfaces from the same inputs as mpi.h (apidata.py): the MPI 5.0
standard ABI's constants and the MPI Forum's API data.

Outputs (into OUTDIR):
  mpif.h            the constants and function types of `include 'mpif.h'`; valid in fixed
                    and free form (statements from column 7, no line past column 72);
  mpi_constants.f90 module mpi_constants: the same constants, for the modules;
  mpi.f90           module mpi (`use mpi`): the constants and an explicit interface per
                    procedure, from the standard's own Fortran declarations; choice buffers
                    are TYPE(*), DIMENSION(*) with gfortran's NO_ARG_CHECK (any type, any rank);
  fortran_bindings.c  the Fortran-callable entry points (pmpi_send_ with a weak mpi_send_),
                    each converting its arguments and calling the C procedure of libmpi_abi.

The Fortran layer sits on libmpi_abi's public API only: a Fortran handle is the C handle's
MPI_<Obj>_toint, a Fortran status is the C status (both eight INTEGERs, the ABI's layout), and the
sentinels (MPI_BOTTOM, MPI_STATUS_IGNORE, ...) are COMMON blocks whose addresses the bindings
recognise. Procedures that need more than argument conversion (callbacks with Fortran calling
conventions) are written by hand in src/fortran/ and listed in HANDWRITTEN.

usage: gen_fortran.py OUTDIR
"""

import os
import sys
import textwrap

import apidata
import fortran_f08
import pympistandard as std

# C handle type -> (suffix of MPI_<Obj>_toint/_fromint, null handle)
HANDLES = {
    "MPI_Comm": ("Comm", "MPI_COMM_NULL"),
    "MPI_Datatype": ("Type", "MPI_DATATYPE_NULL"),
    "MPI_Op": ("Op", "MPI_OP_NULL"),
    "MPI_Group": ("Group", "MPI_GROUP_NULL"),
    "MPI_Info": ("Info", "MPI_INFO_NULL"),
    "MPI_Errhandler": ("Errhandler", "MPI_ERRHANDLER_NULL"),
    "MPI_Request": ("Request", "MPI_REQUEST_NULL"),
    "MPI_Message": ("Message", "MPI_MESSAGE_NULL"),
    "MPI_Win": ("Win", "MPI_WIN_NULL"),
    "MPI_File": ("File", "MPI_FILE_NULL"),
    "MPI_Session": ("Session", "MPI_SESSION_NULL"),
}

# Procedures written by hand in src/fortran/: most take Fortran procedures whose
# calling convention differs from C's (arguments by reference, an ierror argument, INTEGER
# handles), so the C library must call a trampoline that holds the Fortran procedure.
HANDWRITTEN = {
    "MPI_Comm_create_keyval", "MPI_Type_create_keyval", "MPI_Win_create_keyval",
    "MPI_Keyval_create", "MPI_Grequest_start",
    "MPI_Info_get_string",  # Fortran's buflen counts no terminating null (src/fortran/strings.c)
}

# The sentinels Fortran passes by address: name -> (COMMON block, Fortran declaration, C value).
SENTINELS = {
    "MPI_BOTTOM": ("mpi_fortran_bottom", "INTEGER MPI_BOTTOM", "MPI_BOTTOM"),
    "MPI_IN_PLACE": ("mpi_fortran_in_place", "INTEGER MPI_IN_PLACE", "MPI_IN_PLACE"),
    "MPI_BUFFER_AUTOMATIC": ("mpi_fortran_buffer_automatic", "INTEGER MPI_BUFFER_AUTOMATIC",
                             "MPI_BUFFER_AUTOMATIC"),
    "MPI_STATUS_IGNORE": ("mpi_fortran_status_ignore",
                          "INTEGER MPI_STATUS_IGNORE(MPI_STATUS_SIZE)", "MPI_STATUS_IGNORE"),
    "MPI_STATUSES_IGNORE": ("mpi_fortran_statuses_ignore",
                            "INTEGER MPI_STATUSES_IGNORE(MPI_STATUS_SIZE,1)", "MPI_STATUSES_IGNORE"),
    "MPI_ERRCODES_IGNORE": ("mpi_fortran_errcodes_ignore", "INTEGER MPI_ERRCODES_IGNORE(1)",
                            "MPI_ERRCODES_IGNORE"),
    "MPI_UNWEIGHTED": ("mpi_fortran_unweighted", "INTEGER MPI_UNWEIGHTED(1)", "MPI_UNWEIGHTED"),
    "MPI_WEIGHTS_EMPTY": ("mpi_fortran_weights_empty", "INTEGER MPI_WEIGHTS_EMPTY(1)",
                          "MPI_WEIGHTS_EMPTY"),
    "MPI_ARGV_NULL": ("mpi_fortran_argv_null", "CHARACTER*1 MPI_ARGV_NULL(1)", "MPI_ARGV_NULL"),
    "MPI_ARGVS_NULL": ("mpi_fortran_argvs_null", "CHARACTER*1 MPI_ARGVS_NULL(1,1)",
                       "MPI_ARGVS_NULL"),
}

# Predefined callbacks: Fortran names them as EXTERNAL procedures (src/fortran/callbacks.c
# defines them); the bindings pass the C constant when they see one.
PREDEFINED_FNS = ["MPI_COMM_NULL_COPY_FN", "MPI_COMM_DUP_FN", "MPI_COMM_NULL_DELETE_FN",
                  "MPI_TYPE_NULL_COPY_FN", "MPI_TYPE_DUP_FN", "MPI_TYPE_NULL_DELETE_FN",
                  "MPI_WIN_NULL_COPY_FN", "MPI_WIN_DUP_FN", "MPI_WIN_NULL_DELETE_FN",
                  "MPI_NULL_COPY_FN", "MPI_DUP_FN", "MPI_NULL_DELETE_FN",
                  "MPI_CONVERSION_FN_NULL"]

# Constants C has and Fortran does not (the tool interface is C only; MPI_F_* describe the
# Fortran status to C).
C_ONLY_CATEGORIES = {"FORTRAN_STATUS_ARRAY_SIZE_AND_INDEX_C"}
KIND_PARAMS = [("MPI_ADDRESS_KIND", 8), ("MPI_OFFSET_KIND", 8), ("MPI_COUNT_KIND", 8),
               ("MPI_INTEGER_KIND", 4)]


def fortran_constants(abi):
    """[(name, Fortran type, value)] of every constant Fortran has, in the ABI's order."""
    out = [(n, "INTEGER", v) for n, v in KIND_PARAMS]
    for n, v in abi["fortran_only_constants_from_appendixA"].items():
        if v["fortran_type"] == "INTEGER" and isinstance(v["value"], int):
            out.append((n, "INTEGER", v["value"]))
    out.append(("MPI_SUBARRAYS_SUPPORTED", "LOGICAL", ".FALSE."))
    out.append(("MPI_ASYNC_PROTECTS_NONBLOCKING", "LOGICAL", ".FALSE."))
    for n, c in abi["constants"].items():
        if c.get("std_category") in C_ONLY_CATEGORIES or n.startswith("MPI_T_"):
            continue
        if c["kind"] in ("int", "handle") and not c["c_type"].startswith("MPI_T_"):
            out.append((n, "INTEGER", c["value"]))
        elif c["kind"] == "offset":
            out.append((n, "INTEGER(KIND=MPI_OFFSET_KIND)", c["value"]))
    return out


# ---------------------------------------------------------------- mpif.h and the modules
# mpif.h declares the timer functions (as MPICH's does); MPI_AINT_ADD and MPI_AINT_DIFF the
# program declares itself (MPICH's tests do, and a second declaration is an error).
FUNCTION_RESULTS = [("DOUBLE PRECISION", ["MPI_WTIME", "MPI_WTICK", "PMPI_WTIME", "PMPI_WTICK"])]


def fixed_lines(stmt_head, names):
    """`stmt_head a, b, c` split into lines that end before column 73."""
    out, cur = [], []
    for n in names:
        if cur and len("      " + stmt_head + " " + ", ".join(cur + [n])) > 72:
            out.append("      " + stmt_head + " " + ", ".join(cur))
            cur = []
        cur.append(n)
    if cur:
        out.append("      " + stmt_head + " " + ", ".join(cur))
    return out


def constant_decls(consts):
    lines = []
    for name, ftype, value in consts:
        lines.append(f"      {ftype} {name}")
        lines.append(f"      PARAMETER ({name}={value})")
    for name, (block, decl, _) in SENTINELS.items():
        lines.append(f"      {decl}")
        lines.append(f"      COMMON /{block}/ {name}")
    return lines


def procedure_decls(with_functions):
    lines = fixed_lines("EXTERNAL", PREDEFINED_FNS)
    if with_functions:
        for ftype, names in FUNCTION_RESULTS:
            lines += fixed_lines(ftype, names)
            lines += fixed_lines("EXTERNAL", names)
    return lines


def emit_mpif_h(consts):
    head = ["! mpif.h: Courier MPI's Fortran header (include 'mpif.h'), MPI 5.0.",
            "! Generated by gen/gen_fortran.py from the standard ABI's constants.",
            "! Do not edit. Valid as fixed and as free source form."]
    for line in constant_decls(consts) + procedure_decls(True):
        assert len(line) <= 72, line
    return "\n".join(head + constant_decls(consts) + procedure_decls(True)) + "\n"


def emit_constants_module(consts):
    body = "\n".join(constant_decls(consts) + procedure_decls(False))
    return ("! mpi_constants.f90: the constants of MPI 5.0 for Courier's Fortran modules.\n"
            "! Generated by gen/gen_fortran.py. Do not edit.\n"
            "      MODULE mpi_constants\n      IMPLICIT NONE\n      SAVE\n" + body +
            "\n      END MODULE mpi_constants\n")


def interface_body(proc):
    """The standard's Fortran declaration of one procedure as an interface body."""
    text = str(proc.express.f90).replace("\t", "")
    lines = [l.strip() for l in text.split("\n") if l.strip()]
    head, decls = lines[0], lines[1:]
    out = []
    if not head.startswith("MPI_"):  # a function: TYPE NAME(ARGS)
        ftype = head[:head.index(" MPI_")]
        call = head[head.index(" MPI_") + 1:]
        out.append(f"FUNCTION {call}")
        out.append("IMPORT")
        out.append(f"{ftype} {call.split('(')[0]}")
        end = "END FUNCTION"
    else:
        out.append(f"SUBROUTINE {head}")
        out.append("IMPORT")
        end = "END SUBROUTINE"
    for d in decls:
        if d.startswith("<type>"):
            for name in d[len("<type>"):].split(","):
                name = name.strip().split("(")[0]
                out.append(f"!GCC$ ATTRIBUTES NO_ARG_CHECK :: {name}")
                out.append(f"TYPE(*), DIMENSION(*) :: {name}")
        else:
            out.append(d)
    out.append(end)
    return out


def wrap_free(line, indent):
    """A free-form line continued with & before column 100."""
    out = []
    while len(indent + line) > 100:
        cut = line.rfind(",", 0, 100 - len(indent) - 2)
        out.append(indent + line[:cut + 1] + " &")
        line = line[cut + 1:].lstrip()
        indent = indent + "    " if len(out) == 1 else indent
    out.append(indent + line)
    return out


def has_choice(proc):
    return any(q["kind"] in ("BUFFER", "C_BUFFER2") for q in proc._parseset["parameters"])


# Module mpi's own procedures: MPI_SIZEOF exists only in the modules (the size in bytes of one
# element of any intrinsic variable, scalar or array).
MODULE_PROCEDURES = """\
  subroutine MPI_SIZEOF(x, size, ierror)
    class(*), intent(in) :: x(..)
    integer, intent(out) :: size, ierror
    size = int(storage_size(x) / 8)
    ierror = MPI_SUCCESS
  end subroutine MPI_SIZEOF
"""


def emit_mpi_module(procs):
    """Explicit interfaces for the procedures without choice arguments, as MPICH's module has:
    a choice argument accepts any type and rank only through compiler extensions, and programs
    written against MPICH pass arrays and scalars to them interchangeably (an interface would
    reject the programs, and a program that defines its own MPI_SEND for profiling would clash
    with one)."""
    out = ["! mpi.f90: module mpi (use mpi) of Courier MPI: the constants, an explicit interface",
           "! for every procedure without choice arguments (from the MPI Forum's Fortran",
           "! declarations), and MPI_SIZEOF.",
           "! Generated by gen/gen_fortran.py. Do not edit.",
           "module mpi",
           "  use mpi_constants",
           "  implicit none",
           "  interface"]
    for name, proc in procs:
        if has_choice(proc):
            continue
        body = interface_body(proc)
        for l in body:
            out += wrap_free(l, "    ")
        if name in ("MPI_Wtime", "MPI_Wtick"):  # the profiling twins of the functions
            for l in body:
                out += wrap_free(l.replace("MPI_W", "PMPI_W"), "    ")
    out.append("  end interface")
    out.append("contains")
    out.append(MODULE_PROCEDURES.rstrip())
    out.append("end module mpi")
    return "\n".join(out) + "\n"


# ---------------------------------------------------------------- the C entry points
def fortran_params(func, proc):
    """The Fortran arguments of a procedure in order: (name, C Param or None for ierror)."""
    cparams = {p.name: p for p in func.params}
    out, has_ierror = [], False
    for q in proc._parseset["parameters"]:
        if "f90_parameter" in q["suppress"]:
            continue
        if q["kind"] == "ERROR_CODE" and "c_parameter" in q["suppress"]:
            has_ierror = True
            continue
        if q["kind"] == "VARARGS" or (q["large_only"] and not func.large):
            continue
        out.append((q["name"], cparams[q["name"]], q))
    return out, has_ierror


class Conv:
    """How one Fortran argument becomes one C argument."""

    def __init__(self):
        self.fdecl = None   # the Fortran-side C parameter declaration
        self.pre = []       # statements before the call
        self.arg = None     # the C argument expression
        self.post = []      # statements after the call
        self.strlen = None  # the hidden length parameter of a CHARACTER argument


def length_expr(func, p, q, names):
    """C expression for the number of elements of a handle array."""
    n = q["length"]
    if n in names:
        return f"*{n}"
    if func.base.startswith(("MPI_Neighbor_", "MPI_Ineighbor_")):
        which = "1" if p.name.startswith("send") else "0"
        return f"cr_f_neighbor_count(MPI_Comm_fromint(*comm), {which})"
    if func.base.endswith(("alltoallw", "alltoallw_init")) or "alltoallw" in func.base.lower():
        return "cr_f_group_size(MPI_Comm_fromint(*comm))"
    sys.exit(f"gen_fortran: {func.name}: no length for {p.name} ({n!r})")


def convert(func, p, q, names):
    c = Conv()
    n = p.name
    base = p.base_type
    if base in HANDLES:
        obj, null = HANDLES[base]
        if p.pointer == 0 and not p.array:
            c.fdecl = f"cr_fint *{n}"
            c.arg = f"MPI_{obj}_fromint(*{n})"
            return c
        c.fdecl = f"cr_fint *{n}"
        if p.array:
            ln = length_expr(func, p, q, names)
            c.pre.append(f"int {n}_n = cr_f_len({ln});")
            c.pre.append(f"{base} {n}_small[CR_F_SMALL] = {{0}}, *{n}_c = {n}_n > CR_F_SMALL ? "
                         f"malloc(sizeof *{n}_c * (size_t){n}_n) : {n}_small;")
            c.pre.append(f"if (!{n}_c) {{ cr_f_nomem(ierror_p); return; }}")
            if p.direction in ("in", "inout"):
                c.pre.append(f"for (int i = 0; i < {n}_n; i++) {n}_c[i] = MPI_{obj}_fromint({n}[i]);")
            c.arg = f"{n}_c"
            if p.direction in ("out", "inout"):
                c.post.append(f"for (int i = 0; i < {n}_n; i++) {n}[i] = MPI_{obj}_toint({n}_c[i]);")
            c.post.append(f"if ({n}_c != {n}_small) free({n}_c);")
            return c
        init = f"MPI_{obj}_fromint(*{n})" if p.direction != "out" else null
        c.pre.append(f"{base} {n}_c = {init};")
        c.arg = f"&{n}_c"
        c.post.append(f"*{n} = MPI_{obj}_toint({n}_c);")
        return c
    if base == "MPI_Status":
        c.fdecl = f"MPI_Status *{n}"
        c.arg = f"cr_f_statuses({n})" if p.array else f"cr_f_status({n})"
        return c
    if base in ("int", "MPI_Aint", "MPI_Count", "MPI_Offset"):
        ftype = "cr_fint" if base == "int" else base
        c.fdecl = f"{ftype} *{n}"
        if p.pointer == 0 and not p.array:
            c.arg = f"*{n}"
            return c
        c.arg = n
        if p.array == "[][3]":  # MPI_Group_range_incl's ranges(3, n): the same ints in C's order
            c.arg = f"(int (*)[3]){n}"
        if base == "int" and p.kind in ("ERROR_CODE",) and p.array:
            c.arg = f"cr_f_ints({n})"
        if base == "int" and p.kind == "WEIGHT":
            c.arg = f"cr_f_ints({n})"
        if n == "index" and func.param("array_of_requests"):
            c.post.append(f"if (*ierror_p == MPI_SUCCESS && *{n} >= 0) (*{n})++;")
        if n == "array_of_indices":
            c.post.append("if (*ierror_p == MPI_SUCCESS && *outcount != MPI_UNDEFINED) "
                          "for (int i = 0; i < *outcount; i++) array_of_indices[i]++;")
        return c
    if base in ("char", "char*") and p.kind in ("STRING", "") and p.direction == "in" and \
            (p.ctype == "char*" or p.array == "[]") and p.kind != "STRING_ARRAY":
        c.fdecl = f"const char *{n}"
        c.strlen = f"{n}_len"
        strip = "1" if func.base.startswith("MPI_Info_") else "0"
        c.pre.append(f"char *{n}_c = cr_f_string_in({n}, {n}_len, {strip});")
        c.pre.append(f"if (!{n}_c) {{ cr_f_nomem(ierror_p); return; }}")
        c.arg = f"{n}_c"
        c.post.append(f"free({n}_c);")
        return c
    if p.ctype == "char*" and p.direction == "out":
        c.fdecl = f"char *{n}"
        c.strlen = f"{n}_len"
        extra = "0"
        for ln in ("valuelen", "buflen", "pset_len"):
            if ln in names:
                extra = f"(size_t)(*{ln} > 0 ? *{ln} : 0)"
        c.pre.append(f"char *{n}_c = calloc({n}_len + CR_F_MAX_STRING + {extra} + 1, 1);")
        c.pre.append(f"if (!{n}_c) {{ cr_f_nomem(ierror_p); return; }}")
        c.arg = f"{n}_c"
        # Only a value that exists is written: a call whose flag says "no such key" leaves the
        # Fortran variable as it was (MPICH's tests check this).
        cond = " && *flag" if "flag" in names else ""
        c.post.append(f"if (*ierror_p == MPI_SUCCESS{cond}) cr_f_string_out({n}, {n}_len, {n}_c);")
        c.post.append(f"free({n}_c);")
        return c
    if p.kind in ("STRING_ARRAY", "STRING_2DARRAY") or p.ctype in ("char**", "char***"):
        # Fortran's arrays of CHARACTER (MPI_Comm_spawn's argv): only the null sentinels.
        c.fdecl = f"const char *{n}"
        c.strlen = f"{n}_len"
        c.arg = "NULL"
        return c
    if p.kind in ("ATTRIBUTE_VAL", "ATTRIBUTE_VAL_10"):
        ftype = "MPI_Aint" if p.kind == "ATTRIBUTE_VAL" else "cr_fint"
        c.fdecl = f"{ftype} *{n}"
        if p.direction == "in" and p.kind == "ATTRIBUTE_VAL":
            # C sees a pointer to the value (MPI 5.0 19.3.7): a cell (src/fortran/attrs.c)
            c.pre.append(f"void *{n}_c = cr_f_attr_cell(*{n});")
            c.pre.append(f"if (!{n}_c) {{ cr_f_nomem(ierror_p); return; }}")
            c.arg = f"{n}_c"
            c.post.append(f"if (*ierror_p != MPI_SUCCESS) cr_f_attr_free({n}_c);")
        elif p.direction == "in":  # MPI_ATTR_PUT (MPI-1): the INTEGER as the pointer's value
            c.arg = f"(void *)(intptr_t)*{n}"
        else:
            obj = {"Comm": "comm", "Type": "type", "Win": "win"}.get(func.base.split("_")[1], "comm")
            c.pre.append(f"void *{n}_c = NULL;")
            c.arg = f"&{n}_c"
            keyval = [x for x in names if "keyval" in x][0]
            c.post.append(f"if (*ierror_p == MPI_SUCCESS && *flag) *{n} = ({ftype})"
                          f"cr_f_attr_value(CR_F_ATTR_{obj.upper()}, *{keyval}, {n}_c);")
        return c
    if base == "void":
        c.fdecl = f"void *{n}"
        c.arg = f"cr_f_buf({n})" if p.kind == "BUFFER" else n
        return c
    if p.ctype.endswith(("_function*", "_function_c*")):
        # Fortran procedures the C library may call as they are (MPI_Op_create's user function
        # and the error handlers): see src/fortran/fortran.h on why the arguments agree.
        c.fdecl = f"void (*{n})(void)"
        c.arg = f"({p.ctype})cr_f_function({n})"
        return c
    sys.exit(f"gen_fortran: {func.name}: cannot convert {p.name} ({p.ctype}{p.array}, {p.kind})")


def ts_triples(func):
    """{buffer: (count, datatype)} when every choice buffer of `func` is followed by its count
    and datatype (MPI_Send's buf, count, datatype): mpi_f08 then passes each buffer as an
    assumed-rank array (TYPE(*), DIMENSION(..)), and a non-contiguous section becomes a datatype.
    None when some buffer has no such pair (the v-variants' arrays of counts, MPI_Reduce_local)."""
    ps = [p for p in func.params if p.kind != "VARARGS"]
    out = {}
    for i, p in enumerate(ps):
        if p.base_type != "void" or p.kind != "BUFFER":
            continue
        if i + 2 >= len(ps) or ps[i + 1].array or ps[i + 2].array or ps[i + 2].kind != "DATATYPE" \
                or ps[i + 1].base_type not in ("int", "MPI_Count") or ps[i + 1].pointer:
            return None
        out[p.name] = (ps[i + 1].name, ps[i + 2].name)
    return out or None


def ts_convert(convs, params, triples, large):
    """Rewrites the conversions of each buffer, count and datatype of a TS entry point."""
    byname = {p.name: c for (_, p, _), c in zip(params, convs)}
    for buf, (count, dtype) in triples.items():
        c = byname[buf]
        c.fdecl = f"CFI_cdesc_t *{buf}"
        c.pre = [f"void *{buf}_c; MPI_Count {buf}_n; MPI_Datatype {buf}_t, {buf}_tmp = MPI_DATATYPE_NULL;",
                 f"if (cr_f_section({buf}, *{count}, MPI_Type_fromint(*{dtype}), &{buf}_c, &{buf}_n, "
                 f"&{buf}_t, &{buf}_tmp, ierror_p)) return;"]
        c.arg = f"{buf}_c"
        c.post = [f"if ({buf}_tmp != MPI_DATATYPE_NULL) MPI_Type_free(&{buf}_tmp);"]
        byname[count].arg = f"{buf}_n" if large else f"(int){buf}_n"
        byname[dtype].arg = f"{buf}_t"


def emit_binding(func, proc, ts=False):
    """The entry point pmpi_x_ (weak alias mpi_x_); with ts, pmpi_x_ts, which mpi_f08 calls
    through BIND(C) with each choice buffer as a C descriptor (ISO_Fortran_binding.h)."""
    params, has_ierror = fortran_params(func, proc)
    names = [n for n, _, _ in params]
    convs = [convert(func, p, q, names) for _, p, q in params]
    if ts:
        ts_convert(convs, params, ts_triples(func), func.large)
    fargs = [c.fdecl for c in convs]
    if has_ierror:
        fargs.append("cr_fint *ierror")
    fargs += [f"size_t {c.strlen}" for c in convs if c.strlen]
    lname = func.name.lower()
    ret = func.ret
    void_ret = func.returns_error
    rtype = "void" if void_ret else ret
    symbol = f"p{lname}_ts" if ts else f"p{lname}_"
    out = [f"{rtype} {symbol}({', '.join(fargs) or 'void'})", "{"]
    if void_ret:
        out.append("    cr_fint ierror_unused, *ierror_p = " +
                   ("ierror;" if has_ierror else "&ierror_unused;"))
        out.append("    (void)ierror_unused;")
    for c in convs:
        out += ["    " + s for s in c.pre]
    cargs = []
    fparams = {p.name: c for (_, p, _), c in zip(params, convs)}
    for p in func.params:
        if p.kind == "VARARGS":
            continue
        if p.name in fparams:
            cargs.append(fparams[p.name].arg)
        else:  # C-only arguments (MPI_Init's argc and argv)
            cargs.append("NULL" if p.pointer or p.array else "0")
    call = f"{func.name}({', '.join(cargs)})"
    if void_ret:
        out.append(f"    *ierror_p = {call};")
        for c in reversed(convs):
            out += ["    " + s for s in c.post]
    else:
        out.append(f"    return {call};")
    out.append("}")
    if not ts:
        out.append(f"extern __typeof__(p{lname}_) {lname}_ __attribute__((weak, alias(\"p{lname}_\")));")
    return "\n".join(out)


def emit_bindings_c(pairs):
    out = ["/* fortran_bindings.c: the Fortran entry points of Courier MPI (pmpi_x_ and its weak",
           " * alias mpi_x_), one per procedure. Generated by gen/gen_fortran.py: do not edit. */",
           '#include "fortran.h"', ""]
    for func, proc in pairs:
        out.append(emit_binding(func, proc))
        out.append("")
        if proc._parseset["attributes"]["f08_expressible"] and ts_triples(func) and \
                fortran_f08.ts_capable(proc.express.embiggen.f08 if func.large else proc.express.f08):
            out.append(emit_binding(func, proc, ts=True))
            out.append("")
    return "\n".join(out)


# ---------------------------------------------------------------- module mpi_f08 (fortran_f08.py)
def f08_callbacks():
    """The callbacks' Fortran 2008 abstract interfaces (the tool interface's are C only)."""
    out = []
    for name, cb in sorted(std.CALLBACKS.items()):
        if name.startswith("mpi_t_"):
            continue
        for expr in (cb.express.f08, getattr(cb.express.embiggen, "f08", None) if cb.express.embiggen else None):
            if expr is not None:
                out.append(expr)
    return out


def f08_predefined():
    """(predefined callback, its abstract interface) for those mpi_f08 has."""
    out = []
    for fn in PREDEFINED_FNS:
        obj = fn.split("_")[1]
        if obj in ("COMM", "TYPE", "WIN"):
            iface = f"MPI_{obj.capitalize()}_{'delete' if 'DELETE' in fn else 'copy'}_attr_function"
        elif fn == "MPI_CONVERSION_FN_NULL":
            iface = "MPI_Datarep_conversion_function"
        else:
            continue  # MPI_NULL_COPY_FN and friends: MPI-1 forms, not in mpi_f08
        out.append((fn, iface))
    return out


def wrap_f08(line, indent):
    return "\n".join(wrap_free(line, indent))


# ---------------------------------------------------------------- every procedure, called
# Programs that call every procedure through each interface (never run: compiling and linking
# them proves every interface declares every procedure and libmpifort_abi has every entry point).
# Each call sits in a subroutine whose dummy arguments are declared as the standard declares the
# procedure's, so the call is checked against the interface exactly.
def calls_f90(procs, header):
    out = ["! Generated by gen/gen_fortran.py: calls every procedure (" + header + ").",
           "program calls", "end program calls"]
    for k, (name, proc) in enumerate(procs):
        body = interface_body(proc)
        head = body[0]
        args = head[head.index("(") + 1:head.rindex(")")]
        decls = [l for l in body[1:-1] if l != "IMPORT" and not l.startswith("!GCC$")]
        decls = [l.replace("TYPE(*), DIMENSION(*) ::", "INTEGER") for l in decls]
        fname = head.split()[1].split("(")[0]
        out += wrap_free(f"subroutine t{k}({args})" if args else f"subroutine t{k}()", "")
        # USE comes before IMPLICIT NONE, INCLUDE 'mpif.h' (declarations) after it
        out += (["  " + header, "  implicit none"] if header.startswith("use")
                else ["  implicit none", "  " + header])
        if head.startswith("FUNCTION"):
            ftype = decls[0].rsplit(" ", 1)[0]
            decls = decls[1:]
            out += ["  " + ftype + " :: r"] + [l for d in decls for l in wrap_free(d, "  ")]
            if not header.startswith("use") and fname not in ("MPI_WTIME", "MPI_WTICK"):
                out.append(f"  {ftype} {fname}")  # of the functions, mpif.h declares the timers
            out.append(f"  r = {fname}({args})")
        else:
            out += [l for d in decls for l in wrap_free(d, "  ")]
            out += wrap_free(f"call {fname}({args})", "  ")
        out.append(f"end subroutine t{k}")
    return "\n".join(out) + "\n"


def calls_f08(f08_procs):
    out = ["! Generated by gen/gen_fortran.py: calls every procedure and large-count form of mpi_f08.",
           "program calls", "end program calls"]
    k = 0
    for proc, big in f08_procs:
        for expr in ([proc.express.f08] + ([big] if big is not None else [])):
            ftype, name, args, uses, decls = fortran_f08.parse(expr)
            types = fortran_f08.arg_types(decls)
            if expr is big and fortran_f08.signature(big) == fortran_f08.signature(proc.express.f08) \
                    and name == proc._parseset["name"]:
                name += "_c"
            out += wrap_free(f"subroutine t{k}({', '.join(args)})", "")
            out += ["  " + u for u in uses]
            out += ["  use mpi_f08", "  implicit none"]
            for a in args:
                base, attrs, decl = types[a]
                if base == "TYPE(*)":
                    out.append(f"  integer :: {a}(*)")
                else:
                    out += wrap_free(", ".join([base] + attrs) + f" :: {decl}", "  ")
            if ftype:
                out += [f"  {ftype} :: r", f"  r = {name}({', '.join(args)})"]
            else:
                out += wrap_free(f"call {name}({', '.join(args)})", "  ")
            out.append(f"end subroutine t{k}")
            k += 1
    return "\n".join(out) + "\n"


# ---------------------------------------------------------------- the constants' check
# Programs that print every Fortran constant as Fortran sees it (through mpif.h and through
# module mpi) and as C sees it (mpi.h; a handle through MPI_<Obj>_toint): a test compares them.
C_TWINS = {"MPI_STATUS_SIZE": "MPI_F_STATUS_SIZE", "MPI_SOURCE": "MPI_F_SOURCE + 1",
           "MPI_TAG": "MPI_F_TAG + 1", "MPI_ERROR": "MPI_F_ERROR + 1",
           "MPI_ADDRESS_KIND": "(int)sizeof(MPI_Aint)", "MPI_OFFSET_KIND": "(int)sizeof(MPI_Offset)",
           "MPI_COUNT_KIND": "(int)sizeof(MPI_Count)", "MPI_INTEGER_KIND": "(int)sizeof(int)"}


def emit_check_programs(abi, consts):
    ints = [(n, t) for n, t, _ in consts if t.startswith("INTEGER")]
    fixed = ["! Generated by gen/gen_fortran.py: prints every constant of mpif.h.",
             "      PROGRAM CHECKF77", "      IMPLICIT NONE", "      INCLUDE 'mpif.h'"]
    free = ["! Generated by gen/gen_fortran.py: prints every constant of module mpi.",
            "program checkf90", "  use mpi", "  implicit none"]
    for n, _ in ints:
        fixed += [f"      WRITE(*,'(A,1X,I0)') '{n}',", f"     &  {n}"]
        free.append(f"  write(*,'(A,1X,I0)') '{n}', {n}")
    fixed.append("      END")
    free.append("end program checkf90")
    c = ["/* Generated by gen/gen_fortran.py: prints, as C sees them, the values Fortran must have. */",
         "#include <mpi.h>", "#include <stdio.h>", "#include <stddef.h>", "int main(void)", "{"]
    for n, _ in ints:
        expr = C_TWINS.get(n)
        if expr is None:
            ctype = abi["constants"][n]["c_type"]
            expr = f"MPI_{HANDLES[ctype][0]}_toint({n})" if ctype in HANDLES else f"(long long){n}"
        c.append(f'    printf("%s %lld\\n", "{n}", (long long)({expr}));')
    c += ["    return 0;", "}"]
    return "\n".join(fixed) + "\n", "\n".join(free) + "\n", "\n".join(c) + "\n"


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    outdir = sys.argv[1]
    os.makedirs(outdir, exist_ok=True)
    abi = apidata.load_abi()
    funcs = apidata.load_functions(abi)
    std.use_api_version(1)
    pairs, procs, f08_procs = [], [], []
    for name, func in funcs.items():
        proc = std.PROCEDURES.get(func.base.lower())
        if proc is None or not proc._parseset["attributes"]["f90_expressible"]:
            continue
        attrs = proc._parseset["attributes"]
        if func.large:
            # the large-count forms exist in Fortran only in mpi_f08
            if attrs["f08_expressible"] and proc.has_embiggenment():
                pairs.append((func, proc))
            continue
        procs.append((name, proc))
        if name not in HANDWRITTEN:
            pairs.append((func, proc))
        if attrs["f08_expressible"]:
            big = proc.express.embiggen.f08 if proc.has_embiggenment() and func.has_twin else None
            f08_procs.append((proc, big))
    # The procedures only Fortran has (src/fortran/fortran_only.c): MPI_F_SYNC_REG in every
    # interface, the status conversions in mpi_f08 (they name TYPE(MPI_Status)).
    procs.append(("MPI_F_sync_reg", std.PROCEDURES["mpi_f_sync_reg"]))
    for n in ("mpi_f_sync_reg", "mpi_status_f082f", "mpi_status_f2f08"):
        f08_procs.append((std.PROCEDURES[n], None))
    procs.sort(key=lambda p: p[0])
    f08_procs.sort(key=lambda p: p[0]._parseset["name"])
    consts = fortran_constants(abi)
    check_f, check_f90, check_c = emit_check_programs(abi, consts)
    files = {
        "calls_mpif.f90": calls_f90(procs, "include 'mpif.h'"),
        "calls_mpi.f90": calls_f90(procs, "use mpi"),
        "calls_mpi_f08.f90": calls_f08(f08_procs),
        "check_constants.f": check_f,
        "check_constants.f90": check_f90,
        "check_constants.c": check_c,
        "mpif.h": emit_mpif_h(consts),
        "mpi_constants.f90": emit_constants_module(consts),
        "mpi.f90": emit_mpi_module(procs),

        "fortran_bindings.c": emit_bindings_c(pairs),
    }
    files.update(fortran_f08.emit_files(abi, consts, f08_procs, SENTINELS, f08_predefined(),
                                        f08_callbacks(), wrap_f08))
    for fn, text in files.items():
        path = os.path.join(outdir, fn)
        old = open(path).read() if os.path.exists(path) else None
        if old != text:
            with open(path, "w") as f:
                f.write(text)


if __name__ == "__main__":
    main()
