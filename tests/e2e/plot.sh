# ortqual plot end to end: the committed bench and validate fixtures give valid
# PNG and SVG files; bad input exits 2 and writes nothing.
set -u
fail() { echo "FAIL: $*" >&2; exit 1; }
: "${ORTQUAL:?}" "${OQ_SOURCE_DIR:?}"
work=$(mktemp -d /tmp/oq_e2e_plot.XXXXXX)
trap 'rm -rf "$work"' EXIT
bench="$OQ_SOURCE_DIR/tests/fixtures/bench/summary.csv"
val="$OQ_SOURCE_DIR/tests/fixtures/validate/validate.csv"

# --- bench fixture: every figure in both formats, listed on stdout ----------
"$ORTQUAL" plot "$bench" --out "$work/b" >"$work/out" 2>"$work/err" || fail "plot exited $?: $(cat "$work/err")"
for f in runtime memory speedup; do
  for g in masked unmasked; do
    for ext in png svg; do
      p="$work/b/${f}_$g.$ext"
      [ -s "$p" ] || fail "missing $p"
      grep -qx "$p" "$work/out" || fail "$p not printed"
    done
  done
done
[ "$(wc -l <"$work/out")" -eq 14 ] || fail "expected 14 files printed, got: $(cat "$work/out")"
for p in "$work"/b/*.png; do
  [ "$(head -c 8 "$p" | od -An -tx1 | tr -d ' \n')" = 89504e470d0a1a0a ] || fail "$p is not a PNG"
done
for p in "$work"/b/*.svg; do
  grep -q "<svg" "$p" || fail "$p has no <svg"
done
for v in cpu:decomposed:fp32 cpu:attention24:fp32 ref; do
  grep -q "$v" "$work/b/runtime_masked.svg" || fail "legend text $v missing from the SVG"
done
ls "$work/b" | grep -q tmp && fail "temporary files left: $(ls "$work/b")"

# --- options: one format, baseline, statistic, JSON list ---------------------
"$ORTQUAL" plot "$bench" --out "$work/c" --format svg --baseline ref --stat mean --json >"$work/out" \
  || fail "plot --format svg exited $?"
ls "$work/c" | grep -q '\.png$' && fail "--format svg wrote PNG files"
grep -q '"files"' "$work/out" || fail "--json output: $(cat "$work/out")"
grep -q "Speed-up over ref (mean time)" "$work/c/speedup_masked.svg" || fail "baseline/stat not applied"

# --- bench summary.json (results records, extra keys ignored) ---------------
"$ORTQUAL" plot "$OQ_SOURCE_DIR/tests/fixtures/bench/summary.json" --out "$work/j" --format svg >"$work/out" \
  || fail "plot summary.json exited $?"
[ "$(wc -l <"$work/out")" -eq 4 ] || fail "summary.json: expected 4 figures: $(cat "$work/out")"
grep -q "series: cpu:decomposed:fp32 | cpu:attention24:fp32</desc>" "$work/j/runtime.svg" \
  || fail "summary.json: series missing"
printf '{"results": 1}' >"$work/bad.json"

# --- validate fixture, default output directory is the input's --------------
cp "$val" "$work/validate.csv"
"$ORTQUAL" plot "$work/validate.csv" --format png >"$work/out" || fail "validate plot exited $?"
for f in error_last_hidden_state error_pooled runtime_valid_size; do
  [ -s "$work/$f.png" ] || fail "missing $work/$f.png"
done

# --- bad input: exit 2, a message naming the problem, nothing written --------
expect_usage() { # expect_usage WANT-IN-STDERR ARGS...
  want=$1; shift
  rm -rf "$work/bad"
  "$ORTQUAL" plot "$@" --out "$work/bad" >"$work/out" 2>"$work/err"
  rc=$?
  [ $rc -eq 2 ] || fail "plot $*: exit $rc, expected 2"
  grep -qF -- "$want" "$work/err" || fail "plot $*: stderr lacks '$want': $(cat "$work/err")"
  [ ! -e "$work/bad" ] || fail "plot $*: wrote $(ls "$work/bad")"
}
# Column numbers from the header (the fixture has no quoted commas before them).
colno() { head -1 "$bench" | tr , '\n' | grep -nx "$1" | cut -d: -f1; }
p50=$(colno p50_ms) mean=$(colno mean_ms)
awk -F, -v OFS=, -v c="$p50" 'NR == 4 { $c = $c "ms" } NR <= 4' "$bench" >"$work/badnum.csv"
bad=$(sed -n 4p "$work/badnum.csv" | cut -d, -f"$p50")
case $bad in *ms) ;; *) fail "fixture edit did not apply: $bad" ;; esac
expect_usage "badnum.csv:4: column 'p50_ms': '$bad' is not a number" "$work/badnum.csv"
cut -d, -f"1-$((mean - 1)),$((mean + 1))-" "$bench" >"$work/nocol.csv"
expect_usage "nocol.csv: no column 'mean_ms' in the header" "$work/nocol.csv" --stat mean
printf 'variant,status\n"unclosed,ok\n' >"$work/quote.csv"
expect_usage "quote.csv:2: field 1: quoted field never closed" "$work/quote.csv"
grep -v ',ok,' "$bench" >"$work/nook.csv"
expect_usage 'no bench rows with status "ok" to plot' "$work/nook.csv"
expect_usage "baseline 'gpu' is not a variant" "$bench" --baseline gpu
expect_usage "cannot open" "$work/missing.csv"
expect_usage 'bad.json: no "results" array of records' "$work/bad.json"
expect_usage "unknown option '--bogus'" "$bench" --bogus
expect_usage "unknown format 'pdf'" "$bench" --format pdf
expect_usage "unknown statistic 'p42'" "$bench" --stat p42
# --- no cairo driver: exit 3, the install hint, nothing written ---------------
# PLplot finds its drivers through PLPLOT_DRV_DIR: an empty one (PLplot would
# otherwise exit the process itself), and one with drivers but not cairo's.
expect_no_driver() { # expect_no_driver DRVDIR FORMAT
  rm -rf "$work/bad"
  PLPLOT_DRV_DIR="$1" "$ORTQUAL" plot "$bench" --out "$work/bad" --format "$2" >"$work/out" 2>"$work/err"
  rc=$?
  [ $rc -eq 3 ] || fail "driver dir $1: exit $rc, expected 3: $(cat "$work/err")"
  grep -qF "PLplot driver ${2}cairo not available: install plplot-driver-cairo" "$work/err" \
    || fail "driver dir $1: $(cat "$work/err")"
  [ ! -e "$work/bad" ] || fail "driver dir $1: wrote $(ls "$work/bad")"
}
mkdir "$work/nodrivers"
expect_no_driver "$work/nodrivers" png
drvdir=$(pkg-config --variable=drvdir plplot 2>/dev/null)
if [ -n "$drvdir" ] && [ -e "$drvdir/null.driver_info" ]; then
  mkdir "$work/nocairo"
  cp "$drvdir"/null.* "$work/nocairo/"
  expect_no_driver "$work/nocairo" svg
fi

"$ORTQUAL" plot >/dev/null 2>&1; [ $? -eq 2 ] || fail "no input: expected exit 2"
"$ORTQUAL" plot --help | grep -q -- "--baseline VARIANT" || fail "--help lacks --baseline"
echo "plot e2e ok"
