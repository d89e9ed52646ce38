"""The main job's training steps on a GPU, eager vs captured (issue #17: a time loop that is not launch-bound).

Model and data as `bench_train.py` (RoleShiftCaptioner 'ours', hidden 128, verb_shift 'one_word', batch 100, Adam;
SCST: one sample + greedy baseline, CIDEr-D reward, verb constraint). Batches are collated before the clock starts
(as `num_workers` loader processes do during training); moving them to the device, densifying and padding are
timed. The collate time per batch on one CPU core is printed too, so the number of loader workers a captured step
needs is visible. Variants:
  xe_eager     `model.loss` as it is (the default path)
  xe_capture   `compile_loss`: the whole XE loss as one forward + one backward CUDA graph, inputs `pad_inputs`-ed
  scst_eager   `scst_step_fn` as it is
  scst_cstep   `compile_step` (each decoding step one CUDA graph), control inputs padded to one shape
  scst_capture `scst_step_fn(capture=True)`: `CapturedRollouts`, the greedy rollout one CUDA graph, the sampled
               rollout one forward + one backward graph (Gumbel-max draws), control inputs padded to one shape
  beam5        eval: beam search (k = 5) of 100-caption batches, eager (captions/s)
`--width 512` gives the paper's width (hidden = embeddings = attention = 512) instead of the main job's 128.
Each variant runs in its own process (`--variant`), so compile caches and CUDA graphs do not leak between them.
Usage: python bench/gpu/bench_gpu_capture.py [--variants xe_eager,xe_capture,...] [--width 128] [--world PATH] [--json FILE] [--quick]
"""
from __future__ import annotations
import argparse, json, subprocess, sys, time
from pathlib import Path
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))   # bench/: bench_train, common

VARIANTS = ('xe_eager', 'xe_capture', 'scst_eager', 'scst_cstep', 'scst_capture', 'beam5')

def run_variant(v:str, world=None, device='cuda', quick:bool=False, width:int=128)->dict:
    import torch
    import bench_train as bt
    import vsr_cic.captioning as C
    from vsr_cic.captioner import caption_inputs
    from vsr_cic.fast_captioner import compile_loss, compile_step, pad_inputs
    n, warm = (2, 1) if quick else (20, 3)
    cuda = device == 'cuda'
    sync = torch.cuda.synchronize if cuda else (lambda: None)
    cd, net, _ = bt.setup(world, device, width=width)
    tr = cd.splits['train']
    t0 = time.perf_counter(); cpu = list(bt._batches(tr, n + warm)); t_coll = (time.perf_counter() - t0) / (n + warm)
    K = max(b['region_idx'].shape[1] for b in cpu); R = max(b['region_idx'].shape[2] for b in cpu); T = cd.max_len + 2
    capture = v.endswith('capture') or v.endswith('cstep')
    backend = 'inductor' if cuda else 'aot_eager'
    if capture and v.startswith('xe'): compile_loss(net, backend=backend)
    if v == 'scst_cstep': compile_step(net, backend=backend)
    if v == 'beam5': return _beam_variant(cd, net, cpu, n, warm, sync, cuda, width)
    opt = torch.optim.Adam(net.parameters(), 5e-4 if v.startswith('xe') else 5e-5)
    net.train()
    if v.startswith('xe'):   # as `xe_step_fn(net, device, (K, R, T))` without its two `.item()` log reads per step
        def step(cb):
            x = caption_inputs(C.prepare_batch(cb, device))
            return net.loss(**(pad_inputs(x, K, R, T) if capture else x))
    else:                    # captured: the controls padded to one shape for every decoding step
        step = C.scst_step_fn(net, C.CiderReward(tr, net.eos_id), device, cd.max_len, n=1, cd=cd, constrain=True,
                              shape=(K, R) if capture else None, capture=v == 'scst_capture')
    tw = time.perf_counter()
    for i, cb in enumerate(cpu):
        if i == warm: sync(); t_warm = time.perf_counter() - tw; t0 = time.perf_counter()
        loss = step(cb)['loss']; opt.zero_grad(); loss.backward(); opt.step()
    sync(); s = (time.perf_counter() - t0) / n
    return dict(variant=v, device=torch.cuda.get_device_name(0) if cuda else 'cpu', torch=torch.__version__, batch=100,
                width=width, steps=n, s_per_step=s, captions_per_s=100 / s, warmup_s=t_warm, collate_s_per_batch=t_coll,
                shape=dict(K=K, R=R, T=T), last_loss=float(loss),
                peak_gpu_mb=torch.cuda.max_memory_allocated() / 2**20 if cuda else None)

def _beam_variant(cd, net, cpu, n, warm, sync, cuda, width)->dict:
    "Beam search (k = 5, the paper's) over the collated batches' controls, eval mode: captions/s"
    import torch
    import vsr_cic.captioning as C
    from vsr_cic.decoding import beam_search
    net.eval()
    with torch.no_grad():
        for i, cb in enumerate(cpu):
            if i == warm: sync(); t0 = time.perf_counter()
            ctl = C.controls_of(C.prepare_batch(cb, 'cuda' if cuda else 'cpu'), net, cd, True)
            beam_search(net, beam_size=5, max_len=cd.max_len, **ctl)
    sync(); s = (time.perf_counter() - t0) / n
    return dict(variant='beam5', device=torch.cuda.get_device_name(0) if cuda else 'cpu', torch=torch.__version__,
                batch=100, width=width, steps=n, s_per_step=s, captions_per_s=100 / s,
                peak_gpu_mb=torch.cuda.max_memory_allocated() / 2**20 if cuda else None)

if __name__ == '__main__':
    ap = argparse.ArgumentParser()
    ap.add_argument('--variants', default=','.join(VARIANTS)); ap.add_argument('--variant', help='(internal) one variant, in this process')
    ap.add_argument('--world'); ap.add_argument('--device', default='cuda'); ap.add_argument('--json')
    ap.add_argument('--quick', action='store_true'); ap.add_argument('--timeout', type=int, default=240)
    ap.add_argument('--width', type=int, default=128, help='hidden = embedding = attention width (paper: 512)')
    a = ap.parse_args()
    if a.variant:
        print(json.dumps(run_variant(a.variant, a.world, a.device, a.quick, a.width))); sys.exit()
    rows = []
    for v in a.variants.split(','):
        if v not in VARIANTS: sys.exit(f"unknown variant {v!r}; choose from {VARIANTS}")
        cmd = [sys.executable, __file__, '--variant', v, '--device', a.device, '--width', str(a.width)] + (['--world', a.world] if a.world else []) + (['--quick'] if a.quick else [])
        try: p = subprocess.run(cmd, capture_output=True, text=True, timeout=a.timeout)
        except subprocess.TimeoutExpired: print(f"{v}: over {a.timeout} s"); continue
        line = next((l for l in reversed(p.stdout.splitlines()) if l.startswith('{')), None)
        if p.returncode or line is None: print(f"{v}: failed\n{p.stderr[-2000:]}"); continue
        rows.append(json.loads(line)); print(line, flush=True)
    base = {r['variant'][:2]: r for r in rows if r['variant'].endswith('eager')}
    for r in rows:
        b = base.get(r['variant'][:2]) if r['variant'] != 'beam5' else None
        if b and r is not b: print(f"{r['variant']}: {r['captions_per_s'] / b['captions_per_s']:.2f}x {b['variant']} ({r['captions_per_s']:.0f} vs {b['captions_per_s']:.0f} captions/s)")
    if a.json: Path(a.json).write_text(json.dumps(rows, indent=1))
