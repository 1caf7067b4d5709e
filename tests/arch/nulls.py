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
say. A noreturn function is left out. The program prints one line per problem and exits 1
when there is one:
  CRASH f (h.h): a signal killed the child (a NULL dereferenced, or UBSan aborting);
  NOMSG f (h.h): a failing status with an empty message;
  NULLMSG f (h.h): a message that prints a NULL string as "(null)";
  BADNAME f (h.h): a message "... is NULL" that is not "f: ARGUMENT is NULL" with ARGUMENT
                   one of f's parameters as the header names them (or a part of one:
                   "argv[0]", "opts->roots"), the message quoted.
A status of OQ_OK is not a problem: zero may be a valid argument (an empty list), and nor is
another message: a zero refused for its value.
"""
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from exports import strip, top_level_statements  # noqa: E402

DECL = re.compile(r"^OQ_API (.*?)\b(\w+)\s*\((.*)\)\s*$")
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
                yield h, kind, m.group(2), split_params(m.group(3))


def main():
    if len(sys.argv) < 3:
        raise SystemExit(__doc__)
    include_dir, headers = sys.argv[1], sys.argv[2:]
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
        "static void reap(pid_t p, const char *fn, const char *h)",
        "{",
        "    int ws = 0;",
        "    if (p < 0 || waitpid(p, &ws, 0) < 0) { printf(\"CRASH %s (%s): no child\\n\", fn, h); bad++; return; }",
        "    if (WIFSIGNALED(ws)) { printf(\"CRASH %s (%s): signal %d\\n\", fn, h, WTERMSIG(ws)); bad++; }",
        "    else if (WEXITSTATUS(ws) == 1) { printf(\"NOMSG %s (%s)\\n\", fn, h); bad++; }",
        "    else if (WEXITSTATUS(ws) == 2) { printf(\"NULLMSG %s (%s)\\n\", fn, h); bad++; }",
        "    else if (WEXITSTATUS(ws) == 3) bad++; /* the child said which */",
        "}",
        "int main(void)",
        "{",
        "    int n = 0, values = 0;",
    ]
    for h, kind, fn, params in functions(include_dir, headers):
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
    out += ["    printf(\"%d calls (%d to functions returning a value), %d problems\\n\", n, values, bad);",
            "    return bad != 0;", "}"]
    print("\n".join(out))


if __name__ == "__main__":
    main()
