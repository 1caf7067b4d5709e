#!/bin/sh
# The one-off timings of the review mends (docs/results.md): before and after alternated.
set -e
date -u; uptime
for i in 1 2 3 4 5; do ./finite_before; ./finite_after; done
for i in 1 2 3 4 5; do ./fill_before; ./fill_after; done
./parse_time big.onnx 5 3
./parse_time small.onnx 5 200
uptime
