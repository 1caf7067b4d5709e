#!/usr/bin/env python3
"""The library speaks in its API's terms: no string literal of a library source (src/, not the
tool's src/cli/) names a command-line option ("--seq-axis"). A C caller has no such options; it
sets fields (opts.seq_axes), and the tool words the library's messages in its options itself
(src/cli/cli_terms.c).

usage: options.py ROOT      (prints one line per literal, file:line: "--option", and exits 1)

Adjacent literals are one ("a " "--b"), as C joins them; comments are not literals. Allowed:
  - an option after "ortqual " in the same literal: advice that names the tool's command
    ("`ortqual convert --flash` writes it"), which a C caller can run;
  - ALLOW: files whose "--" texts are not options of the caller (see the reasons);
  - DEBT: files still to be worded in API terms. The list only shrinks: a file in it that names
    no option any more is an error too, so that it leaves the list.
"""
import os
import re
import sys

ALLOW = {
    "src/validate/spawn.c": "the worker's argv (ortqual validate --worker PLAN) and its stderr prefix",
    "src/validate/tool.c": "the argv of `ortqual --version`, the installed tool's version check",
    "src/slurm/slurm.c": "sbatch's #SBATCH directives and argv, and the tool's command line in the job script",
    "src/report/html.c": "CSS custom properties (--ok, --bad), not options",
}

# Worded in the tool's options still: empty since the twenty-third session (every library file
# speaks in API terms); a file put here must leave it again (the list only shrinks).
DEBT = set()

OPTION = re.compile(r"(?<!-)--[a-z][a-z0-9-]*")  # also after a %s: "%s--seq-axis"
TOKEN = re.compile(r'/\*.*?\*/|//[^\n]*|"(?:\\.|[^"\\\n])*"|\'(?:\\.|[^\'\\\n])*\'|\S', re.S)


def literals(text):
    """(line, text) of each string literal, adjacent ones joined."""
    out, line, prev_end = [], None, None
    for m in TOKEN.finditer(text):
        tok = m.group(0)
        if tok.startswith("/*") or tok.startswith("//"):
            continue
        if tok.startswith('"'):
            if prev_end is not None and not text[prev_end:m.start()].strip():
                out[-1] = (out[-1][0], out[-1][1] + tok[1:-1])
            else:
                out.append((text.count("\n", 0, m.start()) + 1, tok[1:-1]))
            prev_end = m.end()
        else:
            prev_end = None
    return out


def problems(root):
    src = os.path.join(root, "src")
    seen_debt = set()
    for dirpath, dirnames, files in os.walk(src):
        dirnames.sort()
        rel_dir = os.path.relpath(dirpath, root)
        if rel_dir == os.path.join("src", "cli") or rel_dir.startswith(os.path.join("src", "cli") + os.sep):
            continue
        for name in sorted(files):
            if not name.endswith((".c", ".h")):
                continue
            rel = os.path.join(rel_dir, name)
            if rel in ALLOW:
                continue
            text = open(os.path.join(dirpath, name), encoding="utf-8", errors="replace").read()
            for line, lit in literals(text):
                for m in OPTION.finditer(lit):
                    if "ortqual " in lit[:m.start()]:
                        continue
                    if rel in DEBT:
                        seen_debt.add(rel)
                        continue
                    yield f'{rel}:{line}: "{m.group(0)}": a library message names the tool\'s option (say the API field)'
    for rel in sorted(DEBT - seen_debt):
        yield f"{rel}: names no option any more: take it off DEBT in tests/arch/options.py"


def main():
    found = list(problems(sys.argv[1]))
    for p in found:
        print(p)
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
