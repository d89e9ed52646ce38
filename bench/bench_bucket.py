"""Bucketing (batches of captions of similar length) against a plain shuffle: seconds per XE step, and the epoch.

The captioner pads every batch to its longest caption and runs one decoder step per padded position, so a random batch
of real captions is about half padding. `EpochBatchSampler(lengths=…)` (`bucket=True` in `train_captioner`) sorts
pools of `--pool` batches by length before cutting them. This script draws the first `--steps` batches of epoch 0 from
both samplers (seed 0), then times the same model's XE steps (`xe_step_fn`) on each, alternating the two twice and
keeping each one's faster pass (the machine may be shared). The model is untrained, which an XE step does not care
about; a self-critical step does (an untrained model's rollouts run to the cap), so it is timed on trained models by
`bench_vs_peer.py`, not here (this script's SCST column, retired on 2026-12-01, timed 55-step rollouts no run makes).
Each step includes collating the batch. Padded length: the mean over the epoch's batches of their longest caption, in tokens.

Usage: python bench/bench_bucket.py [DATA] [--models ours c_updn] [--steps 20] [--batch 64] [--json PATH] [--quick]
DATA: a dataset folder (canonical format; e.g. a real-language run's `runs/rl/data/train`); default: the built-in world.
"""
from __future__ import annotations
import argparse, sys, time
from pathlib import Path
sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import table

def _time(step, opt, batches)->float:
    "Seconds per step over `batches` (collate included)"
    t0 = time.perf_counter()
    for b in batches:
        loss = step(b())['loss']
        opt.zero_grad(); loss.backward(); opt.step()
    return (time.perf_counter() - t0) / len(batches)

def run(data=None, models=('ours', 'c_updn'), steps:int=20, batch:int=64, pool:int=50)->dict:
    import numpy as np, torch
    from vsr_cic.world import ensure_world
    from vsr_cic.captioning import caption_data, xe_step_fn, TRAIN_UNGROUNDED
    from vsr_cic.baselines import make_captioner
    from vsr_cic.train import EpochBatchSampler
    torch.set_num_threads(1); torch.manual_seed(0)
    cd = caption_data(Path(data) if data else ensure_world(), splits=('train',), verb_one_word=True, ungrounded=TRAIN_UNGROUNDED,
                      min_freq=5 if data else 1)
    tr = cd.splits['train']; L = [len(ex['words']) for ex in tr.examples]
    samplers = {'plain': EpochBatchSampler(len(tr), batch, seed=0),
                'bucket': EpochBatchSampler(len(tr), batch, seed=0, lengths=L, pool=pool)}
    every = {k: s.batches(0) for k, s in samplers.items()}
    padded = {k: float(np.mean([max(L[i] for i in b) for b in v])) for k, v in every.items()}   # over the whole epoch
    idx = {k: v[:steps] for k, v in every.items()}
    rows = []
    for m in models:
        roles = {} if m in ('c_lstm', 'c_updn', 'sct') else {'use_roles': False}
        net = make_captioner(m, cd.vocab_size, cd.feat_dim, hidden=128, emb=128, att=128, dropout=0.3, verb_shift='one_word',
                             precompute=True, **roles)
        opt = torch.optim.Adam(net.parameters(), 3e-4)
        fns = {'XE': (xe_step_fn(net, 'cpu'), steps)}
        for stage, (fn, n) in fns.items():
            best = {}
            for _ in range(2):
                for k in ('plain', 'bucket'):
                    bs = [(lambda b=b: tr.collate([tr[i] for i in b])) for b in idx[k][:n]]
                    best[k] = min(best.get(k, float('inf')), _time(fn, opt, bs))
            rows.append(dict(model=m, stage=stage, s_per_step_plain=best['plain'], s_per_step_bucket=best['bucket'],
                             speedup=best['plain'] / best['bucket'],
                             epoch_s_plain=len(tr) / batch * best['plain'], epoch_s_bucket=len(tr) / batch * best['bucket']))
    return {'rows': rows, 'padded_len': padded, 'mean_len': float(np.mean(L)), 'train_captions': len(tr), 'batch': batch,
            'pool': pool, 'data': str(data) if data else 'built-in world'}

if __name__ == '__main__':
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0]); ap.add_argument('data', nargs='?', default=None)
    ap.add_argument('--models', nargs='+', default=['ours', 'c_updn']); ap.add_argument('--steps', type=int, default=20)
    ap.add_argument('--batch', type=int, default=64); ap.add_argument('--pool', type=int, default=50)
    ap.add_argument('--quick', action='store_true', help='2 steps of each, one model (a smoke run)')
    ap.add_argument('--json', default=None, help='also write the result here')
    a = ap.parse_args()
    r = run(a.data, a.models[:1] if a.quick else a.models, 2 if a.quick else a.steps, a.batch, a.pool)
    print(f"{r['data']}: {r['train_captions']} training captions, {r['mean_len']:.1f} tokens on average; batch {r['batch']} "
          f"padded to {r['padded_len']['plain']:.1f} (plain shuffle) vs {r['padded_len']['bucket']:.1f} (bucketed, pool {r['pool']})")
    print(table('Seconds per step, plain shuffle vs bucketed (1 thread, collate included)', r['rows']))
    if a.json:
        from common import dump, machine
        dump({**r, 'machine': machine()}, a.json)
