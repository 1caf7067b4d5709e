#!/usr/bin/env python3
"""The exported API of libortqual.so and libortqual.a is the documented one.

usage: exports.py LIB INCLUDE_DIR [NM_OUTPUT]

Lists the dynamic symbols LIB defines (`nm -D --defined-only`), or for an
archive (*.a) its global definitions (`nm -g --defined-only`: what a program
linked with it can clash with), or the text of NM_OUTPUT when given, to check
the checker; and the declarations of INCLUDE_DIR/ortqual/*.h, then fails on:
  - a symbol the library exports that no public header declares with OQ_API;
  - a declaration marked OQ_API that the library does not export;
  - a function declared in a public header without OQ_API (documented, but
    hidden by -fvisibility=hidden).
Prints one line per problem and exits 1, or prints the count and exits 0.
"""
import os
import re
import subprocess
import sys

# What the linker or the sanitizers add to every shared object.
TOOLCHAIN = re.compile(r"^(_init|_fini|_edata|_end|__bss_start|__odr_asan.*|_+asan.*|__sancov.*)$")
IDENT_BEFORE_PAREN = re.compile(r"\b([A-Za-z_]\w*)\s*\($")
LAST_IDENT = re.compile(r"\b([A-Za-z_]\w*)\s*(\[[^\]]*\])*\s*$")


def strip(text):
    """The text without comments, preprocessor lines and string literals."""
    text = re.sub(r"/\*.*?\*/", " ", text, flags=re.S)
    text = re.sub(r"//[^\n]*", " ", text)
    text = re.sub(r"^\s*#(?:[^\n]*\\\n)*[^\n]*", " ", text, flags=re.M)
    return re.sub(r'"(?:\\.|[^"\\])*"', '""', text)


def top_level_statements(text):
    """Statements at brace depth 0, with extern "C" blocks opened."""
    text = re.sub(r'extern\s*""\s*\{', " ", text)
    depth = paren = 0
    start = 0
    for i, c in enumerate(text):
        if c == "{":
            depth += 1
        elif c == "}":
            depth -= 1
            if depth == 0:
                start = i + 1  # a struct/enum body ends; its statement ends at ';'
        elif c == "(":
            paren += 1
        elif c == ")":
            paren -= 1
        elif c == ";" and depth == 0 and paren == 0:
            yield " ".join(text[start:i].split())
            start = i + 1
        if depth < 0:  # the closing brace of extern "C"
            depth = 0
            start = i + 1


def declared_name(stmt):
    """(name, is_function) of a function or object declaration, else None."""
    if not stmt or stmt.startswith("typedef"):
        return None
    head = stmt.split("__attribute__")[0].strip()
    if "(" in head:
        m = IDENT_BEFORE_PAREN.search(head[: head.index("(") + 1])
        return (m.group(1), True) if m else None
    m = LAST_IDENT.search(head)
    return (m.group(1), False) if m and head.startswith(("extern", "OQ_API")) else None


def header_declarations(include_dir):
    marked, unmarked = {}, {}
    hdir = os.path.join(include_dir, "ortqual")
    for h in sorted(os.listdir(hdir)):
        if not h.endswith(".h"):
            continue
        for stmt in top_level_statements(strip(open(os.path.join(hdir, h), encoding="utf-8").read())):
            d = declared_name(stmt)
            if not d:
                continue
            name, is_function = d
            if re.search(r"\bOQ_API\b", stmt):
                marked[name] = h
            elif is_function:
                unmarked[name] = h
    return marked, unmarked


def exported_symbols(lib, nm_output):
    if nm_output:
        text = open(nm_output, encoding="utf-8").read()
    else:
        which = "-g" if lib.endswith(".a") else "-D"
        text = subprocess.run(["nm", which, "--defined-only", lib], check=True,
                              capture_output=True, text=True).stdout
    names = set()
    for line in text.splitlines():
        parts = line.split()
        if len(parts) >= 2 and not TOOLCHAIN.match(parts[-1]):
            names.add(parts[-1].split("@")[0])
    return names


def main():
    if len(sys.argv) < 3:
        print(__doc__)
        return 2
    lib, include_dir = sys.argv[1], sys.argv[2]
    marked, unmarked = header_declarations(include_dir)
    exported = exported_symbols(lib, sys.argv[3] if len(sys.argv) > 3 else None)
    problems = [f"{s}: exported by {os.path.basename(lib)} but declared in no public header"
                for s in sorted(exported - set(marked))]
    problems += [f"{s}: declared OQ_API in {marked[s]} but not exported"
                 for s in sorted(set(marked) - exported)]
    problems += [f"{s}: declared in {unmarked[s]} without OQ_API (hidden from the library's users)"
                 for s in sorted(unmarked)]
    for p in problems:
        print(p)
    if not problems:
        print(f"{len(exported)} exported symbols, each declared OQ_API in include/ortqual/")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
