#!/usr/bin/env python3
"""Generates the C entry points of libmpi_abi: one PMPI_X function (with its weak MPI_X alias)
per procedure of the standard ABI, from the Forum's API data and the override files in
gen/overrides/*.toml.

For a procedure listed in an override file, the entry point
  - checks that MPI is initialized (unless the procedure may be called at any time);
  - validates arguments from their kinds: handles first (turned into object pointers), then
    ranks, tags and counts, then buffer + count + datatype as one unit, then output pointers;
  - converts the int form to the MPI_Count form, so one internal implementation serves both;
  - calls `cr_mpi_<name>` (the implementation, declared in the generated cr_impl.h);
  - raises any error through the error handler of the object the call is about.
A procedure not listed returns MPI_ERR_UNSUPPORTED_OPERATION through the error handler, naming
itself: it never pretends to work.

usage: gen_bindings.py OUTDIR
"""

import os
import sys
import tomllib

import apidata

HERE = os.path.dirname(os.path.abspath(__file__))
NCHUNKS = 6

# Handle kinds turned into object pointers before the implementation is called:
# kind -> (C type of the object, checker, handle C type)
HANDLE_IN = {
    "COMMUNICATOR": ("cr_comm", "cr_check_comm"),
    "DATATYPE": ("cr_dtype", "cr_check_dtype"),
    "OPERATION": ("cr_op", "cr_check_op"),
    "GROUP": ("cr_group", "cr_check_group"),
    "INFO": ("cr_info", "cr_check_info"),
    "ERRHANDLER": ("cr_errhandler", "cr_check_errhandler"),
    "SESSION": ("cr_session", "cr_check_session"),
    "WINDOW": ("cr_win", "cr_check_win"),
    "FILE": ("cr_file", "cr_check_file"),
}
# Handle kinds a quick entry (override key `quick`) can resolve with no call: kind -> the inline
# peek of binding.h that gives the object of a valid handle, or NULL for anything else.
QUICK_PEEK = {
    "COMMUNICATOR": "cr_peek_comm",
    "DATATYPE": "cr_peek_dtype",
    "WINDOW": "cr_peek_win",
}
# Kinds whose objects carry an error handler, in the order a call's errors prefer them.
# A file's errors go to the file (not its communicator): the standard's rule for I/O.
ERROBJ_KINDS = ["FILE", "COMMUNICATOR", "WINDOW", "SESSION"]
# Calls about no open file raise on MPI_FILE_NULL's handler, the default for files (MPI-4.1 14.7).
DEFAULT_FILE_ERRORS = {"MPI_File_open", "MPI_File_delete"}
COUNT_KINDS = {"POLYXFER_NUM_ELEM_NNI", "XFER_NUM_ELEM_NNI", "POLYDTYPE_NUM_ELEM_NNI"}
TAG_NAMES = {"tag", "sendtag", "recvtag"}


def load_overrides():
    table = {}
    d = os.path.join(HERE, "overrides")
    for fn in sorted(os.listdir(d)):
        if not fn.endswith(".toml"):
            continue
        with open(os.path.join(d, fn), "rb") as f:
            data = tomllib.load(f)
        for name, opts in data.items():
            if name in table:
                sys.exit(f"gen: {name} appears in two override files")
            opts["_file"] = fn
            table[name] = opts
    return table


# Procedures whose override says `separate = true`: their two forms differ in more than types
# (MPI_Type_get_envelope_c has a num_large_counts argument the int form lacks).
SEPARATE = set()


def separate_forms(func):
    """Procedures taking a function whose type differs between the int and MPI_Count forms
    (MPI_Op_create takes MPI_User_function or MPI_User_function_c), or whose forms take
    different arguments, need one implementation per form: the binding cannot turn one into the
    other."""
    return func.base in SEPARATE or any(p.kind == "POLYFUNCTION" for p in func.params)


def impl_name(func, opts):
    name = opts.get("impl", "cr_mpi_" + func.base[len("MPI_"):].lower())
    return name + "_c" if func.large and separate_forms(func) else name


def twin_of(funcs, f):
    if not f.has_twin:
        return f
    return funcs[f.base + "_c"]


def is_handle_in(p, opts):
    """A handle argument the binding turns into its object (unless the override keeps it raw)."""
    return (p.kind in HANDLE_IN and p.pointer == 0 and not p.array and p.direction == "in"
            and p.name not in opts.get("nocheck", []))


def impl_params(funcs, f, opts):
    """The implementation's parameters: (C declaration, how the binding passes it)."""
    big = f if separate_forms(f) else twin_of(funcs, f)
    # The int form, to tell which arrays differ between the forms (the _c form passes its own
    # MPI_Count arrays through the same cr_cvec as the int form's int arrays).
    small = funcs.get(f.base, f) if f.large and not separate_forms(f) else f
    out = []
    for p, q, r in zip(f.params, big.params, small.params):
        if p.kind == "VARARGS":
            continue
        if is_handle_in(p, opts):
            t = HANDLE_IN[p.kind][0]
            out.append((f"{t} *{p.name}", f"{p.name}_obj"))
        elif p.array and r.ctype != q.ctype:
            vec = "cr_cvec" if p.const else "cr_cvec_mut"
            wide = int(p.base_type in ("MPI_Count", "MPI_Aint", "MPI_Offset"))  # 64-bit elements
            out.append((f"{vec} {p.name}", f"{vec}_of({p.name}, {wide})"))
        elif p.ctype == q.ctype:
            out.append((q.decl(), p.name))
        elif p.pointer:
            out.append((f"{q.ctype} {q.name}".replace("* ", " *"), f"&{p.name}_l" if not f.large else p.name))
        else:
            out.append((f"{q.ctype} {q.name}", p.name if f.large else f"({q.ctype}){p.name}"))
    return out


def impl_proto(funcs, f, opts):
    args = ", ".join(d for d, _ in impl_params(funcs, f, opts)) or "void"
    return f"{f.ret} {impl_name(f, opts)}({args})"


def comm_param(f, opts):
    for p in f.params:
        if p.kind == "COMMUNICATOR" and is_handle_in(p, opts):
            return p
    return None


def errobj_expr(f):
    """C expression for the object whose error handler this call's errors go to. It looks the
    handle up again (only on the error path), so it holds even when validation failed early."""
    if f.base in DEFAULT_FILE_ERRORS:
        return "cr_errobj_of_file((uintptr_t)MPI_FILE_NULL)"
    for kind in ERROBJ_KINDS:
        for p in f.params:
            if p.kind != kind or p.array or p.pointer > 1:
                continue
            if p.pointer == 1:  # MPI_Comm_free(&comm), MPI_Win_free(&win): the object before the call
                if kind == "COMMUNICATOR":
                    return f"({p.name} ? cr_errobj_of_comm(*{p.name}) : NULL)"
                return f"({p.name} ? cr_errobj_of_{kind.lower()}((uintptr_t)*{p.name}) : NULL)"
            if kind == "COMMUNICATOR":
                return f"cr_errobj_of_comm({p.name})"
            return f"cr_errobj_of_{kind.lower()}((uintptr_t){p.name})"
    return "NULL"


def gen_unsupported(f):
    lines = [f"CR_API {f.proto('PMPI_')}", "{"]
    for p in f.params:
        if p.kind != "VARARGS":
            lines.append(f"    (void){p.name};")
    if not f.returns_error:
        sys.exit(f"gen: {f.name} returns a {f.ret} value and must be implemented (add it to an override file)")
    if f.base.startswith("MPI_T_"):
        lines.append("    return MPI_T_ERR_NOT_SUPPORTED; /* MPI_T calls never invoke error handlers */")
    else:
        lines.append("    bool cr_cs = cr_cs_enter();")
        lines.append(f'    int cr_rc = cr_binding_unsupported("{f.name}", {errobj_expr(f)});')
        lines.append("    cr_cs_exit(cr_cs);")
        lines.append("    return cr_rc;")
    lines.append("}")
    return lines


def gen_checks(funcs, f, opts):
    """Argument validation, in the order the standard's error classes suggest."""
    checks = []
    nocheck = set(opts.get("nocheck", []))
    nullable = set(opts.get("nullable", []))
    is_tool = f.base.startswith("MPI_T_")
    comm = comm_param(f, opts)
    has_source = f.param("source") is not None
    has_buffer = any(p.kind == "BUFFER" for p in f.params)
    resolved = set()
    for p in f.params:
        if p.name in nocheck or p.kind == "VARARGS":
            continue
        if is_handle_in(p, opts):
            t, checker = HANDLE_IN[p.kind]
            flags = []
            if p.kind == "INFO" and not f.base.startswith("MPI_Info_"):
                flags.append("CR_CHECK_NULL_OK")
            if p.kind == "DATATYPE" and has_buffer:
                flags.append("CR_CHECK_COMMITTED")
            if p.name in nullable:
                flags.append("CR_CHECK_NULL_OK")
            fl = " | ".join(flags) or "0"
            checks.append(f"    {t} *{p.name}_obj = NULL;")
            checks.append(f'    if ((cr_rc = {checker}({p.name}, "{p.name}", {fl}, &{p.name}_obj)))')
            checks.append("        goto fail;")
            resolved.add(p.name)
    for p in f.params:
        if p.name in nocheck or p.kind == "VARARGS" or p.pointer or p.array:
            continue
        if comm and p.kind == "RANK" and p.name in ("dest", "source", "root"):
            mode = {"dest": "CR_RANK_DEST", "source": "CR_RANK_SOURCE", "root": "CR_RANK_ROOT"}[p.name]
            checks.append(f'    if ((cr_rc = cr_check_rank({comm.name}_obj, {p.name}, "{p.name}", {mode})))')
            checks.append("        goto fail;")
        elif p.kind == "TAG" and p.name in TAG_NAMES:
            any_ok = has_source and p.name != "sendtag"
            checks.append(f'    if ((cr_rc = cr_check_tag({p.name}, "{p.name}", {int(any_ok)})))')
            checks.append("        goto fail;")
        elif p.kind in COUNT_KINDS or p.kind == "ARRAY_LENGTH_NNI":
            cls = "MPI_ERR_COUNT" if p.kind in COUNT_KINDS else "MPI_ERR_ARG"
            checks.append(f"    if (CR_UNLIKELY({p.name} < 0)) {{")
            checks.append(f'        cr_rc = cr_err({cls}, "invalid count {p.name}=%lld: must not be negative", (long long){p.name});')
            checks.append("        goto fail;")
            checks.append("    }")
    # buffer + count + datatype, as one unit
    for i, p in enumerate(f.params[:-2]):
        c, d = f.params[i + 1], f.params[i + 2]
        if p.kind == "BUFFER" and c.kind in COUNT_KINDS and not c.array and d.kind == "DATATYPE" \
                and d.name in resolved and p.name not in nocheck:
            checks.append(f'    if ((cr_rc = cr_check_buffer({p.name}, {c.name}, {d.name}_obj, "{p.name}")))')
            checks.append("        goto fail;")
    if not is_tool:
        for p in f.params:
            if p.name in nocheck or p.name in nullable or p.kind == "VARARGS":
                continue
            if p.kind == "STATUS" and p.direction == "in" and not p.array:
                checks.append(f"    if (CR_UNLIKELY({p.name} == NULL)) {{")
                checks.append(f'        cr_rc = cr_err(MPI_ERR_ARG, "{p.name} is NULL (MPI_STATUS_IGNORE), but this call reads it");')
                checks.append("        goto fail;")
                checks.append("    }")
                continue
            if p.direction in ("out", "inout") and p.pointer >= 1 and not p.array \
                    and p.kind not in ("STATUS", "BUFFER", "C_BUFFER", "C_BUFFER2", "C_BUFFER3",
                                       "ARGUMENT_COUNT", "ARGUMENT_LIST"):
                checks.append(f"    if (CR_UNLIKELY({p.name} == NULL)) {{")
                checks.append(f'        cr_rc = cr_err(MPI_ERR_ARG, "output argument {p.name} is NULL");')
                checks.append("        goto fail;")
                checks.append("    }")
    return checks, resolved


# The calls that may turn MPI_THREAD_MULTIPLE on: they leave the section as they entered it
# (a local remembers). Every other call leaves it if the level is on, reading it again (it
# cannot change during the call), which keeps a register free on every call's path.
LEVEL_SETTERS = {"MPI_Init", "MPI_Init_thread", "MPI_Session_init", "MPI_T_init_thread"}


def returning(expr, ctype, lock, computed=True):
    """`return expr;`, leaving the critical section first if the entry point entered it (after
    evaluating expr, when it is a call that must run inside); `lock` names what says whether it
    did (see LEVEL_SETTERS), None for a call that never enters."""
    if not lock:
        return [f"    return {expr};"]
    leave = f"    cr_cs_exit({lock});"
    if not computed:
        return [leave, f"    return {expr};"]
    return [f"    {ctype} cr_ret = {expr};", leave, "    return cr_ret;"]


def full_name(f):
    return "cr_full_" + f.name[len("MPI_"):]


def gen_quick(funcs, f, opts, full):
    """The entry point of a procedure with a quick path (override key `quick`): when threads are
    not at MPI_THREAD_MULTIPLE (or at any level, with `quick_threads`), MPI is running and every
    handle resolves inline, it hands the
    objects to the implementation's quick function, which completes the common case and returns
    true, or returns false having done nothing; anything else goes to the full entry point
    (`full`, every check and the error path), by a tail call. The quick part makes no call, so
    the registers and stack frame that the checks and the error path need (values kept across
    their calls) stay on the full path."""
    if f.base in LEVEL_SETTERS or opts.get("nolock") or opts.get("anytime") or not f.returns_error:
        sys.exit(f"gen: {f.base}: `quick` needs an error-returning call that enters the section and needs MPI running")
    nocheck = set(opts.get("nocheck", []))
    has_buffer = any(p.kind == "BUFFER" for p in f.params)
    args = ", ".join(a for _, a in impl_params(funcs, f, opts))
    if "_l" in args or "cr_cvec" in args:
        sys.exit(f"gen: {f.base}: `quick` passes arguments as they come (no narrowed outputs, no count arrays)")
    lines = [f"CR_API {f.proto('PMPI_')}", "{"]
    # One test after another, each going to the full entry point at once when it fails. A quick
    # function that is safe outside the critical section (`quick_threads`) runs at
    # MPI_THREAD_MULTIPLE too, with no section: it locks what it touches itself.
    if opts.get("quick_threads"):
        lines.append("    if (CR_UNLIKELY(!cr_mpi_running()))")
    else:
        lines.append("    if (CR_UNLIKELY(cr_thread_multiple || !cr_mpi_running()))")
    lines.append("        goto full;")
    for p in f.params:
        if p.name in nocheck or p.kind == "VARARGS" or not is_handle_in(p, opts):
            continue
        peek = QUICK_PEEK.get(p.kind)
        if not peek:
            sys.exit(f"gen: {f.base}: `quick` cannot resolve a {p.kind} handle inline ({p.name})")
        t = HANDLE_IN[p.kind][0]
        extra = ", CR_CHECK_COMMITTED" if p.kind == "DATATYPE" and has_buffer else ", 0" if p.kind == "DATATYPE" else ""
        lines.append(f"    {t} *{p.name}_obj = {peek}({p.name}{extra});")
        lines.append(f"    if (CR_UNLIKELY(!{p.name}_obj))")
        lines.append("        goto full;")
    lines.append(f"    if (CR_LIKELY({opts['quick']}({args})))")
    lines.append("        return MPI_SUCCESS;")
    lines.append("full:")
    lines.append(f"    return {full}({', '.join(p.name for p in f.params)});")
    lines.append("}")
    return lines


def gen_implemented(funcs, f, opts):
    if opts.get("quick"):  # the full entry point, then the quick one in front of it
        head = f"static __attribute__((noinline)) {f.proto('cr_full_')}"
        return gen_full(funcs, f, opts, head) + [""] + gen_quick(funcs, f, opts, full_name(f))
    return gen_full(funcs, f, opts, f"CR_API {f.proto('PMPI_')}")


def gen_full(funcs, f, opts, head):
    lines = [head, "{"]
    lines.append(f'    static const char cr_fname[] = "{f.name}";')
    lines.append("    int cr_rc;")
    big = f if separate_forms(f) else twin_of(funcs, f)
    # Scalar outputs whose int form is narrower than the implementation's MPI_Count: the
    # implementation writes a local, the binding narrows it after success.
    narrowed = [(p, q) for p, q in zip(f.params, big.params)
                if p.kind != "VARARGS" and p.ctype != q.ctype and p.pointer and not p.array
                and not f.large]
    for p, q in narrowed:
        lines.append(f"    {q.base_type} {p.name}_l = 0;")
    # The critical section of MPI_THREAD_MULTIPLE (core/thread.h), around the checks too (they
    # read the handle tables); a test of one global when threads are off.
    lock = None if opts.get("nolock") else "cr_cs" if f.base in LEVEL_SETTERS else "cr_thread_multiple"
    if lock == "cr_cs":
        lines.append("    bool cr_cs = cr_cs_enter();")
    elif lock:
        lines.append("    cr_cs_enter();")
    if not opts.get("anytime"):
        lines.append("    if (CR_UNLIKELY(!cr_mpi_running())) {")
        lines.append("        cr_rc = cr_err_not_running();")
        lines.append("        goto fail;")
        lines.append("    }")
    checks, resolved = gen_checks(funcs, f, opts)
    lines.extend(checks)
    for p, q in narrowed:
        if p.direction == "inout":
            lines.append(f"    {p.name}_l = *{p.name};")
    args = ", ".join(a for _, a in impl_params(funcs, f, opts))
    call = f"{impl_name(f, opts)}({args})"
    if not f.returns_error:
        # Non-error-code returns (MPI_Wtime, MPI_Aint_add, MPI_*_fromint, ...) report their own
        # errors through the handler and return a neutral value.
        lines.extend(returning(call, f.ret, lock))
        if not any("goto fail" in ln for ln in lines):
            lines[3:4] = []  # no error path: drop `int err;`
            lines.append("}")
            return [ln for ln in lines if "static const char cr_fname" not in ln]
        lines.append("fail:")
        lines.append(f"    cr_err_raise({errobj_expr(f)}, cr_fname, cr_rc);")
        lines.extend(returning(f"({f.ret})0", f.ret, lock, computed=False))
        lines.append("}")
        return lines
    lines.append(f"    cr_rc = {call};")
    lines.append("    if (CR_UNLIKELY(cr_rc))")
    lines.append("        goto fail;")
    for p, q in narrowed:
        if p.base_type != "int":  # an MPI_Aint output of the int form: as wide as MPI_Count
            lines.append(f"    *{p.name} = ({p.base_type}){p.name}_l;")
            continue
        policy = opts.get("overflow", "error")
        lines.append(f"    if ({p.name}_l > INT32_MAX || {p.name}_l < INT32_MIN) {{")
        if policy == "undefined":
            lines.append(f"        *{p.name} = MPI_UNDEFINED;")
        else:
            lines.append(f'        cr_rc = cr_err(MPI_ERR_VALUE_TOO_LARGE, "{p.name} = %lld does not fit in an int: use {f.name}_c", (long long){p.name}_l);')
            lines.append("        goto fail;")
        lines.append("    } else {")
        lines.append(f"        *{p.name} = (int){p.name}_l;")
        lines.append("    }")
    lines.extend(returning("MPI_SUCCESS", "int", lock, computed=False))
    lines.append("fail:")
    if f.base.startswith("MPI_T_"):
        lines.append("    (void)cr_fname; /* MPI_T calls return their errors, they never invoke handlers */")
        lines.extend(returning("cr_rc", "int", lock, computed=False))
    else:
        lines.extend(returning(f"cr_err_raise(cr_err_target({errobj_expr(f)}), cr_fname, cr_rc)", "int", lock))
    lines.append("}")
    return lines


def gen_alias(f):
    return [f"extern __typeof__(PMPI_{f.name[4:]}) {f.name} __attribute__((weak, alias(\"PMPI_{f.name[4:]}\"), visibility(\"default\")));"]


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    outdir = sys.argv[1]
    os.makedirs(outdir, exist_ok=True)
    abi = apidata.load_abi()
    funcs = apidata.load_functions(abi)
    overrides = load_overrides()
    SEPARATE.update(name for name, opts in overrides.items() if opts.get("separate"))
    unknown = sorted(set(overrides) - set(f.base for f in funcs.values()))
    if unknown:
        sys.exit(f"gen: override entries for procedures the ABI does not have: {unknown}")

    header = ["/* cr_impl.h: generated by gen/gen_bindings.py. The implementation behind every",
              " * implemented MPI procedure: one function serves the int and MPI_Count forms. */",
              "#ifndef CR_IMPL_H", "#define CR_IMPL_H", "", '#include "core/types.h"', ""]
    seen = set()
    for f in funcs.values():
        opts = overrides.get(f.base)
        name = impl_name(f, opts) if opts is not None else None
        if opts is None or name in seen:
            continue
        seen.add(name)
        header.append(impl_proto(funcs, f, opts) + ";")
        if opts.get("quick"):
            args = ", ".join(d for d, _ in impl_params(funcs, f, opts))
            header.append(f"bool {opts['quick']}({args});")
    header += ["", "#endif", ""]
    write(os.path.join(outdir, "cr_impl.h"), "\n".join(header))

    names = list(funcs)
    per = (len(names) + NCHUNKS - 1) // NCHUNKS
    for chunk in range(NCHUNKS):
        body = ["/* Generated by gen/gen_bindings.py: MPI entry points. Do not edit. */",
                '#include "binding/binding.h"', ""]
        for n in names[chunk * per:(chunk + 1) * per]:
            f = funcs[n]
            opts = overrides.get(f.base)
            body += gen_implemented(funcs, f, opts) if opts is not None else gen_unsupported(f)
            body += gen_alias(f)
            body.append("")
        write(os.path.join(outdir, f"bindings_{chunk}.c"), "\n".join(body))

    # Names of predefined handles, for error messages.
    pn = ["/* Generated by gen/gen_bindings.py: names of predefined handles. */",
          '#include "binding/binding.h"', "",
          "const char *cr_handle_predef_name(uintptr_t h)", "{", "    switch (h) {"]
    seen_vals = {}
    for n, c in abi["constants"].items():
        if c["kind"] == "handle" and c["c_form"] != "macro: alias" and not c["c_type"].startswith("MPI_T_"):
            key = (c["value"])
            if key in seen_vals:
                continue
            seen_vals[key] = n
            pn.append(f'    case {c["value"]}: return "{n}";')
    pn += ["    default: return NULL;", "    }", "}", ""]
    write(os.path.join(outdir, "predef_names.c"), "\n".join(pn))

    impl_count = len({f.base for f in funcs.values() if f.base in overrides})
    base_count = len({f.base for f in funcs.values()})
    write(os.path.join(outdir, "binding_stats.h"),
          f"#define CR_BINDING_PROCEDURES {base_count}\n#define CR_BINDING_IMPLEMENTED {impl_count}\n"
          f"#define CR_BINDING_ENTRY_POINTS {len(funcs)}\n")


def write(path, text):
    """Writes only when the content changes, so the build does not recompile needlessly."""
    try:
        with open(path) as f:
            if f.read() == text:
                return
    except FileNotFoundError:
        pass
    with open(path, "w") as f:
        f.write(text)


if __name__ == "__main__":
    main()
