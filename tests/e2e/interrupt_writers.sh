#!/usr/bin/env bash
# A signal while a command writes a file (export's model, convert's, a figure of plot) leaves no
# "<file>.tmp.XXXXXX" behind and ends the command by the signal (130, 143, 129): every writer
# holds its temporary where the signal handler removes it (docs/reliability.md, "Interruption").
# They left 23-52 MB temporaries. libslow_rename.so holds the command as it puts the file into
# place, with its temporary written whole: the window in which the signal is sent.
set -uo pipefail
. "$OQ_SOURCE_DIR/tests/e2e/lib/common.sh"
Q=$ORTQUAL
F="$OQ_SOURCE_DIR/tests/fixtures/torch"
PRE="$OQ_BINARY_DIR/tests/libslow_rename.so"
grep -q '^ORTQUAL_SANITIZE:BOOL=ON' "$OQ_BINARY_DIR/CMakeCache.txt" && PRE="$(gcc -print-file-name=libasan.so) $PRE"
cd "$T"

# held SIG CODE DIR SUFFIX ARGS...: ortqual ARGS, held as it puts the file ending in SUFFIX into
# place, gets SIG: it must end with CODE, its temporary there while held and gone after
held() {
    local sig=$1 code=$2 dir=$3 suffix=$4 rc=0 pid
    shift 4
    rm -rf "$dir" mark && mkdir -p "$dir"
    set -m # a background job of a script ignores SIGINT otherwise (and so would ortqual)
    OQ_SLOW_RENAME=$suffix OQ_SLOW_RENAME_MARK="$T/mark" LD_PRELOAD="$PRE" $Q "$@" >"$dir.log" 2>&1 &
    pid=$!
    set +m
    for _ in $(seq 600); do [ -e mark ] && break; sleep 0.1; done
    if [ ! -e mark ]; then
        kill -9 $pid
        bad "$* (SIG$sig): never held at $suffix: $(tail -3 "$dir.log")"
        return
    fi
    local tmp
    tmp=$(find "$dir" -name '*.tmp.*')
    kill -"$sig" $pid
    wait $pid || rc=$?
    local left
    for _ in $(seq 50); do # a figure's own process ends by the SIGTERM its parent's end sends it
        left=$(find "$dir" -name '*.tmp.*')
        [ -z "$left" ] && break
        sleep 0.1
    done
    if [ -z "$tmp" ]; then bad "$* (SIG$sig): no temporary while held"
    elif [ "$rc" -ne "$code" ]; then bad "$* (SIG$sig): exit $rc, expected $code: $(tail -3 "$dir.log")"
    elif [ -n "$left" ]; then bad "$* (SIG$sig): left $left"
    else ok "$* (SIG$sig): $code, $(basename "$tmp") removed"; fi
}

held TERM 143 ex /big.onnx export encoder --width 128 --layers 4 --ffn-width 512 --heads 8 -o ex/big.onnx
held INT 130 ex /big.onnx export encoder --width 64 --layers 2 -o ex/big.onnx
held HUP 129 ex /big.onnx export encoder --width 64 --layers 2 -o ex/big.onnx
held TERM 143 conv /c.onnx convert "$F/mlpf_like/mlpf_like_op23.onnx" -o conv/c.onnx --expand-mask
held INT 130 conv /c.onnx convert "$F/mlpf_like/mlpf_like_op23.onnx" -o conv/c.onnx --expand-mask
# the figures are drawn in a child process: it removes its own temporary when the parent ends
$Q validate --configs ref:encoder:fp64,cpu:attention24:fp32 --num-events 4 --batch-size 2 --repeat 1 --no-cache \
    --no-plots --progress never --outdir v >v.log 2>&1 || fail "validate: $(tail -3 v.log)"
held TERM 143 figs /error_cls.png plot v/summary.json --out figs
held INT 130 figs /error_cls.png plot v/summary.json --out figs

# a signal that was ignored when ortqual started (nohup) stays ignored: the file is written
rm -f mark
OQ_SLOW_RENAME=/n.onnx OQ_SLOW_RENAME_MARK="$T/mark" LD_PRELOAD="$PRE" nohup $Q export sdpa -o "$T/n.onnx" >nohup.log 2>&1 &
pid=$!
for _ in $(seq 600); do [ -e mark ] && break; sleep 0.1; done
kill -HUP $pid
rc=0
wait $pid || rc=$?
[ -e mark ] && [ "$rc" -eq 0 ] && [ -s n.onnx ] && ok "SIGHUP under nohup: ignored, written" || bad "SIGHUP under nohup: exit $rc: $(cat nohup.log)"
report
