#!/usr/bin/env python3
"""Check every #include of the tree against the layer order of docs/design.md.

usage: layers.py ROOT

docs/design.md states the layers in a table under the heading "## Layers":
rows "| N | `folder`, `folder` |", N from 0 (lowest). The rules:
  - every folder of src/ is in exactly one layer, and every folder named exists;
  - every public header include/ortqual/X.h is implemented in the folder src/X/;
  - a file of src/D/ includes headers of D itself or of folders in LOWER layers
    only: "ortqual/X.h" (folder X), "E/name-impl.h" (folder E's internals);
  - onnxruntime_c_api.h only from the layer of `runtime` up: what lies below
    runs without ONNX Runtime;
  - the tool (src/cli/) uses the public headers only (plus its own);
  - the benchmark programs (bench/) too (and may call ORT's C API directly),
    plus a library folder's internals (E/name-impl.h) where what they compare
    side by side is internal (two paths of one function);
  - the fuzz harnesses (fuzz/) use the public headers, and a library folder's
    internals (E/name-impl.h) where what they fuzz is internal, as unit tests
    do; never the tool's headers or another file of src/ (plus their own);
  - a public header includes public headers of lower layers only, and of the
    system only the C library's (no jansson, protobuf-c or ORT types in the API).
Prints one line per violation (file:line: what) and exits 1, or exits 0.
"""
import os
import re
import sys

INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"')
SYSTEM_INCLUDE = re.compile(r'^\s*#\s*include\s+<([^>]+)>')
# What a public header may take from the system: the C standard library.
C_HEADERS = {"stdbool.h", "stddef.h", "stdint.h", "stdio.h", "stdarg.h", "limits.h"}
GENERATED = {"onnx.pb-c.h", "cmds.inc", "cmds_decl.inc"}
ORT_API = "onnxruntime_c_api.h"


def read_layers(root):
    """The layer of each folder, and the problems of the table itself."""
    path = os.path.join(root, "docs", "design.md")
    layers, problems, in_section = {}, [], False
    for line in open(path, encoding="utf-8"):
        if line.startswith("## "):
            in_section = line.strip().lower().startswith("## layers")
            continue
        m = re.match(r"^\|\s*(\d+)\s*\|(.*)\|", line) if in_section else None
        if not m:
            continue
        for name in re.findall(r"`([a-z_0-9]+)`", m.group(2)):
            if name in layers:
                problems.append(f"docs/design.md: folder '{name}' is in two layers")
            layers[name] = int(m.group(1))
    return layers, problems


def includes(path):
    with open(path, encoding="utf-8", errors="replace") as f:
        for no, line in enumerate(f, 1):
            m = INCLUDE.match(line)
            if m:
                yield no, m.group(1)


def check_lib_file(rel, path, folder, layers):
    own = layers[folder]
    for no, inc in includes(path):
        where = f"{rel}:{no}"
        if inc == ORT_API:
            if own < layers.get("runtime", -1) or folder == "cli":
                yield f"{where}: {inc} below the runtime layer"
            continue
        if inc in GENERATED or "/" not in inc:
            if folder == "cli" and inc == "onnx.pb-c.h":
                yield f"{where}: the tool includes {inc}, not a public header"
            continue
        top, name = inc.split("/", 1)
        target = os.path.splitext(name)[0] if top == "ortqual" else top
        if target == folder:
            continue
        if folder == "cli" and top != "ortqual":
            yield f"{where}: the tool includes {inc}, not a public header"
            continue
        if target not in layers:
            yield f"{where}: {inc}: folder '{target}' is not in the layer table"
        elif layers[target] >= own:
            yield (f"{where}: {inc}: '{folder}' (layer {own}) may not include "
                   f"'{target}' (layer {layers[target]})")


def check(root):
    layers, problems = read_layers(root)
    if not layers:
        return problems + ["docs/design.md: no '## Layers' table"]
    src = os.path.join(root, "src")
    folders = sorted(d for d in os.listdir(src) if os.path.isdir(os.path.join(src, d)))
    problems += [f"src/{d}/: not in the layer table of docs/design.md" for d in folders if d not in layers]
    problems += [f"docs/design.md: layer folder '{d}' does not exist under src/" for d in layers if d not in folders]
    inc_dir = os.path.join(root, "include", "ortqual")
    for h in sorted(os.listdir(inc_dir)):
        name = os.path.splitext(h)[0]
        if name not in folders:
            problems.append(f"include/ortqual/{h}: no folder src/{name}/ implements it")
            continue
        with open(os.path.join(inc_dir, h), encoding="utf-8") as f:
            for no, line in enumerate(f, 1):
                m = SYSTEM_INCLUDE.match(line)
                if m and m.group(1) not in C_HEADERS:
                    problems.append(f"include/ortqual/{h}:{no}: <{m.group(1)}> in the public API")
        for no, inc in includes(os.path.join(inc_dir, h)):
            if not inc.startswith("ortqual/"):
                problems.append(f"include/ortqual/{h}:{no}: {inc} is not a public header")
                continue
            target = os.path.splitext(inc.split("/", 1)[1])[0]
            if target in layers and name in layers and layers[target] >= layers[name]:
                problems.append(f"include/ortqual/{h}:{no}: {inc}: '{name}' (layer {layers[name]}) "
                                f"may not include '{target}' (layer {layers[target]})")
    for d in folders:
        if d not in layers:
            continue
        for f in sorted(os.listdir(os.path.join(src, d))):
            if f.endswith((".c", ".h")):
                problems += check_lib_file(f"src/{d}/{f}", os.path.join(src, d, f), d, layers)
    bench = os.path.join(root, "bench")
    for f in sorted(os.listdir(bench)) if os.path.isdir(bench) else []:
        if not f.endswith((".c", ".h")):
            continue
        for no, inc in includes(os.path.join(bench, f)):
            if inc != ORT_API and "/" in inc and not inc.startswith("ortqual/") \
                    and not internals(inc, layers):
                problems.append(f"bench/{f}:{no}: {inc} is neither a public header nor a library "
                                "folder's internals")
    problems += list(check_fuzz(root, layers))
    return problems


def internals(inc, layers):
    """A library folder's internal header ("E/name-impl.h"), never the tool's."""
    top = inc.split("/", 1)[0]
    return top in layers and top != "cli" and inc.endswith("-impl.h")


def check_fuzz(root, layers):
    fuzz = os.path.join(root, "fuzz")
    own = set(os.listdir(fuzz)) if os.path.isdir(fuzz) else set()
    for f in sorted(own):
        if not f.endswith((".c", ".h")):
            continue
        for no, inc in includes(os.path.join(fuzz, f)):
            top = inc.split("/", 1)[0]
            if "/" not in inc:
                ok = inc in own
            elif top == "ortqual":
                ok = True
            else:
                ok = internals(inc, layers)
            if not ok:
                yield f"fuzz/{f}:{no}: {inc} is neither a public header nor a library folder's internals"


def main():
    problems = check(sys.argv[1] if len(sys.argv) > 1 else ".")
    for p in problems:
        print(p)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
