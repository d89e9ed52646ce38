#!/usr/bin/env bash
# Issue #17's GPU check in one short script (a lent GPU's minutes are few): the CUDA agreement tests of the captured
# SCST rollouts, the SCST / XE steps eager vs captured at the main job's width (128) and the paper's (512) with
# beam-5 decoding, and the main job end to end with --capture (1 XE + 1 SCST epoch). Results: $OUT (default
# runs/gpu_capture_check). About 7 minutes on one H200 (5 with SKIP_XE512_CAPTURE=1, which skips the slowest compile).
# Usage: [SKIP_XE512_CAPTURE=1] bash bench/gpu/gpu_capture_check.sh
set -uo pipefail
. "$(dirname "$0")/gpu_common.sh" runs/gpu_capture_check   # OUT, W, step, machine, world
{
machine
world 200
step "CUDA tests: captured vs eager (CapturedRollouts words, SCST loss, gradients, fresh dropout per replay; compile_loss / compile_step), AMP, loader"
timeout 180 python3 -m pytest -q -p no:cacheprovider tests/test_compile.py tests/test_amp.py tests/test_captioner_loader.py -k "cuda or rollouts or dropout" -rs
step "width 128 (main job): SCST eager / captured rollouts, XE eager"
timeout 200 python3 bench/gpu/bench_gpu_capture.py --world "$W/vsr_world" --variants scst_eager,scst_capture,xe_eager --json "$OUT/w128.json" --timeout 90
step "width 512 (paper): XE eager, SCST eager / captured rollouts, beam 5"
timeout 200 python3 bench/gpu/bench_gpu_capture.py --world "$W/vsr_world" --width 512 --variants xe_eager,scst_eager,scst_capture,beam5 --json "$OUT/w512.json" --timeout 90
step "main job end to end with --capture (1 XE epoch, 1 SCST epoch; fast CIDEr-D only)"
timeout 240 python3 -m vsr_cic.captioning --device cuda --capture True --epochs_xe 1 --epochs_rl 1 --data_dir "$W/vsr_world" --out_dir /tmp/gpu_main_capture --metrics False --control False --progress False
[ -f /tmp/gpu_main_capture/metrics.json ] && cp /tmp/gpu_main_capture/metrics.json "$OUT/main_capture.metrics.json"
if [ "${SKIP_XE512_CAPTURE:-0}" != 1 ]; then
step "width 512: XE captured loss (compiles ~80 s)"
timeout 150 python3 bench/gpu/bench_gpu_capture.py --world "$W/vsr_world" --width 512 --variants xe_capture --json "$OUT/w512_xe_capture.json" --timeout 140
fi
step "done in $(( $(date +%s) - t0 )) s"
} 2>&1 | tee "$OUT/gpu_capture_check.log"
