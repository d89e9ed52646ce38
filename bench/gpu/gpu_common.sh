# Sourced by bench/gpu/gpu_check.sh and bench/gpu/gpu_capture_check.sh (not run on its own): the set-up both share.
# `. bench/gpu/gpu_common.sh runs/NAME` goes to the checkout's root, sets OUT (default runs/NAME), PYTHONPATH and
# VSR_CIC_DATA, and W (a world without PNG renders: faster to generate; the models never read the pictures), and
# defines step (a dated heading), machine (GPU, Python, torch, CUDA, bf16) and world SECONDS (the 3,000-image world).
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
OUT=${OUT:-$1}; mkdir -p "$OUT"
export PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}" PYTHONUNBUFFERED=1 VSR_CIC_DATA="${VSR_CIC_DATA:-$PWD/data}"
W="$VSR_CIC_DATA/gpu_world"
t0=$(date +%s)
step() { echo; echo "=== $* ($(date -u +%H:%M:%S))"; }
machine() {
  step machine
  nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader
  python3 -c "import torch,sys; print('python', sys.version.split()[0], 'torch', torch.__version__, 'cuda', torch.version.cuda, torch.cuda.get_device_name(0), 'bf16', torch.cuda.is_bf16_supported())"
}
world() {
  step "world (3,000 images, no renders)"
  timeout "$1" python3 -c "
import time, os; t=time.time()
from vsr_cic.world import ensure_world
p = ensure_world('$W', render=False, n_workers=min(8, os.cpu_count())); print(p, f'{time.time()-t:.1f} s')"
}
