# ortqual plot end to end: the committed bench and validate fixtures give valid
# PNG and SVG files (SVG text as text); bad input exits 2 and writes nothing.
set -u
: "${ORTQUAL:?}" "${OQ_SOURCE_DIR:?}"
. "$OQ_SOURCE_DIR/tests/e2e/lib/common.sh"
bench="$OQ_SOURCE_DIR/tests/fixtures/bench/summary.csv"
val="$OQ_SOURCE_DIR/tests/fixtures/validate/pass.json"

# --- bench fixture: every figure in both formats, listed on stdout ----------
"$ORTQUAL" plot "$bench" --out "$T/b" >"$T/out" 2>"$T/err" || fail "plot exited $?: $(cat "$T/err")"
for f in runtime memory speedup; do
  for g in masked unmasked; do
    for ext in png svg; do
      p="$T/b/${f}_$g.$ext"
      [ -s "$p" ] || fail "missing $p"
      grep -qx "$p" "$T/out" || fail "$p not printed"
    done
  done
done
[ "$(wc -l <"$T/out")" -eq 14 ] || fail "expected 14 files printed, got: $(cat "$T/out")"
for p in "$T"/b/*.png; do
  [ "$(head -c 8 "$p" | od -An -tx1 | tr -d ' \n')" = 89504e470d0a1a0a ] || fail "$p is not a PNG"
done
for p in "$T"/b/*.svg; do
  grep -q "<svg" "$p" || fail "$p has no <svg"
done
for v in cpu:decomposed:fp32 cpu:attention24:fp32 ref; do
  grep -q "$v" "$T/b/runtime_masked.svg" || fail "legend text $v missing from the SVG"
done
ls "$T/b" | grep -q tmp && fail "temporary files left: $(ls "$T/b")"

# --- options: one format, baseline, statistic, JSON list ---------------------
"$ORTQUAL" plot "$bench" --out "$T/c" --format svg --baseline ref --stat mean --json >"$T/out" \
  || fail "plot --format svg exited $?"
ls "$T/c" | grep -q '\.png$' && fail "--format svg wrote PNG files"
grep -q '"files"' "$T/out" || fail "--json output: $(cat "$T/out")"
grep -q "Speed-up over ref (mean time)" "$T/c/speedup_masked.svg" || fail "baseline/stat not applied"
# a folder whose path is not UTF-8 (byte 0xff): --json lists every file, that byte as U+FFFD
# (jansson refused such a string, and the list silently lost it)
"$ORTQUAL" plot "$bench" --out "$T/$(printf 'u\xff')" --format svg --json >"$T/u8" || fail "plot --json, --out not UTF-8: exit $?"
/usr/bin/python3 -c 'import json,sys; f=json.load(open(sys.argv[1]))["files"]; assert len(f) == 7 and all(p.startswith(sys.argv[2] + "/u\ufffd/") for p in f), f' \
  "$T/u8" "$T" || fail "plot --json, --out not UTF-8: $(cat "$T/u8")"

# --- bench summary.json (results records, extra keys ignored) ---------------
"$ORTQUAL" plot "$OQ_SOURCE_DIR/tests/fixtures/bench/summary.json" --out "$T/j" --format svg >"$T/out" \
  || fail "plot summary.json exited $?"
[ "$(wc -l <"$T/out")" -eq 4 ] || fail "summary.json: expected 4 figures: $(cat "$T/out")"
grep -q "series: cpu:decomposed:fp32 | cpu:attention24:fp32</desc>" "$T/j/runtime.svg" \
  || fail "summary.json: series missing"
printf '{"results": 1}' >"$T/bad.json"

# --- --out with a trailing slash: the printed paths have one slash ------------
"$ORTQUAL" plot "$bench" --out "$T/slash//" --format svg >"$T/out" || fail "plot --out DIR/ exited $?"
grep -qx "$T/slash/runtime_unmasked.svg" "$T/out" || fail "--out DIR/: paths printed as: $(head -2 "$T/out")"
grep -q '//' "$T/out" && fail "--out DIR/: double slash in: $(grep // "$T/out" | head -1)"

# --- validate summary.json, default output directory is the input's ---------
cp "$val" "$T/summary.json"
"$ORTQUAL" plot "$T/summary.json" --format png,svg >"$T/out" || fail "validate plot exited $?"
for f in error_cls error_reg error_vs_ref_cls error_vs_ref_reg runtime_valid_size; do
  [ -s "$T/$f.png" ] && [ -s "$T/$f.svg" ] || fail "missing $T/$f.png/.svg"
done
grep -q '<text[^>]*>cpu:attention24:fp16' "$T/error_cls.svg" || fail "panel label not SVG text"
for c in ref:encoder:fp64 cpu:decomposed:fp32 cpu:attention24:fp16; do
  grep -q "data-label=\"$c\" data-points=\"2\"" "$T/runtime_valid_size.svg" || fail "runtime: $c lacks its 2 batches"
done
# the run directory stands for its summary.json: the same figures there
mkdir "$T/rundir" && cp "$val" "$T/rundir/summary.json"
"$ORTQUAL" plot "$T/rundir" --format svg >"$T/out" || fail "plot of a run directory exited $?"
cmp -s "$T/error_cls.svg" "$T/rundir/error_cls.svg" || fail "run directory: error_cls.svg differs or is missing"
# validate.csv alone cannot be drawn: its figures need summary.json's histograms
printf 'config,output,batch,valid_size,seconds_first,seconds_median,max_abs_err\nc,o,0,1,1,1,1\n' >"$T/v.csv"
"$ORTQUAL" plot "$T/v.csv" --out "$T/vcsv" 2>"$T/err" && fail "validate.csv was drawn"
grep -q "drawn from summary.json" "$T/err" || fail "validate.csv: $(cat "$T/err")"
# the bench summary.json `ortqual bench` writes (rows nested), baseline by runtime as --help says
"$ORTQUAL" plot "$OQ_SOURCE_DIR/tests/fixtures/bench/sweep.json" --baseline ref --format svg --out "$T/sw" >"$T/out" \
  || fail "plot sweep.json --baseline ref exited $?"
grep -q "Speed-up over ref:sdpa:fp64" "$T/sw/speedup_b1_masked.svg" || fail "baseline ref not resolved"
grep -q "shapes)" "$T"/sw/*.svg && fail "'( shapes)' in a label"

# --- bad input: exit 2, a message naming the problem, nothing written --------
expect_usage() { # expect_usage WANT-IN-STDERR ARGS...
  want=$1; shift
  rm -rf "$T/bad"
  "$ORTQUAL" plot "$@" --out "$T/bad" >"$T/out" 2>"$T/err"
  rc=$?
  [ $rc -eq 2 ] || fail "plot $*: exit $rc, expected 2"
  grep -qF -- "$want" "$T/err" || fail "plot $*: stderr lacks '$want': $(cat "$T/err")"
  [ ! -e "$T/bad" ] || fail "plot $*: wrote $(ls "$T/bad")"
}
# Column numbers from the header (the fixture has no quoted commas before them).
colno() { head -1 "$bench" | tr , '\n' | grep -nx "$1" | cut -d: -f1; }
p50=$(colno p50_ms) mean=$(colno mean_ms)
awk -F, -v OFS=, -v c="$p50" 'NR == 4 { $c = $c "ms" } NR <= 4' "$bench" >"$T/badnum.csv"
bad=$(sed -n 4p "$T/badnum.csv" | cut -d, -f"$p50")
case $bad in *ms) ;; *) fail "fixture edit did not apply: $bad" ;; esac
expect_usage "badnum.csv:4: column 'p50_ms': '$bad' is not a number" "$T/badnum.csv"
cut -d, -f"1-$((mean - 1)),$((mean + 1))-" "$bench" >"$T/nocol.csv"
expect_usage "nocol.csv: no column 'mean_ms' in the header" "$T/nocol.csv" --stat mean
printf 'variant,status\n"unclosed,ok\n' >"$T/quote.csv"
expect_usage "quote.csv:2: field 1: quoted field never closed" "$T/quote.csv"
# no row measured (every variant skipped): nothing to draw, exit 0, as for a validate run
grep -v ',ok,' "$bench" >"$T/nook.csv"
rm -rf "$T/nook"
"$ORTQUAL" plot "$T/nook.csv" --out "$T/nook" >"$T/out" 2>"$T/err" || fail "plot of a bench summary with no ok row: exit $?"
grep -qF 'nothing to draw: no bench row has status "ok" (2 oom)' "$T/err" || fail "plot with no ok row: $(cat "$T/err")"
[ -z "$(ls -A "$T/nook" 2>/dev/null)" ] || fail "plot with no ok row wrote $(ls "$T/nook")"
# the reason counts the rows' statuses: rows that failed were called "skipped, unsupported or out
# of memory" (QA sre #8)
sed 's/,ok,/,failed,/' "$bench" >"$T/allfailed.csv"
"$ORTQUAL" plot "$T/allfailed.csv" "$T/nook.csv" --out "$T/nook" >"$T/out" 2>"$T/err" || fail "plot of failed rows: exit $?"
grep -qF 'allfailed.csv (and the other inputs): nothing to draw: no bench row has status "ok" (34 failed, 4 oom)' "$T/err" ||
  fail "plot of failed rows: $(cat "$T/err")"
[ -z "$(ls -A "$T/nook" 2>/dev/null)" ] || fail "plot of failed rows wrote $(ls "$T/nook")"
expect_usage "baseline 'gpu' is not a variant" "$bench" --baseline gpu
# a negative or zero length or batch is malformed, not a point to drop
seqc=$(colno seq_len) batchc=$(colno batch)
awk -F, -v OFS=, -v c="$seqc" 'NR == 3 { $c = -$c } 1' "$bench" >"$T/negseq.csv"
expect_usage "negseq.csv:3: column 'seq_len': -256 is not a positive size" "$T/negseq.csv"
awk -F, -v OFS=, -v c="$batchc" 'NR == 5 { $c = 0 } 1' "$bench" >"$T/zerobatch.csv"
expect_usage "zerobatch.csv:5: column 'batch': 0 is not a positive size" "$T/zerobatch.csv"
# so is a time that is NaN or infinite (the point vanished from the figure, exit 0)
p50c=$(colno p50_ms)
awk -F, -v OFS=, -v c="$p50c" 'NR == 4 { $c = "nan" } 1' "$bench" >"$T/nantime.csv"
expect_usage "nantime.csv:4: column 'p50_ms': nan is not a time" "$T/nantime.csv"
awk -F, -v OFS=, -v c="$p50c" 'NR == 4 { $c = "1e400" } 1' "$bench" >"$T/inftime.csv"
expect_usage "inftime.csv:4: column 'p50_ms': inf is not a time" "$T/inftime.csv"
# and one that is negative or 0: every p50 -1 was exit 0, the runtime figures dropped (log axis)
# and every speed-up a flat 1.0x from (-1)/(-1)
awk -F, -v OFS=, -v c="$p50c" 'NR > 1 { $c = -1 } 1' "$bench" >"$T/negtime.csv"
expect_usage "negtime.csv:2: column 'p50_ms': -1 is not a time (a measured time is > 0 ms)" "$T/negtime.csv"
awk -F, -v OFS=, -v c="$p50c" 'NR == 4 { $c = 0 } 1' "$bench" >"$T/zerotime.csv"
expect_usage "zerotime.csv:4: column 'p50_ms': 0 is not a time" "$T/zerotime.csv"
expect_usage "cannot open" "$T/missing.csv"
# a refused run's folder (error.json, no summary.json): the refusal, as `report DIR` gives it (it
# said only "DIR/summary.json: cannot open: No such file or directory"; QA mlpf2 #7)
echo "not a zip" >"$T/notnpz.npz"
"$ORTQUAL" validate --inputs "$T/notnpz.npz" --configs ref:encoder:fp64,cpu:attention24:fp32 --outdir "$T/refused" \
  >/dev/null 2>&1
[ "$(ls "$T/refused")" = error.json ] || fail "no refused run to plot: $(ls "$T/refused")"
expect_usage "ortqual plot: $T/refused holds error.json and no summary.json: the run was refused (no result to render): $T/notnpz.npz: cannot open as .npz" "$T/refused"
grep -q "summary.json: cannot open" "$T/err" && fail "refused run: $(cat "$T/err")"
expect_usage 'bad.json: no "results" array of records' "$T/bad.json"
expect_usage "unknown option '--bogus'" "$bench" --bogus
expect_usage "unknown format 'pdf'" "$bench" --format pdf
expect_usage "unknown statistic 'p42'" "$bench" --stat p42
# an --out that is a file (or below one) is the user's mistake, as validate's --outdir: exit 2 naming
# --out (it was exit 3, "DIR/runtime_unmasked.png: cannot create: Not a directory")
echo mine >"$T/afile"
for out in "$T/afile" "$T/afile/sub"; do
  "$ORTQUAL" plot "$bench" --out "$out" >"$T/out" 2>"$T/err"
  rc=$?
  [ $rc -eq 2 ] && grep -qx "ortqual plot: --out: $T/afile: exists and is not a directory" "$T/err" ||
    fail "plot --out $out (a file): exit $rc: $(cat "$T/err")"
done
[ "$(cat "$T/afile")" = mine ] || fail "plot --out a file: the file changed"
# --- no cairo driver: exit 3, the install hint, nothing written ---------------
# PLplot finds its drivers through PLPLOT_DRV_DIR: an empty one (PLplot would
# otherwise exit the process itself), and one with drivers but not cairo's.
expect_no_driver() { # expect_no_driver DRVDIR FORMAT
  rm -rf "$T/bad"
  PLPLOT_DRV_DIR="$1" "$ORTQUAL" plot "$bench" --out "$T/bad" --format "$2" >"$T/out" 2>"$T/err"
  rc=$?
  [ $rc -eq 3 ] || fail "driver dir $1: exit $rc, expected 3: $(cat "$T/err")"
  grep -qF "PLplot driver extcairo not available: install plplot-driver-cairo" "$T/err" \
    || fail "driver dir $1: $(cat "$T/err")"
  [ ! -e "$T/bad" ] || fail "driver dir $1: wrote $(ls "$T/bad")"
}
mkdir "$T/nodrivers"
expect_no_driver "$T/nodrivers" png
drvdir=$(pkg-config --variable=drvdir plplot 2>/dev/null)
if [ -n "$drvdir" ] && [ -e "$drvdir/null.driver_info" ]; then
  mkdir "$T/nocairo"
  cp "$drvdir"/null.* "$T/nocairo/"
  expect_no_driver "$T/nocairo" png
fi
# SVG is ortqual's own writer: no PLplot driver needed
PLPLOT_DRV_DIR="$T/nodrivers" "$ORTQUAL" plot "$bench" --out "$T/svgonly" --format svg >/dev/null 2>"$T/err" \
  || fail "svg without PLplot drivers: $(cat "$T/err")"
[ -s "$T/svgonly/runtime_masked.svg" ] || fail "svg without PLplot drivers: nothing written"

# two models' bench --model runs (both rows 'cpu:model:fp32') in one figure: a series each, named
# after its run's folder (they clashed as two results of one variant)
TF=$OQ_SOURCE_DIR/tests/fixtures/torch
for m in mlpf_like tx_encoder; do
  "$ORTQUAL" bench --model "$TF/$m/${m}_op18.onnx" --dim batch=1 --sweep seq=8,16 --iters 2 --warmup 0 --threads 1 \
    --quiet --outdir "$T/$m" >/dev/null 2>"$T/err" || fail "bench --model $m: $(cat "$T/err")"
done
"$ORTQUAL" plot "$T/mlpf_like/summary.json" "$T/tx_encoder/summary.json" --out "$T/two" --format svg >/dev/null 2>"$T/err" \
  || fail "two models: $(cat "$T/err")"
grep -q "mlpf_like: cpu:model:fp32" "$T/two/runtime.svg" && grep -q "tx_encoder: cpu:model:fp32" "$T/two/runtime.svg" \
  || fail "two models: series not named after their runs"

# bench --model's x axis is the dimension its sweep varied: --dim seq=16 --sweep batch=1,2,4 is one
# figure against the batch (it was a one-point figure per batch, each at seq 16); two swept
# dimensions are a figure per batch against seq, its subtitle naming the batch
model_figs() { # model_figs NAME BENCH-ARGS...: bench --model tx_encoder, plot it as SVG, list the files
  name=$1; shift
  "$ORTQUAL" bench --model "$TF/tx_encoder/tx_encoder_op18.onnx" "$@" --iters 2 --warmup 0 --threads 1 --quiet \
    --outdir "$T/$name" >/dev/null 2>"$T/err" || fail "bench --model $*: $(cat "$T/err")"
  "$ORTQUAL" plot "$T/$name" --out "$T/$name/fig" --format svg >"$T/out" 2>"$T/err" \
    || fail "plot $name: $(cat "$T/err")"
  figs=$(ls "$T/$name/fig" | tr '\n' ' ')
}
model_figs bsweep --dim seq=16 --sweep batch=1,2,4
[ "$figs" = "memory.svg runtime.svg " ] || fail "batch sweep: figures $figs"
grep -q 'data-label="cpu:model:fp32" data-points="3"' "$T/bsweep/fig/runtime.svg" &&
  grep -q "batch size (dimension &#39;batch&#39;)" "$T/bsweep/fig/runtime.svg" &&
  grep -q ">seq 16, masked, 1 thread<" "$T/bsweep/fig/runtime.svg" || fail "batch sweep: not one line against the batch"
model_figs grid --sweep batch=1,2 --sweep seq=8,16
[ "$figs" = "memory_b1.svg memory_b2.svg runtime_b1.svg runtime_b2.svg " ] || fail "batch x seq sweep: figures $figs"
fig=$T/grid/fig/runtime_b2.svg
grep -q 'data-points="2"' "$fig" && grep -q "dimension &#39;seq&#39;" "$fig" && grep -q ">batch 2, masked, 1 thread<" "$fig" \
  || fail "batch x seq sweep: runtime_b2 is not seq at batch 2"

# a --model summary beside an attention sweep: a model's rows have no heads, kv heads or head dim,
# and its figures were named after them as -1 (runtime_masked_h-1_kv-1_d-1); only what varies
# among the attention rows names theirs
"$ORTQUAL" plot "$T/bsweep/summary.json" "$bench" --out "$T/mixed" --format svg >"$T/out" 2>"$T/err" ||
  fail "plot of a model beside a sweep: $(cat "$T/err")"
figs=$(ls "$T/mixed" | tr '\n' ' ')
case $figs in *-1*) fail "model beside a sweep: sentinel in the names: $figs" ;; esac
grep -q 'Model runtime' "$T/mixed/runtime_masked_t1.svg" && grep -q '>seq 16, masked, 1 thread; from bsweep<' "$T/mixed/runtime_masked_t1.svg" ||
  fail "model beside a sweep: runtime_masked_t1.svg is not the model's ($figs)"
[ -s "$T/mixed/runtime_masked_t2.svg" ] && [ -s "$T/mixed/runtime_unmasked_t2.svg" ] ||
  fail "model beside a sweep: the sweep's figures are not named by its shape: $figs"

"$ORTQUAL" plot >/dev/null 2>&1; [ $? -eq 2 ] || fail "no input: expected exit 2"
"$ORTQUAL" plot --help | grep -q -- "--baseline VARIANT" || fail "--help lacks --baseline"
echo "plot e2e ok"
