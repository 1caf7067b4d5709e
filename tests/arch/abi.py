#!/usr/bin/env python3
"""The binary interface of libortqual.so, recorded and held to its SOVERSION.

usage: abi.py check  LIB INCLUDE_DIR RECORD SOVERSION [CC]
       abi.py update LIB INCLUDE_DIR RECORD SOVERSION [CC]

The interface is what a program compiled against include/ortqual/ bakes in:
every public struct's size and alignment and each member's offset, size and
declared type; every other named type's size; every enum constant's value;
the prototype of every symbol LIB exports (its list as tests/arch/exports.py
reads it) and of every function pointer type; and SOVERSION (CMakeLists.txt's ORTQUAL_SOVERSION, LIB's SONAME
libortqual.so.SOVERSION: tests/arch/abi.sh checks they agree). The layouts come
from a C program generated here from the headers and compiled with CC (cc by
default), so they are the compiler's numbers, not this script's guesses.

check: regenerates the interface and compares it with RECORD, line by line;
  prints each struct, member, enum constant or symbol that moved, was added or
  removed, says whether a program built against RECORD would still work, and
  the one thing to do; exits 1 on any difference, 0 when they are the same.
update: rewrites RECORD (temp + rename), but refuses (exit 1) a change a
  program built against RECORD could misread while the SOVERSION is RECORD's.
A RECORD of another machine architecture exits 77 (skipped): layouts are the
platform ABI's.
"""
import os
import platform
import re
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from exports import exported_symbols, strip, top_level_statements  # noqa: E402

UPDATE = "scripts/abi-update.sh"
TOKEN = re.compile(r"[A-Za-z_]\w*|\d+|\.\.\.|\S")
C_TYPE_WORDS = {"void", "char", "short", "int", "long", "float", "double", "signed", "unsigned",
                "const", "volatile", "struct", "enum", "union", "_Bool", "bool", "restrict"}


def tokens(text):
    return TOKEN.findall(text)


def norm(text):
    """One spelling of a declaration's text, whatever its spacing."""
    return " ".join(tokens(text))


def split_top(text, sep):
    """`text` split at `sep` outside (), [] and {}."""
    parts, depth, start = [], 0, 0
    for i, c in enumerate(text):
        if c in "([{":
            depth += 1
        elif c in ")]}":
            depth -= 1
        elif c == sep and depth == 0:
            parts.append(text[start:i])
            start = i + 1
    parts.append(text[start:])
    return [p.strip() for p in parts if p.strip()]


def body_end(text, open_brace):
    depth = 0
    for i in range(open_brace, len(text)):
        depth += {"{": 1, "}": -1}.get(text[i], 0)
        if depth == 0:
            return i
    raise ValueError("unbalanced braces")


def param_type(param):
    """A parameter's type without its name: renaming a parameter changes no binary."""
    fp = re.search(r"\(\s*\*\s*([A-Za-z_]\w*)\s*\)", param)
    if fp:
        return norm(param[:fp.start(1)] + param[fp.end(1):])
    t = tokens(param)
    arr = t.index("[") if "[" in t else len(t)
    if arr >= 2 and re.match(r"[A-Za-z_]", t[arr - 1]) and t[arr - 1] not in C_TYPE_WORDS:
        t = t[:arr - 1] + t[arr:]
    return " ".join(t)


def signature(ret, params):
    """`ret (params)` with the parameters' names left out."""
    return f"{norm(ret)} ({', '.join(param_type(p) for p in split_top(params, ','))})"


def declarator(decl):
    """(name, type text with the name left out) of one declarator."""
    fp = re.search(r"\(\s*\*\s*([A-Za-z_]\w*)\s*\)\s*\((.*)\)\s*$", decl, re.S)
    if fp:
        return fp.group(1), f"{norm(decl[:fp.start()])} (*){signature('', fp.group(2))[1:]}".strip()
    m = re.search(r"([A-Za-z_]\w*)\s*((?:\[[^\]]*\]\s*)*)$", decl)
    return m.group(1), norm(decl[:m.start()] + " " + m.group(2))


def members(body, prefix=""):
    """(path, type) of every member of a struct body, nested unnamed ones opened."""
    out = []
    for stmt in split_top(body, ";"):
        if "{" in stmt:
            open_brace = stmt.index("{")
            inner = stmt[open_brace + 1:body_end(stmt, open_brace)]
            name = stmt[body_end(stmt, open_brace) + 1:].strip()
            out += members(inner, f"{prefix}{name}." if name else prefix)
            continue
        decls = split_top(stmt, ",")
        first_name, first_type = declarator(decls[0])
        out.append((prefix + first_name, first_type))
        # `int64_t a, *b[2]`: the later declarators share the first's specifiers
        specifiers = re.sub(r"[\s*]*\b" + re.escape(first_name) + r"\b.*$", "", decls[0], flags=re.S)
        for d in decls[1:]:
            name, rest = declarator(d)
            out.append((prefix + name, norm(specifiers + " " + rest)))
    return out


def header_items(path):
    """The structs, enum constants, function pointer types and declarations of one header."""
    text = strip(open(path, encoding="utf-8").read())
    structs, enums, types, fn_types, decls = [], [], [], [], {}
    for m in re.finditer(r"\btypedef\s+struct\s+(\w+)\s*\{", text):
        end = body_end(text, m.end() - 1)
        structs.append((m.group(1), members(text[m.end():end])))
    for m in re.finditer(r"\benum\s*\w*\s*\{", text):
        end = body_end(text, m.end() - 1)
        enums += [re.match(r"\s*(\w+)", c).group(1) for c in split_top(text[m.end():end], ",")]
        named = re.match(r"\s*(\w+)\s*;", text[end + 1:])
        if text[:m.start()].rstrip().endswith("typedef") and named:
            types.append(named.group(1))
    # a scalar or an alias passed by value: its size is in no struct when only a prototype has it
    types += re.findall(r"\btypedef\s+(?!struct\b|enum\b)[\w\s]+?\b(\w+)\s*;", text)
    for m in re.finditer(r"\btypedef\s+([^;{}]*?)\(\s*\*\s*(\w+)\s*\)\s*\(([^;{}]*)\)\s*;", text):
        fn_types.append((m.group(2), f"{norm(m.group(1))} (*)" + signature("", m.group(3))[1:]))
    for stmt in top_level_statements(text):
        if not re.search(r"\bOQ_API\b", stmt):
            continue
        stmt = norm(re.sub(r"\b(extern|OQ_API)\b|__attribute__\s*\(\(.*?\)\)", " ", stmt))
        fn = re.match(r"(.*?)\b(\w+)\s*\((.*)\)$", stmt)
        if fn:
            decls[fn.group(2)] = ("function", signature(fn.group(1), fn.group(3)))
        else:
            name, typ = declarator(stmt)
            decls[name] = ("object", typ)
    return structs, enums, types, fn_types, decls


def c_str(s):
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'


def layout_program(items):
    """A C program that prints the compiler's layout of every struct, the size of every other
    named type, the enum values and the size of every exported object."""
    lines = ["#include <stddef.h>", "#include <stdio.h>"]
    lines += [f"#include <ortqual/{h}>" for h in items]
    lines += ["int main(void)", "{"]
    for h, (structs, enums, types, _, decls) in items.items():
        lines.append(f'    puts("# {h}");')
        for name, mems in structs:
            lines.append(f'    printf("struct {name}: size %zu align %zu\\n", sizeof({name}), _Alignof({name}));')
            for path, typ in mems:
                lines.append(f'    printf("member {name}.{path}: offset %zu size %zu type %s\\n", '
                             f'offsetof({name}, {path}), sizeof((({name} *)0)->{path}), {c_str(typ)});')
        for t in types:
            lines.append(f'    printf("type {t}: size %zu\\n", sizeof({t}));')
        for e in enums:
            lines.append(f'    printf("enum {e}: %lld\\n", (long long)({e}));')
        for name, (kind, typ) in sorted(decls.items()):
            if kind == "object":
                lines.append(f'    printf("object {name}: size %zu type %s\\n", sizeof({name}), {c_str(typ)});')
    lines += ["    return 0;", "}"]
    return "\n".join(lines) + "\n"


def check_coverage(layout):
    """Each struct's members fill it up to padding: a member this parser missed (one in a form
    it does not know) leaves a hole as wide as the struct's alignment."""
    structs, spans = {}, {}
    for line in layout:
        m = re.match(r"struct (\w+): size (\d+) align (\d+)", line)
        if m:
            structs[m.group(1)] = (int(m.group(2)), int(m.group(3)))
        m = re.match(r"member (\w+)\.\S+: offset (\d+) size (\d+)", line)
        if m:
            spans.setdefault(m.group(1), []).append((int(m.group(2)), int(m.group(3))))
    for name, (size, align) in structs.items():
        end = 0
        for off, n in sorted(spans.get(name, [])) + [(size, 0)]:
            if off - end >= align:
                raise SystemExit(f"{name}: bytes {end}..{off} belong to no member read from its header "
                                 "(a declaration tests/arch/abi.py cannot parse?)")
            end = max(end, off + n)


def generate(lib, include_dir, soversion, cc):
    """The interface as record lines: the compiled layouts plus the exported symbols."""
    hdir = os.path.join(include_dir, "ortqual")
    items = {h: header_items(os.path.join(hdir, h)) for h in sorted(os.listdir(hdir)) if h.endswith(".h")}
    with tempfile.TemporaryDirectory() as tmp:
        src, exe = os.path.join(tmp, "layout.c"), os.path.join(tmp, "layout")
        with open(src, "w", encoding="utf-8") as f:
            f.write(layout_program(items))
        cmd = cc.split() + ["-std=gnu17", "-w", "-I", include_dir, src, "-o", exe]
        built = subprocess.run(cmd, capture_output=True, text=True)
        if built.returncode:
            raise SystemExit(f"the layout program from {hdir} did not compile:\n{built.stderr[-2000:]}")
        layout = subprocess.run([exe], check=True, capture_output=True, text=True).stdout.splitlines()
    check_coverage(layout)
    exported = exported_symbols(lib, None)
    lines = ["# libortqual's binary interface: tests/arch/abi.py; regenerate with " + UPDATE,
             f"soversion: {soversion}", f"arch: {platform.machine()}"]
    compiled = {}  # the layout program's lines under each "# header.h" it printed
    for line in layout:
        if line.startswith("# "):
            header = line[2:]
        compiled.setdefault(header, []).append(line)
    for h, (_, _, _, fn_types, decls) in items.items():
        lines += compiled[h] + [f"typedef {n}: {t}" for n, t in fn_types]
        lines += [f"symbol {n}: {t}" for n, (_, t) in sorted(decls.items()) if n in exported]
    declared = {n for h in items for n in items[h][4]}
    lines += [f"symbol {n}: undeclared" for n in sorted(exported - declared)]
    return lines


def parse(lines):
    return dict(line.split(": ", 1) for line in lines if line and not line.startswith("#"))


def compatible_addition(key, old):
    """A new struct (with its members), type, enum constant, function pointer type or symbol
    breaks no old program; a new member of a struct it knows does."""
    kind, name = key.split(" ", 1)
    if kind == "member":
        return f"struct {name.split('.', 1)[0]}" not in old
    return kind in ("struct", "type", "enum", "typedef", "symbol")


def differences(old, new):
    """(problems, additions): one line per key that moved, left or came."""
    problems, additions = [], []
    for key in old:
        if key in ("soversion", "arch"):
            continue
        if key not in new:
            problems.append(f"{key}: removed (was {old[key]})")
        elif old[key] != new[key]:
            problems.append(f"{key}: {old[key]} -> {new[key]}")
    for key in new:
        if key not in old and key not in ("soversion", "arch"):
            (additions if compatible_addition(key, old) else problems).append(f"{key}: added ({new[key]})")
    return problems, additions


def read_record(path):
    try:
        return open(path, encoding="utf-8").read().splitlines()
    except FileNotFoundError:
        return None


def write_record(path, lines):
    tmp = path + ".tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        f.write("\n".join(lines) + "\n")
    os.replace(tmp, path)


def bump_advice(old_so):
    return (f"accept it with {UPDATE} --bump (ORTQUAL_SOVERSION {old_so} -> {old_so + 1} in CMakeLists.txt, "
            "the record rewritten)")


def update(record, old, new, new_lines):
    """Rewrite the record, unless a change breaks old programs under the record's SOVERSION."""
    problems, additions = differences(old, new)
    old_so, new_so = int(old["soversion"]), int(new["soversion"])
    if problems and new_so == old_so:
        for p in problems:
            print(f"incompatible: {p}")
        print(f"refused: a program built against {record} (SOVERSION {old_so}) would misread these; "
              + bump_advice(old_so))
        return 1
    write_record(record, new_lines)
    print(f"{record}: SOVERSION {new_so}, {len(problems)} incompatible and {len(additions)} compatible "
          "changes recorded")
    return 0


def check(record, old, new):
    """0 when the interface is the record's; else each difference and the one thing to do."""
    problems, additions = differences(old, new)
    old_so, new_so = int(old["soversion"]), int(new["soversion"])
    if not problems and not additions and old_so == new_so:
        count = lambda kind: sum(k.startswith(kind + " ") for k in new)  # noqa: E731
        print(f"ABI of SOVERSION {new_so} as recorded: {count('struct')} structs, {count('symbol')} symbols, "
              f"{count('enum')} enum constants")
        return 0
    for p in problems:
        print(f"incompatible: {p}")
    for a in additions:
        print(f"compatible: {a}")
    if new_so > old_so:
        print(f"SOVERSION is {new_so}, {record} describes {old_so}: run {UPDATE} to record interface {new_so}")
    elif problems:
        print(f"the interface changed incompatibly under SOVERSION {old_so}: a program built against the "
              f"recorded headers would misread it; " + bump_advice(old_so))
    else:
        print(f"compatible additions only (no SOVERSION bump needed): run {UPDATE} to record them")
    return 1


def main():
    if len(sys.argv) < 6 or sys.argv[1] not in ("check", "update"):
        print(__doc__)
        return 2
    mode, lib, include_dir, record, soversion = sys.argv[1:6]
    cc = sys.argv[6] if len(sys.argv) > 6 else "cc"
    new_lines = generate(lib, include_dir, int(soversion), cc)
    old_lines = read_record(record)
    if old_lines is None:
        if mode == "check":
            print(f"no record at {record}: run {UPDATE}")
            return 1
        write_record(record, new_lines)
        print(f"{record}: written, SOVERSION {soversion}")
        return 0
    old, new = parse(old_lines), parse(new_lines)
    if old["arch"] != new["arch"]:
        print(f"{record} describes {old['arch']}, this machine is {new['arch']}: layouts differ by ABI")
        return 77
    if int(new["soversion"]) < int(old["soversion"]):
        print(f"SOVERSION {new['soversion']} is below the recorded {old['soversion']}: a SOVERSION never goes back")
        return 1
    return update(record, old, new, new_lines) if mode == "update" else check(record, old, new)


if __name__ == "__main__":
    sys.exit(main())
