#!/usr/bin/env bash
# Exit statuses as docs/usage.md documents them (0 passed, 1 a check failed or nothing
# compared, 2 usage or input error, 3 runtime error: an output that cannot be written), for
# every subcommand, as one table: command -> exit status, a line it must print, and what it
# must leave on disk. A status that changes fails this test.
# Read-only and full outputs are real: tmpfs mounts in a private mount namespace.
set -uo pipefail
. "${OQ_SOURCE_DIR:?}/tests/e2e/lib/mountns.sh"
: "${ORTQUAL:?}"
. "$OQ_SOURCE_DIR/tests/e2e/lib/common.sh"
PY=/usr/bin/python3
Q=$ORTQUAL
cd "$T"
trap 'cd /; umount "$T/ro" "$T/full" "$T/tiny" 2>/dev/null; rm -rf "$T"' EXIT

# ---- fixtures ------------------------------------------------------------------------
mkdir ro full
mount -t tmpfs -o ro,size=64k tmpfs ro
mount -t tmpfs -o size=200k tmpfs full
mkdir tiny && mount -t tmpfs -o size=16k tmpfs tiny  # the encoder's weights.npz does not fit
mkfifo out.fifo
V=(validate --num-events 4 --batch-size 2 --repeat 1 --no-plots)
$Q "${V[@]}" --configs ref:encoder:fp64,cpu:attention24:fp32 --outdir B >B.log 2>&1 || fail "base run: $(tail -3 B.log)"
M=B/encoder_attention24_fp32.onnx
# replay's reference: ORT CPU of another build (against its own it would be refused)
R130="$OQ_SOURCE_DIR/third_party/onnxruntime-1.30/lib/libonnxruntime.so.1"
U=(validate --model "$M" --configs cpu:model:fp32,cuda:model:fp32 --repeat 1 --no-plots)
$PY - B/inputs_000.npz <<'PY' || fail "cannot write the bad inputs"
import sys, numpy as np
z = dict(np.load(sys.argv[1]))
def save(name, **kw):
    d = dict(z); d.update(kw); np.savez(name, **d)
f = z["features"]
save("f5.npz", features=f[:, :, :5].copy())
save("mask_bool.npz", mask=z["mask"].astype(bool))
save("mask_i64.npz", mask=z["mask"].astype(np.int64))
save("f64.npz", features=f.astype(np.float64))
g = f.copy(); g[1, 0, 3] = np.nan; save("nan.npz", features=g)
g = f.copy(); g[0, 1, 2] = np.inf; save("inf.npz", features=g)
PY
mkdir victim planted nonempty
ln -s "$T/victim" planted/.work
echo mine >nonempty/notes.txt
mkdir errdir && echo '{}' >errdir/error.json # an earlier refusal's record is not in the way

# ---- what a row may require of the disk --------------------------------------------------
# -              nothing checked (no output folder)
# absent:D       D was not made
# error:D        D holds error.json and nothing else
# summary:D      D holds summary.json
# same:D         D holds what it held before the command (listed in D.before)
left_ok() {
    local what=${1%%:*} d=${1#*:}
    case $what in
    -) return 0 ;;
    absent) [ ! -e "$d" ] ;;
    error) [ "$(ls -A "$d" 2>/dev/null | tr '\n' ' ')" = "error.json " ] ;;
    summary) [ -f "$d/summary.json" ] ;;
    same) [ "$(ls -A "$d" | tr '\n' ' ')" = "$(cat "$d.before")" ] ;;
    esac
}

# ---- the table: code | regex (grep -E, stdout+stderr) | left | command ------------------
TABLE=$(cat <<EOF
0 | verdict: PASSED                                   | summary:v0 | $Q ${V[*]} --configs ref:encoder:fp64,cpu:attention24:fp32 --outdir v0
1 | only the reference ran                            | summary:v1 | $Q ${V[*]} --configs ref:encoder:fp64 --outdir v1
1 | verdict: FAILED                                   | summary:v1b | $Q ${V[*]} --configs ref:encoder:fp64,cpu:attention24:fp16 --tolerance rtol=0,atol=0 --outdir v1b
2 | unknown option '--bogus'                          | absent:v2a | $Q validate --bogus --outdir v2a
2 | f5.npz: member 'features' has shape \[2,88,5\]; the model's 'features' is \[batch,seq,8\] | error:v2b | $Q ${U[*]} --inputs f5.npz --outdir v2b
2 | mask_bool.npz: member 'mask' is bool              | error:v2c | $Q ${U[*]} --inputs mask_bool.npz --outdir v2c
2 | mask_i64.npz: member 'mask' is int64              | error:v2d | $Q ${U[*]} --inputs mask_i64.npz --outdir v2d
2 | f64.npz: member 'features' is float64             | error:v2e | $Q ${U[*]} --inputs f64.npz --outdir v2e
2 | nan.npz: input 'features': event 1 position 0 \(element 3 of it\) is NaN | error:v2f | $Q ${U[*]} --inputs nan.npz --outdir v2f
2 | inf.npz: input 'features': event 0 position 1 \(element 2 of it\) is inf | error:v2g | $Q ${U[*]} --inputs inf.npz --outdir v2g
2 | --tolerance: tolerance 'cls:rtol=nan': rtol value 'nan' is not a finite number | absent:v2h | $Q ${U[*]} --inputs B/inputs_000.npz --tolerance cls:rtol=nan --outdir v2h
2 | planted/.work: is a symbolic link                | same:victim | $Q ${V[*]} --configs ref:encoder:fp64,cpu:attention24:fp32 --outdir planted --force
2 | planted: not empty \(it holds '.work'\)           | same:victim | $Q ${V[*]} --configs ref:encoder:fp64,cpu:attention24:fp32 --outdir planted
2 | nonempty: not empty \(it holds 'notes.txt'\) and no earlier run's summary.json: use --force | same:nonempty | $Q ${V[*]} --configs ref:encoder:fp64,cpu:attention24:fp32 --outdir nonempty
2 | B/summary.json exists \(use --force               | summary:B | $Q ${V[*]} --configs ref:encoder:fp64,cpu:attention24:fp32 --outdir B
0 | verdict: PASSED                                   | summary:errdir | $Q ${V[*]} --configs ref:encoder:fp64,cpu:attention24:fp32 --outdir errdir
3 | ro/v: cannot create directory: Read-only file system | absent:ro/v | $Q ${V[*]} --configs ref:encoder:fp64,cpu:attention24:fp32 --outdir ro/v
3 | No space left on device                           | error:full/v | $Q validate --num-events 40 --batch-size 2 --repeat 1 --no-plots --configs ref:encoder:fp64,cpu:attention24:fp32 --outdir full/v
3 | tiny/v/weights.npz: write failed: No space left on device | error:tiny/v | $Q ${V[*]} --configs ref:encoder:fp64,cpu:attention24:fp32 --outdir tiny/v
2 | out.fifo: is a FIFO \(named pipe\); results are written to regular files only | - | $Q export sdpa -o out.fifo --force
2 | --ort-lib $T/no-such-libonnxruntime.so: cannot open: No such file or directory | absent:v3o | $Q ${V[*]} --configs ref:encoder:fp64,cpu:attention24:fp32 --ort-lib $T/no-such-libonnxruntime.so --outdir v3o
3 | --ort-lib: cannot load ONNX Runtime; tried: ./f5.npz | error:v3p | $Q ${V[*]} --configs ref:encoder:fp64,cpu:attention24:fp32 --ort-lib ./f5.npz --outdir v3p
2 | --reference-ort-lib $T/no-such-libonnxruntime.so: cannot open | absent:r3 | $Q replay --model $M --inputs B/inputs_000.npz --repeat 1 --reference-ort-lib $T/no-such-libonnxruntime.so --outdir r3
3 | --reference-ort-lib: cannot load ONNX Runtime; tried: ./f5.npz | error:r3b | $Q replay --model $M --inputs B/inputs_000.npz --repeat 1 --reference-ort-lib ./f5.npz --outdir r3b
0 | verdict: PASSED                                   | summary:r0 | $Q replay --model $M --inputs B/inputs_000.npz --repeat 1 --reference-ort-lib $R130 --outdir r0
2 | compares ORT with itself                          | absent:r1 | $Q replay --model $M --inputs B/inputs_000.npz --repeat 1 --outdir r1
2 | --model and --inputs are required                 | -          | $Q replay --inputs B/inputs_000.npz
2 | nan.npz: input 'features': event 1 position 0    | error:r2 | $Q replay --model $M --inputs nan.npz --repeat 1 --reference-ort-lib $R130 --outdir r2
3 | ro/r: cannot create directory: Read-only file system | absent:ro/r | $Q replay --model $M --inputs B/inputs_000.npz --repeat 1 --reference-ort-lib $R130 --outdir ro/r
0 | B/report.html                                     | -          | $Q report B
2 | summary.json                                      | -          | $Q report victim
3 | ro/junit.xml                                      | -          | $Q report B --junit ro/junit.xml
2 | unknown option                                    | -          | $Q merge --bogus
2 | plan.json                                         | -          | $Q merge victim
0 | attention                                         | -          | $Q inspect $M
2 | not an ONNX model                                 | -          | $Q inspect B/summary.json
0 | .                                                 | -          | $Q export sdpa -o e0.onnx
2 | unknown or incomplete option '--bogus'            | -          | $Q export sdpa --bogus -o e2.onnx
3 | ro/e.onnx                                         | absent:ro/e.onnx | $Q export sdpa -o ro/e.onnx
0 | .                                                 | -          | $Q plot B/summary.json --out p0
2 | p2.json                                           | absent:p2  | $Q plot p2.json --out p2
3 | ro/p                                              | -          | $Q plot B/summary.json --out ro/p
2 | not an ONNX model                                 | absent:c2.onnx | $Q convert B/summary.json -o c2.onnx --fuse
2 | unknown option                                    | -          | $Q estimate --bogus
2 | --events                                          | -          | $Q estimate B/summary.json
0 | PASS                                              | -          | $Q gate -- /bin/sh -c 'echo 1 passed in 0.1s'
1 | FAIL                                              | -          | $Q gate -- /bin/false
2 | option '--bogus' is unknown                       | -          | $Q gate --bogus -- /bin/true
2 | --verdict: an empty value .want FILE.                | absent:ran1 | $Q gate --verdict '' -- touch ran1
3 | --verdict: ro/g.json: cannot create: Read-only    | absent:ran2 | $Q gate --verdict ro/g.json -- touch ran2
3 | --junit: ro/g.xml: cannot create: Read-only       | absent:ran3 | $Q gate --junit ro/g.xml -- touch ran3
1 | gate: FAIL \(timed out, killed                    | -          | $Q gate --timeout 0.2 -- sleep 5
2 | unknown or incomplete option '--bogus'            | -          | $Q conformance --bogus
2 | unknown or incomplete option '--bogus'            | -          | $Q bench --bogus
3 | ro/bo: cannot create directory: Read-only file system | absent:ro/bo | $Q bench --variants cpu:attention24:fp32 --seq-lens 8 --num-heads 2 --head-dim 8 --iters 1 --outdir ro/bo
2 | nonempty: not empty .* --force                    | same:nonempty | $Q bench --variants cpu:attention24:fp32 --seq-lens 8 --num-heads 2 --head-dim 8 --iters 1 --outdir nonempty
3 | ro/co: cannot create directory: Read-only file system | absent:ro/co | $Q conformance --outdir ro/co
2 | nonempty: not empty .* --force                    | same:nonempty | $Q conformance --outdir nonempty
2 | unknown option                                    | -          | $Q doctor --bogus
2 | unknown option                                    | -          | $Q slurm --bogus
2 | 'frobnicate' is not a command                     | -          | $Q frobnicate
2 | ^ortqual: unknown option '--bogus' .options follow the command | -          | $Q --bogus
EOF
)

ls -A victim | tr '\n' ' ' >victim.before
ls -A nonempty | tr '\n' ' ' >nonempty.before
while IFS='|' read -r code pat left cmd; do
    code=$(echo $code) left=$(echo $left)
    pat=$(echo "$pat" | sed 's/ *$//; s/^ *//')
    out=$(eval "$cmd" 2>&1)
    rc=$?
    if [ "$rc" -ne "$code" ]; then bad "$cmd -> exit $rc, expected $code: $(tail -3 <<<"$out")"
    elif ! grep -qE -- "$pat" <<<"$out"; then bad "$cmd -> output lacks /$pat/: $(tail -3 <<<"$out")"
    elif ! left_ok "$left"; then bad "$cmd -> left on disk: not $left ($(ls -A "${left#*:}" 2>&1 | tr '\n' ' '))"
    else ok "$code $cmd"
    fi
done <<<"$TABLE"
report
