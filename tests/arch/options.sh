#!/usr/bin/env bash
# No library source outside src/cli/ names a command-line option in a string literal: a C
# caller sets the API's fields (tests/arch/options.py, with its allow-list and the files still
# to convert); and the check bites: a planted option is caught, split across literals or after
# a %s too, while a comment, and advice naming the tool's command, are not.
set -euo pipefail
. "$OQ_SOURCE_DIR/tests/e2e/lib/common.sh"
PY=/usr/bin/python3
CHECK="$OQ_SOURCE_DIR/tests/arch/options.py"

out=$($PY "$CHECK" "$OQ_SOURCE_DIR") || fail "library texts naming the tool's options:
$out"

# a copy of src/ with one change; caught: the check fails naming $2; else it passes
tree() {
    rm -rf "$T/tree" && mkdir -p "$T/tree"
    cp -r "$OQ_SOURCE_DIR/src" "$T/tree/"
    (cd "$T/tree" && eval "$1")
}
bites() {
    tree "$3"
    if out=$($PY "$CHECK" "$T/tree"); then fail "$1: not caught"; fi
    grep -q -- "$2" <<<"$out" || fail "$1: message lacks '$2': $out"
}
passes() {
    tree "$2"
    out=$($PY "$CHECK" "$T/tree") || fail "$1: blamed: $out"
}
bites "an option in a message" 'src/mask/mask.c:[0-9]*: "--lengths"' \
    'printf "static const char *m = \"bad lengths: give --lengths\";\n" >> src/mask/mask.c'
bites "an option in the second of two joined literals" 'src/mask/mask.c:[0-9]*: "--padded"' \
    'printf "static const char *m = \"bad \"\n   \"(see --padded)\";\n" >> src/mask/mask.c'
bites "an option after a %s" 'src/mask/mask.c:[0-9]*: "--seq-axis"' \
    'printf "static const char *m = \"%%s--seq-axis\";\n" >> src/mask/mask.c'
# the list only shrinks: a listed file that names no option is named (the check with src/mask/mask.c,
# which names none, added to its list: the list itself may be empty)
tree :
out=$($PY - "$CHECK" "$T/tree" <<'PY'
import importlib.util, sys
spec = importlib.util.spec_from_file_location("options", sys.argv[1])
check = importlib.util.module_from_spec(spec)
spec.loader.exec_module(check)
check.DEBT = set(check.DEBT) | {"src/mask/mask.c"}
print("\n".join(check.problems(sys.argv[2])))
PY
)
grep -q "src/mask/mask.c: names no option any more" <<<"$out" || fail "a listed file that names none: not caught: $out"
passes "a comment" 'printf "/* --lengths: a comment */\n" >> src/mask/mask.c'
passes "advice naming the tool" 'printf "static const char *m = \"(\`ortqual convert --flash\`)\";\n" >> src/mask/mask.c'
passes "the tool itself" 'printf "static const char *m = \"--lengths\";\n" >> src/cli/main.c'
echo "options: no library literal names a command-line option (outside the allowed and the listed files), and the check bites"
