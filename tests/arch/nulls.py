#!/usr/bin/env python3
"""A C program that calls every function of some public headers with NULL and zero arguments
(all of them at once), each in a child process.

usage: nulls.py INCLUDE_DIR HEADER...   (HEADER: "tensor.h", ...; the C text goes to stdout)

Each function `OQ_API oq_status f(...)` of the headers named is called twice: every argument
zero (a NULL pointer, 0, a zeroed struct) with an oq_err, and again with no oq_err (once, for
a function that takes none). Each `OQ_API void f(...)` (a *_free, a *_clear, a setter) is called
once so: NULL is a no-op there, as for free(). Each function that returns a value (a name, a
count, a getter's pointer, a struct) is called once so too, and only a crash is a problem
there: it has no oq_err, and its "nothing" (NULL, 0, -1, a zeroed struct) is its header's to
say. A noreturn function is left out.

All-zero arguments miss a function that checks its object only after using another argument
(a buffer of n > 0 bytes, an index, a name). So each function whose first pointer parameter (the
object: not a string, not an oq_err) is called once more with that object NULL and the others
real: non-NULL pointers to zeroed buffers of 64 KiB, "x" for a string, an array of "x" strings
for a string list, 64 for a buffer's size that follows its pointer, 2 for other integers, 1 for
an enum or a floating-point value, a zeroed struct passed by value, NULL for a callback, &err for
the oq_err. A status-returning or void one is judged as above; one returning a value must also
return its header's answer for a NULL object: EXPECT below where the header says more than the
rule (NULL for a pointer, 0 for an integer or an enum, NaN for a floating-point value). The
child runs in the current directory (strings "x" may be paths: run it in a scratch one) and
is stopped by SIGALRM after 30 s.

The program prints one line per problem and exits 1 when there is one:
  CRASH f (h.h): a signal killed the child (a NULL dereferenced, or UBSan aborting);
  CRASH f (h.h, NULL obj): the same, with the object `obj` NULL and the other arguments real;
  WRONG f (h.h, NULL obj): a value other than the header's answer for a NULL object (the
                   expected one quoted as a C expression of the result `ret` and the arguments);
  NOMSG f (h.h): a failing status with an empty message;
  NULLMSG f (h.h): a message that prints a NULL string as "(null)";
  BADNAME f (h.h): a message "... is NULL" that is not "f: ARGUMENT is NULL" with ARGUMENT
                   one of f's parameters as the header names them (or a part of one:
                   "argv[0]", "opts->roots"), the message quoted;
  UNNAMED f (h.h, NULL obj): a status-returning function refusing a NULL object with the other
                   arguments real in other words than "f: obj is NULL" (or "f: ARG is NULL" of
                   a NULL callback beside it): "no runtime given" said neither which function
                   nor which argument.
A status of OQ_OK is not a problem: zero may be a valid argument (an empty list), and nor is
another message: a zero refused for its value.
"""
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from exports import strip, top_level_statements  # noqa: E402

DECL = re.compile(r"^OQ_API (.*?)\b(\w+)\s*\((.*)\)\s*$")
ENUM = re.compile(r"typedef\s+enum\b[^{;]*\{[^}]*\}\s*(\w+)\s*;")
INTS = {"size_t", "int", "unsigned", "unsigned int", "long", "long long", "int8_t", "int16_t", "int32_t",
        "int64_t", "uint8_t", "uint16_t", "uint32_t", "uint64_t", "ssize_t", "_Bool", "bool"}
FLOATS = {"double", "float"}
SIZE_NAMES = {"n", "bufn", "cap", "size", "len", "nbytes", "buflen"}

# What a function returning a value answers for a NULL object, as its header says, where that is
# not the rule (NULL, 0, NaN): a C expression of the result `ret` and the arguments by name.
EXPECT = {
    "oq_compare_result_str": "ret == buf && !buf[0]",
    "oq_compare_result_str_vs": "ret == buf && !buf[0]",
    "oq_compare_vacuous_str": "ret == buf && !buf[0]",
    "oq_proc_describe": "ret == buf && !buf[0]",
    "oq_refusal_str": "ret == buf && !buf[0]",
    "oq_shape_str": "ret == buf && !buf[0]",
    "oq_dims_str": "ret == buf && !strcmp(buf, \"[]\")",
    "oq_config_ep_options": "ret == n",
    "oq_csv_get": "ret && !ret[0]",
    "oq_csv_is_empty": "ret == 1",
    "oq_runtime_build_info": "ret && !ret[0]",
    "oq_bench_baseline_ort_differs": "ret && !ret[0]",
    "oq_rng_uniform_int": "ret == lo",
    "oq_rng_normal": "ret == 0",
    "oq_node_info_attr_int": "ret == def",
    "oq_tolerances_get": "ret.rtol == 0 && ret.atol == 0",
    "oq_session_input_rank": "ret == -1",
    "oq_model_precision_name": "ret && !strcmp(ret, \"fp32\")",
}
FN_PTR = re.compile(r"^(.*)\(\s*\*\s*(\w+)\s*\)(.*)$")
PARAM = re.compile(r"^(.*?)(\w+)\s*((?:\[[^\]]*\])*)$")


def split_params(text):
    """Top-level comma-separated parameters (commas inside a function pointer's list stay)."""
    parts, depth, cur = [], 0, ""
    for c in text:
        if c == "," and depth == 0:
            parts.append(cur.strip())
            cur = ""
            continue
        depth += (c == "(") - (c == ")")
        cur += c
    parts.append(cur.strip())
    return [p for p in parts if p and p != "void"]


def zero_arg(param, err):
    """The C expression of a zero argument for one parameter."""
    fp = FN_PTR.match(param)
    if fp:
        return "(%s(*)%s){0}" % (fp.group(1), fp.group(3))
    m = PARAM.match(param)
    if not m:
        raise SystemExit("nulls.py: cannot read parameter '%s'" % param)
    typ = m.group(1).strip() + (" *" if m.group(3) else "")
    if typ.replace(" ", "") == "oq_err*":
        return err
    return "(%s){0}" % typ


def base_type(param):
    """A parameter's type as written, an array parameter as its pointer; None for a callback."""
    if FN_PTR.match(param):
        return None
    m = PARAM.match(param)
    return " ".join((m.group(1).strip() + (" *" if m.group(3) else "")).split())


def is_string_type(typ):
    """char in any form: a string, a buffer, a list of strings (bytes, unsigned char, are data)."""
    return typ is not None and re.search(r"(?<!signed )\bchar\b", typ) is not None


def object_index(params):
    """The first pointer parameter when it is the object (not a string, not the oq_err), else None."""
    for i, p in enumerate(params):
        typ = base_type(p)
        if typ is None or "*" not in typ:
            continue
        if typ.replace(" ", "") == "oq_err*" or is_string_type(typ):
            return None
        return i
    return None


def real_decl(params, i, obj, enums, err):
    """The declaration of argument i for the call with the object NULL and the others real."""
    p = params[i]
    fp = FN_PTR.match(p)
    if fp:
        return "%s(*%s)%s = 0;" % (fp.group(1), fp.group(2), fp.group(3))
    name, typ = param_name(p), base_type(p)
    flat = typ.replace(" ", "")
    if flat == "oq_err*":
        val = err
    elif i == obj:
        val = "0"
    elif "*" in typ:
        stars = typ.count("*")
        if flat in ("constchar*", "charconst*"):
            val = '"x"'
        elif is_string_type(typ) and stars == 2:
            val = "(%s)strs" % typ  # a list of strings: 64 of "x", then NULL
        else:
            val = "(%s)zb[%d]" % (typ, i)
    elif typ in INTS or typ.replace("const ", "") in INTS:
        prev = base_type(params[i - 1]) if i else None
        val = "64" if name in SIZE_NAMES and prev and "*" in prev else "2"
    elif typ in FLOATS:
        val = "1.0"
    elif typ in enums:
        val = "(%s)1" % typ
    else:
        val = "(%s){0}" % typ  # a struct by value: zeroed
    return "%s %s = %s;" % (typ, name, val)


def expectation(fn, ret, enums):
    """The C condition on `ret` a NULL object must give (EXPECT, else the rule by type)."""
    if fn in EXPECT:
        return EXPECT[fn]
    if "*" in ret:
        return "ret == NULL"
    if ret in INTS or ret in enums:
        return "ret == 0"
    if ret in FLOATS:
        return "ret != ret"
    raise SystemExit("nulls.py: %s returns %s: say in EXPECT what it answers for a NULL object" % (fn, ret))


def param_name(param):
    fp = FN_PTR.match(param)
    return fp.group(2) if fp else PARAM.match(param).group(2)


def functions(include_dir, headers):
    for h in headers:
        text = open(os.path.join(include_dir, "ortqual", h), encoding="utf-8").read()
        for stmt in top_level_statements(strip(text)):
            m = DECL.match(stmt.split("__attribute__")[0].strip())
            if m and "..." not in m.group(3) and "noreturn" not in stmt:
                ret = " ".join(m.group(1).split())
                kind = ret if ret in ("oq_status", "void") else "value"
                yield h, kind, ret, m.group(2), split_params(m.group(3))


def enum_types(include_dir):
    """Every enum typedef of the public headers (an enum argument gets a value, not a struct's)."""
    d = os.path.join(include_dir, "ortqual")
    names = set()
    for h in os.listdir(d):
        if h.endswith(".h"):
            names.update(ENUM.findall(strip(open(os.path.join(d, h), encoding="utf-8").read())))
    return names


def object_call(h, kind, ret, fn, params, obj, enums):
    """The C lines of one call with the object NULL and the other arguments real, in a child."""
    where = "%s, NULL %s" % (h, param_name(params[obj]))
    has_err = any(base_type(p) == "oq_err *" for p in params)
    err = "&oqe" if has_err else "NULL"
    decls = " ".join(real_decl(params, i, obj, enums, err) for i in range(len(params)))
    args = ", ".join(param_name(p) for p in params)
    clash = {"ret", "pst", "pnames", "oqe", "zb", "strs"} & {param_name(p) for p in params}
    if clash:
        raise SystemExit("nulls.py: %s: a parameter named %s: rename the probe's own" % (fn, clash.pop()))
    lines = ["    fflush(stdout);",
             "    { pid_t p = fork(); if (p == 0) { oq_err oqe; memset(&oqe, 0, sizeof oqe); (void)oqe; alarm(30);",
             "        %s" % decls]
    if kind == "oq_status":
        names = "".join('"%s", ' % param_name(p) for p in params)
        lines += ["        static const char *const pnames[] = {%sNULL};" % names,
                  "        oq_status pst = %s(%s);" % (fn, args),
                  "        int pj = judge(pst, %s, \"%s\", \"%s\", pnames);" % (err, fn, where),
                  "        _exit(pj ? pj : judge_object(pst, %s, \"%s\", \"%s\", \"%s\", pnames)); }"
                  % (err, fn, where, param_name(params[obj]))]
    elif kind == "void":
        lines += ["        %s(%s); _exit(0); }" % (fn, args)]
    else:
        cond = expectation(fn, ret, enums)
        lines += ["        %s ret = %s(%s);" % (ret, fn, args),
                  "        if (%s) _exit(0);" % cond,
                  "        printf(\"WRONG %s (%s): not its answer for a NULL object: %s\\n\"); fflush(stdout); _exit(4); }"
                  % (fn, where, cond.replace("\\", "\\\\").replace('"', '\\"'))]
    lines += ["      reap(p, \"%s\", \"%s\"); n++; objects++;%s }" % (fn, where, " values++;" if kind == "value" else "")]
    return lines


def main():
    if len(sys.argv) < 3:
        raise SystemExit(__doc__)
    include_dir, headers = sys.argv[1], sys.argv[2:]
    enums = enum_types(include_dir)
    out = ["#include <stdio.h>", "#include <string.h>", "#include <sys/wait.h>",
           "#include <unistd.h>"]
    out += ["#include <ortqual/%s>" % h for h in headers]
    out += [
        "static int bad;",
        "/* \"fn: ARG is NULL\", ARG one of params (NULL-terminated) or a part of one */",
        "static int names_arg(const char *msg, const char *fn, const char *const *params)",
        "{",
        "    size_t n = strlen(fn);",
        "    if (strncmp(msg, fn, n) || strncmp(msg + n, \": \", 2)) return 0;",
        "    const char *arg = msg + n + 2;",
        "    for (size_t i = 0; params[i]; i++) {",
        "        size_t k = strlen(params[i]);",
        "        if (strncmp(arg, params[i], k)) continue;",
        "        if (!strcmp(arg + k, \" is NULL\") || arg[k] == '[' || !strncmp(arg + k, \"->\", 2)) return 1;",
        "    }",
        "    return 0;",
        "}",
        "/* a child's status: 0 fine, 1 no message, 2 a \"(null)\" in it, 3 a NULL misnamed */",
        "static int judge(oq_status st, const oq_err *e, const char *fn, const char *h,",
        "                 const char *const *params)",
        "{",
        "    if (!e || st == OQ_OK) return 0;",
        "    if (!e->msg[0]) return 1;",
        "    if (strstr(e->msg, \"(null)\")) return 2;",
        "    if (!strstr(e->msg, \" is NULL\") || names_arg(e->msg, fn, params)) return 0;",
        "    printf(\"BADNAME %s (%s): '%s'\\n\", fn, h, e->msg);",
        "    fflush(stdout);",
        "    return 3;",
        "}",
        "/* with the object NULL and the rest real, a refusal says so, \"fn: OBJ is NULL\" (a NULL",
        "   callback beside it may be named instead: \"fn: ARG is NULL\"); 5 if not */",
        "static int judge_object(oq_status st, const oq_err *e, const char *fn, const char *h, const char *obj,",
        "                        const char *const *params)",
        "{",
        "    char want[256];",
        "    if (!e || st == OQ_OK || (strstr(e->msg, \" is NULL\") && names_arg(e->msg, fn, params))) return 0;",
        "    snprintf(want, sizeof want, \"%s: %s is NULL\", fn, obj);",
        "    printf(\"UNNAMED %s (%s): '%s', not '%s'\\n\", fn, h, e->msg, want);",
        "    fflush(stdout);",
        "    return 5;",
        "}",
        "static void reap(pid_t p, const char *fn, const char *h)",
        "{",
        "    int ws = 0;",
        "    if (p < 0 || waitpid(p, &ws, 0) < 0) { printf(\"CRASH %s (%s): no child\\n\", fn, h); bad++; return; }",
        "    if (WIFSIGNALED(ws)) { printf(\"CRASH %s (%s): signal %d\\n\", fn, h, WTERMSIG(ws)); bad++; }",
        "    else if (WEXITSTATUS(ws) == 1) { printf(\"NOMSG %s (%s)\\n\", fn, h); bad++; }",
        "    else if (WEXITSTATUS(ws) == 2) { printf(\"NULLMSG %s (%s)\\n\", fn, h); bad++; }",
        "    else if (WEXITSTATUS(ws) >= 3 && WEXITSTATUS(ws) <= 5) bad++; /* the child said which */",
        "}",
        "/* the real arguments: zeroed buffers, one per parameter, and a list of strings */",
        "static _Alignas(64) unsigned char zb[16][65536];",
        "static const char *strs[65] = {" + ", ".join(['"x"'] * 64) + ", NULL};",
        "int main(void)",
        "{",
        "    int n = 0, values = 0, objects = 0;",
        "    (void)zb; (void)strs;",
    ]
    for h, kind, ret, fn, params in functions(include_dir, headers):
        obj = object_index(params)
        others = [p for i, p in enumerate(params) if i != obj and base_type(p) != "oq_err *"]
        if obj is not None and (others or kind == "value"):
            out += object_call(h, kind, ret, fn, params, obj, enums)
        if kind != "oq_status":
            # a void function or one returning a value: only a crash is a problem
            args = ", ".join(zero_arg(p, "NULL") for p in params)
            call = "%s(%s)" % (fn, args) if kind == "void" else "(void)%s(%s)" % (fn, args)
            count = " values++;" if kind == "value" else ""
            out += [
                "    fflush(stdout);",
                "    { pid_t p = fork(); if (p == 0) { %s; _exit(0); }" % call,
                "      reap(p, \"%s\", \"%s\"); n++;%s }" % (fn, h, count),
            ]
            continue
        # without an oq_err (the graph builder's sticky calls) only a crash is a problem
        has_err = any(zero_arg(p, "&err") == "&err" for p in params)
        names = "".join('"%s", ' % param_name(p) for p in params)
        for err in ("&err", "NULL") if has_err else ("NULL",):
            args = ", ".join(zero_arg(p, err) for p in params)
            out += [
                "    fflush(stdout);",
                "    { pid_t p = fork(); if (p == 0) { oq_err err; memset(&err, 0, sizeof err);",
                "        static const char *const params[] = {%sNULL};" % names,
                "        oq_err *e = %s; oq_status st = %s(%s);" % (err, fn, args),
                "        (void)e; _exit(judge(st, e, \"%s\", \"%s\", params)); }" % (fn, h),
                "      reap(p, \"%s\", \"%s\"); n++; }" % (fn, h),
            ]
    out += ["    printf(\"%d calls (%d to functions returning a value, %d with a NULL object and real arguments), \"",
            "           \"%d problems\\n\", n, values, objects, bad);",
            "    return bad != 0;", "}"]
    print("\n".join(out))


if __name__ == "__main__":
    main()
