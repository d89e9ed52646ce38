"""Data loading: caption samples per second from the HDF5-backed dataset.

`make_loader(world, task='caption', split='train', batch_size=100, dense=True)` over the built-in world
(3,000 images, 64-d features), one pass; samples/s = captions delivered / wall time, worker start-up included.
Configurations: reopening the HDF5 file for every example (`reopen=True`, the official code's way), one
handle per process without a cache, the in-memory cache with 0 workers, and the cache with 2 worker processes
(preloaded before the fork). `loader_speedup` = cache + 2 workers vs reopen per item. The dataset object
(captions, vocabulary) is built once and shared; only the feature store differs.
Usage: python bench/bench_loader.py [--quick] [--world PATH]
"""
from __future__ import annotations
import argparse, sys, time
from pathlib import Path
sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import table

QUICK_BATCHES = 8

def samples_per_s(path, max_batches=None, reopen=False, cache=None, num_workers=0, vocab=None, batch_size=100)->dict:
    from vsr_cic.loader import make_loader
    t0 = time.perf_counter()
    dl = make_loader(path, task='caption', split='train', batch_size=batch_size, num_workers=num_workers, vocab=vocab,
                     reopen=reopen, cache=cache, dense=True, shuffle=True)
    t_build = time.perf_counter() - t0; n = nb = 0; t0 = time.perf_counter()
    for b in dl:
        n += len(b['caption_id']); nb += 1
        if max_batches and nb >= max_batches: break
    dt = time.perf_counter() - t0
    return dict(samples=n, seconds=dt, samples_per_s=n / dt, build_s=t_build, n_opens=dl.dataset.store.n_opens)

def run(quick:bool=False, world=None)->dict:
    import torch
    from vsr_cic.world import ensure_world
    from vsr_cic.loader import build_vocabs
    from vsr_cic.data import load_dataset
    torch.set_num_threads(1)
    path = Path(world) if world else ensure_world()
    vocab = build_vocabs(load_dataset(path), 'train')
    mb = QUICK_BATCHES if quick else None
    cfgs = [('reopen per item, 0 workers', dict(reopen=True)), ('one handle, no cache, 0 workers', dict(cache=False)),
            ('cache, 0 workers', dict(cache=True)), ('cache, 2 workers', dict(cache=True, num_workers=2))]
    rows = [dict(config=name, **samples_per_s(path, mb, vocab=vocab, **kw)) for name, kw in cfgs]
    base, best = rows[0]['samples_per_s'], rows[-1]['samples_per_s']
    for r in rows: r['speedup'] = r['samples_per_s'] / base
    return {'rows': rows, 'loader_speedup': best / base, 'loader_samples_per_s': best, 'loader_reopen_samples_per_s': base}

if __name__ == '__main__':
    ap = argparse.ArgumentParser(); ap.add_argument('--quick', action='store_true'); ap.add_argument('--world'); a = ap.parse_args()
    print(table('Caption loader throughput (train split, batch 100, dense)', run(a.quick, a.world)['rows']))
