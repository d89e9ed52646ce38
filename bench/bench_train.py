"""Training throughput on CPU: captions per second of XE steps and of self-critical (SCST) steps.

The main job's configuration (`vsr_cic.captioning`: RoleShiftCaptioner 'ours', hidden 128, verb_shift
'one_word', batch 100, Adam, 1 torch thread, verb constraint on, one sample per caption + greedy baseline,
CIDEr-D reward on token ids with df cached from the training references) on the built-in world. Each step
includes collating the batch from the dataset (in-memory feature cache), forward, backward and the optimiser
step. Peak memory: this process's maximum resident set (ru_maxrss) after each stage; the XE-stage figure is
taken before any SCST step; on CUDA also the peak GPU memory (torch.cuda.max_memory_allocated). `--amp bf16`
runs the steps under bfloat16 autocast (as `fit(amp='bf16')`). `bench/gpu/gpu_check.sh` runs this on a GPU.
`--compile` captures the decoder step (`compile_step`; on CUDA inductor + CUDA graphs; warm-up steps include compiling).
Usage: python bench/bench_train.py [--quick] [--world PATH] [--device cuda] [--amp bf16] [--batch 100] [--compile]
"""
from __future__ import annotations
import argparse, sys, time
from pathlib import Path
sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import peak_rss_mb, table

BATCH, XE_STEPS, SCST_STEPS, QUICK_STEPS, WARMUP = 100, 20, 8, 2, 1

def setup(world=None, device='cpu', threads:int=1, compile:bool=False, width:int=128):
    import torch
    from vsr_cic.world import ensure_world
    from vsr_cic.captioning import caption_data
    from vsr_cic.baselines import make_captioner
    torch.set_num_threads(threads); torch.manual_seed(0)
    t0 = time.perf_counter(); cd = caption_data(Path(world) if world else ensure_world(), verb_one_word=True); t_load = time.perf_counter() - t0
    net = make_captioner('ours', cd.vocab_size, cd.feat_dim, hidden=width, emb=width, att=width, verb_shift='one_word').to(device)
    if compile:                                                  # the captured step (CUDA: inductor + CUDA graphs)
        from vsr_cic.fast_captioner import compile_step
        compile_step(net)
    return cd, net, t_load

def _batches(ds, n, seed=0, batch:int=BATCH):
    import torch
    g = torch.Generator().manual_seed(seed)
    for _ in range(n): yield ds.collate([ds[i] for i in torch.randint(len(ds), (batch,), generator=g).tolist()])

def time_steps(step, opt, ds, n, warmup=WARMUP, sync=lambda: None, amp=None, device='cpu', batch:int=BATCH)->float:
    "Seconds per step (collate included), after `warmup` untimed steps"
    from vsr_cic.train import autocast_for
    for i, b in enumerate(_batches(ds, n + warmup, batch=batch)):
        if i == warmup: sync(); t0 = time.perf_counter()
        with autocast_for(amp, torch_device_type(device)): loss = step(b)['loss']
        opt.zero_grad(); loss.backward(); opt.step()
    sync(); return (time.perf_counter() - t0) / n

def torch_device_type(device)->str: return str(device).split(':')[0]

def gpu_peak_mb(device)->float|None:
    import torch
    return torch.cuda.max_memory_allocated() / 2**20 if torch_device_type(device) == 'cuda' else None

def run(quick:bool=False, world=None, device='cpu', amp:str|None=None, batch:int|None=None, compile:bool=False)->dict:
    import torch
    from vsr_cic.captioning import xe_step_fn, scst_step_fn, CiderReward
    batch = batch or BATCH
    cd, net, t_load = setup(world, device, compile=compile)
    cuda = torch_device_type(device) == 'cuda'
    sync = torch.cuda.synchronize if cuda else (lambda: None)
    tr = cd.splits['train']; rss0 = peak_rss_mb()
    opt = torch.optim.Adam(net.parameters(), 5e-4); net.train()
    if cuda: torch.cuda.reset_peak_memory_stats()
    kw = dict(sync=sync, amp=amp, device=device, batch=batch, warmup=3 if compile else WARMUP)   # compiling: train + eval graphs
    t_xe = time_steps(xe_step_fn(net, device), opt, tr, QUICK_STEPS if quick else XE_STEPS, **kw); rss_xe, gpu_xe = peak_rss_mb(), gpu_peak_mb(device)
    t0 = time.perf_counter(); reward = CiderReward(tr, net.eos_id); t_df = time.perf_counter() - t0
    opt = torch.optim.Adam(net.parameters(), 5e-5)
    if cuda: torch.cuda.reset_peak_memory_stats()
    t_rl = time_steps(scst_step_fn(net, reward, device, cd.max_len, n=1, cd=cd, constrain=True), opt, tr,
                      QUICK_STEPS if quick else SCST_STEPS, **kw); rss_rl, gpu_rl = peak_rss_mb(), gpu_peak_mb(device)
    rows = [dict(stage='XE', device=str(device), amp=amp, batch=batch, steps=QUICK_STEPS if quick else XE_STEPS, s_per_step=t_xe, captions_per_s=batch / t_xe,
                 epoch_s=len(tr) / batch * t_xe, peak_rss_mb=rss_xe, peak_gpu_mb=gpu_xe),
            dict(stage='SCST', device=str(device), amp=amp, batch=batch, steps=QUICK_STEPS if quick else SCST_STEPS, s_per_step=t_rl, captions_per_s=batch / t_rl,
                 epoch_s=len(tr) / batch * t_rl, peak_rss_mb=rss_rl, peak_gpu_mb=gpu_rl)]
    return {'rows': rows, 'xe_captions_per_s': batch / t_xe, 'scst_captions_per_s': batch / t_rl, 'train_peak_rss_mb': rss_rl,
            'train_rss_before_mb': rss0, 'train_data_load_s': t_load, 'reward_df_build_s': t_df, 'train_captions': len(tr),
            'gpu': 'measured' if cuda else ('CUDA available but not measured' if torch.cuda.is_available() else 'not lent in this session (no CUDA)')}

if __name__ == '__main__':
    ap = argparse.ArgumentParser(); ap.add_argument('--quick', action='store_true'); ap.add_argument('--world')
    ap.add_argument('--device', default='cpu'); ap.add_argument('--amp', default=None, choices=[None, 'bf16', 'auto'])
    ap.add_argument('--batch', type=int, default=None); ap.add_argument('--json', default=None, help='also write the result here')
    ap.add_argument('--compile', action='store_true', help='compile the decoder step (vsr_cic.fast_captioner.compile_step)')
    a = ap.parse_args()
    r = run(a.quick, a.world, a.device, a.amp, a.batch, a.compile)
    print(table(f"Training throughput on {a.device} (batch {r['rows'][0]['batch']}, hidden 128, amp {a.amp})", r['rows'])); print('GPU:', r['gpu'])
    if a.json:
        from common import dump, machine
        dump({**r, 'machine': machine()}, a.json)
