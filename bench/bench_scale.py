"""How costs grow with the dataset: 1x, 4x, 16x the built-in world's default size (3,000 images).

Worlds are generated with `generate_world(n_images=3000*s, seed=0, render=False)` (no pictures: features
only) into runs/bench_cache/worlds and reused; the generation time is measured when a world is made and stored
beside it (re-runs report the stored figure). Each size is then measured in a fresh subprocess, so its peak
memory is its own: loading (`caption_data`: captions, vocabulary, the per-split datasets), a fixed LOADER_BATCHES
batches of the caption loader (cache, 0 workers: the first pass reads the HDF5 file) and a fixed XE_STEPS XE
steps (batch 100, hidden 128, 1 thread). Epoch time = measured seconds per step x steps per epoch (an
extrapolation: a 16x epoch is not run). Peak RSS = ru_maxrss of the subprocess.
Usage: python bench/bench_scale.py [--quick] [--scales 1,4,16]
"""
from __future__ import annotations
import argparse, json, os, subprocess, sys, time
from pathlib import Path
sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import CACHE, table

BASE_IMAGES, QUICK_BASE = 3000, 40
LOADER_BATCHES, XE_STEPS, QUICK_STEPS = 10, 5, 2

def world(n_images:int)->tuple[Path, float, bool]:
    "A generated world of n_images (cached), its generation seconds and whether it was made now"
    from vsr_cic.world import generate_world
    from vsr_cic.scenes import WORLD_VERSION
    p = CACHE/'worlds'/f'n{n_images}_v{WORLD_VERSION}'; f = p/'bench_generation.json'   # a new world version: generated again
    if f.exists(): return p, json.loads(f.read_text())['seconds'], False
    t0 = time.perf_counter(); generate_world(p, n_images=n_images, seed=0, render=False); dt = time.perf_counter() - t0
    f.write_text(json.dumps({'seconds': dt, 'n_images': n_images, 'time_utc': time.strftime('%Y-%m-%d %H:%M:%S', time.gmtime())}))
    return p, dt, True

def measure(path:str, steps:int)->dict:
    "Runs in the subprocess: load, loader batches, XE steps, peak memory"
    import torch
    from common import peak_rss_mb
    from bench_train import setup, time_steps
    from bench_loader import samples_per_s
    from vsr_cic.captioning import xe_step_fn
    cd, net, t_load = setup(path); rss_load = peak_rss_mb(); tr = cd.splits['train']
    ld = samples_per_s(path, 2 if steps <= QUICK_STEPS else LOADER_BATCHES, vocab=cd.vocab, cache=True)
    opt = torch.optim.Adam(net.parameters(), 5e-4); net.train()
    t_step = time_steps(xe_step_fn(net, 'cpu'), opt, tr, steps)
    feat_mb = (Path(path)/'features.hdf5').stat().st_size / 2**20
    return dict(train_captions=len(tr), features_mb=feat_mb, load_s=t_load, rss_after_load_mb=rss_load,
                loader_samples_per_s=ld['samples_per_s'], xe_s_per_step=t_step, xe_epoch_s=len(tr) / 100 * t_step, peak_rss_mb=peak_rss_mb())

def run(quick:bool=False, scales=(1, 4, 16))->dict:
    base = QUICK_BASE if quick else BASE_IMAGES
    rows = []
    for s in scales:
        p, t_gen, fresh = world(base * s)
        if quick:                                              # smoke run: in this interpreter (no start-up; memory shared)
            rows.append(dict(scale=f'{s}x', images=base * s, generate_s=t_gen, generated_now=fresh, **measure(str(p), QUICK_STEPS))); continue
        code = (f"import sys, json; sys.path.insert(0, {str(Path(__file__).parent)!r}); from bench_scale import measure; "
                f"print('RESULT', json.dumps(measure({str(p)!r}, {QUICK_STEPS if quick else XE_STEPS})))")
        out = subprocess.run([sys.executable, '-c', code], capture_output=True, text=True, env={**os.environ, 'PYTHONWARNINGS': 'ignore'})
        line = [l for l in out.stdout.splitlines() if l.startswith('RESULT ')]
        if out.returncode or not line: raise RuntimeError(f"bench_scale: size {base * s} failed:\n{out.stderr[-2000:]}")
        rows.append(dict(scale=f'{s}x', images=base * s, generate_s=t_gen, generated_now=fresh, **json.loads(line[0][7:])))
    return {'rows': rows, 'scale_base_images': base}

if __name__ == '__main__':
    ap = argparse.ArgumentParser(); ap.add_argument('--quick', action='store_true'); ap.add_argument('--scales', default='1,4,16'); a = ap.parse_args()
    r = run(a.quick, tuple(int(x) for x in a.scales.split(',')))
    print(table(f"Scaling with dataset size (1x = {r['scale_base_images']} images)", r['rows']))
