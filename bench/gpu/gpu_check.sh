#!/usr/bin/env bash
# The GPU checks, as one script (a GPU box's time is scarce): the CUDA-only tests, training throughput in fp32
# and bf16 autocast with peak GPU memory, batched vs one-at-a-time beam search, and the main job end to end on
# CUDA (fp32 and bf16). Results go to $OUT (default runs/gpu_check): one log and JSON files (the main job's
# checkpoints go to /tmp). About 8 minutes on one H100/H200 (compiling the captured loss takes ~80 s).
# Usage: bash bench/gpu/gpu_check.sh            (from anywhere; needs torch with CUDA and the package's deps importable)
set -uo pipefail
. "$(dirname "$0")/gpu_common.sh" runs/gpu_check   # OUT, W, step, machine, world
{
machine
step "CUDA tests (tests/test_amp.py, tests/test_captioner_loader.py)"
timeout 120 python3 -m pytest -q -p no:cacheprovider tests/test_amp.py tests/test_captioner_loader.py -rs
world 240
step "training throughput, CUDA fp32 and bf16 (batch 100), and batch 500"
timeout 120 python3 bench/bench_train.py --device cuda --world "$W/vsr_world" --json "$OUT/train_cuda_fp32.json"
timeout 120 python3 bench/bench_train.py --device cuda --world "$W/vsr_world" --amp bf16 --json "$OUT/train_cuda_bf16.json"
timeout 120 python3 bench/bench_train.py --device cuda --world "$W/vsr_world" --batch 500 --json "$OUT/train_cuda_b500.json"
step "XE / SCST steps, eager vs captured (compile_loss / compile_step: inductor + CUDA graphs), batch 100 (issue #17)"
timeout 400 python3 bench/gpu/bench_gpu_capture.py --world "$W/vsr_world" --json "$OUT/gpu_capture.json" --timeout 150
timeout 300 python3 -m pytest -q -p no:cacheprovider tests/test_compile.py -k cuda -rs
step "beam search on CUDA: batched (100) vs one at a time, 500 test captions"
timeout 180 python3 bench/bench_decoding.py --device cuda --world "$W/vsr_world" --items 500 --json "$OUT/decoding_cuda.json"
step "main job on CUDA, default epochs, fp32 (fast CIDEr-D only: no Java / spaCy on this machine)"
timeout 300 python3 -m vsr_cic.captioning --device cuda --data_dir "$W/vsr_world" --out_dir /tmp/gpu_main_fp32 --metrics False --control False --progress False
step "main job on CUDA, bf16 autocast"
timeout 300 python3 -m vsr_cic.captioning --device cuda --data_dir "$W/vsr_world" --out_dir /tmp/gpu_main_bf16 --amp bf16 --metrics False --control False --progress False
for d in main_fp32 main_bf16; do [ -f /tmp/gpu_$d/metrics.json ] && cp /tmp/gpu_$d/metrics.json "$OUT/$d.metrics.json"; done
cp /tmp/gpu_main_fp32/samples.txt "$OUT/main_fp32.samples.txt" 2>/dev/null
step "done in $(( $(date +%s) - t0 )) s"
} 2>&1 | tee "$OUT/gpu_check.log"
