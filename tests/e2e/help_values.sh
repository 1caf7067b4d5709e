#!/usr/bin/env bash
# An option whose help lists its values ("--export encoder|sdpa", "--mask M  auto | none | ...")
# takes exactly those: each value listed is taken, and a value outside them is refused with the
# same list (export sdpa's help left out --mask none, which its parser took).
set -uo pipefail
: "${ORTQUAL:?}"
. "$OQ_SOURCE_DIR/tests/e2e/lib/common.sh"
Q=$ORTQUAL
FX="$OQ_SOURCE_DIR/tests/fixtures/torch/tx_encoder"
cd "$T"

W='[A-Za-z0-9_.-]+' # a value
# help_values OPT < HELP: the values the help lists for --OPT ("--OPT a|b" in the usage or the
# option's line, else "a | b | c" opening its help), sorted, one per line
help_values() {
    local text re="--$1[ =]($W(\\|$W)+)"
    text=$(cat)
    if [[ $text =~ $re ]]; then
        tr '|' '\n' <<<"${BASH_REMATCH[1]}" | sort
        return
    fi
    grep -m1 -E -- "^ +(-[a-z], )?--$1 [^ ]+ +$W( \\| $W)+" <<<"$text" |
        sed -E "s/^ +(-[a-z], )?--$1 [^ ]+ +//; s/^($W( \\| $W)+).*/\\1/; s/ \\| /\\n/g" | sort
}

# refused_values < STDERR: the values a refusal of 'zzbogus' lists ("is not a, b or c",
# "want a, b or c", "use a, b or c", "(a, b, c)"), sorted, one per line
refused_values() {
    grep -m1 "'zzbogus'" | sed -E "s/.*'zzbogus'[: ]*(is not |want |use )?//; s/^\\(//; s/\\)$//; s/ or /, /g; s/, /\\n/g" |
        sed '/^$/d' | sort
}

# check OPT "CMD WORDS" "AFTER WORDS": `ortqual CMD --OPT VALUE AFTER`, VALUE each one the help of
# CMD lists for --OPT (taken: no refusal naming --OPT and the value), then one it does not (refused
# with the help's list)
check() {
    local opt=$1 cmd=$2 after=$3 v listed refused
    # shellcheck disable=SC2086 # the words are split on purpose
    listed=$($Q $cmd --help 2>&1 | help_values "$opt")
    [ -n "$listed" ] || { bad "$cmd --$opt: its help lists no values"; return; }
    # shellcheck disable=SC2086
    refused=$($Q $cmd --"$opt" zzbogus ${after//VALUE/zzbogus} 2>&1 >/dev/null | refused_values)
    if [ "$listed" = "$refused" ]; then
        ok "$cmd --$opt: help and refusal list $(tr '\n' ' ' <<<"$listed")"
    else
        bad "$cmd --$opt: the help lists $(tr '\n' ' ' <<<"$listed")but a refusal $(tr '\n' ' ' <<<"$refused")"
    fi
    for v in $listed; do
        # shellcheck disable=SC2086
        if $Q $cmd --"$opt" "$v" ${after//VALUE/$v} 2>&1 >/dev/null | grep -qE -- "--$opt.*'$v'"; then
            bad "$cmd --$opt $v: listed by the help, refused"
        else
            ok "$cmd --$opt $v: taken"
        fi
    done
}

# options checked while the options are parsed: --help after them stops before any work
for o in export elu mask-form padding shard-by; do check "$o" validate --help; done
for o in padding shard-by; do check "$o" replay --help; done
for o in modes export-shapes io-binding; do check "$o" bench --help; done
check stat plot --help
for o in format mask attention-dtype io-dtype; do check "$o" "export sdpa" --help; done
for o in format mask attention-dtype elu; do check "$o" "export encoder" --help; done
check shard-by slurm --help
# options checked after them: the command runs
check reference "replay --model $FX/tx_encoder_op18.onnx --inputs $FX/io.npz --repeat 1 --warmup 0" "--outdir $T/r-VALUE"
check attention-dtype "convert $FX/tx_encoder_op18.onnx" "-o $T/c-VALUE.onnx"
# a default the help states is the one the run takes (replay's said fp32 where it took fp16)
$Q replay --help 2>&1 | grep -A2 -E -- '^ +--precision ' | tr -s ' \n' ' ' |
    grep -qE 'default: fp16 or bf16 when the model computes in it, else fp32' &&
    ok "replay --help: --precision's default as the run takes it" || bad "replay --help: --precision's default: $($Q replay --help 2>&1 | grep -A2 -E -- '^ +--precision ')"
# --no-overlap says what the run does (validate.c's reference_overlaps, unit/test_overlap): the
# reference runs before the first configuration under test; beside it only with a cache entry for
# every batch (read, verified, one found bad recomputed) and a core left free. Its help said
# "are in the cache" and "reads them before it", as if the option were about reading.
h=$($Q validate --help 2>&1 | sed -n '/^ *--no-overlap /,/^ *--no-plots /p' | tr -s ' \n' ' ')
for want in 'run the reference before the first configuration under test, never beside it' \
    'when the cache has an entry for every batch' 'recomputes one found bad' 'leaves a core free' \
    'never in a shard or without isolation'; do
    grep -qF -- "$want" <<<"$h" && ok "validate --help: --no-overlap says '$want'" ||
        bad "validate --help: --no-overlap does not say '$want': $h"
done
report
