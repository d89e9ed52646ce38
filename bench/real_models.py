"""Trained captioners on the real-language corpus, for the benchmarks that must time real runs (not untrained models).

Builds the real-language training corpus exactly as `nbs/experiments/real_captions.ipynb` does with its defaults
(COCO val2017 captions + 8,000 Flickr30k captions, class features, 2 distractors, scene context 0.5, seed 0) and trains,
with `train_captioner` and the options the run gives each (Table 1's `paper` rows: `PRESET_TRAINING['paper']` and the
sweep's `fast` setting, the one the sweep chose in 11 of 12 method-seeds of runs/rb; the `ours`-preset captioner: the
notebook's `cap_kw`), `--epochs` XE epochs (and no self-critical epoch). Everything is cached in
`runs/bench_cache/real_models/` (gitignored) and reused while the code version that built it matches.

A model trained for a few epochs says captions of the trained length (about 15 words), not the 55-step rollouts of an
untrained one: what a benchmark of the self-critical step must time.

Usage: python bench/real_models.py [--epochs 3] [--models ours ours_preset c_updn sct c_lstm]
Library: `corpus()` -> the dataset folder; `trained(name)` -> the run folder (trained when missing).
"""
from __future__ import annotations
import argparse, json, sys, time
from pathlib import Path
sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import CACHE

HOME = CACHE/'real_models'
EPOCHS = 3
VERSION = 2   # bumped when the captioners change (2: the `ours` preset's `last_slot`): older caches are not reused
# name -> (model, preset, extra train_captioner options): Table 1's `paper` rows with the sweep's `fast` setting, and
# the `ours`-preset captioner with the notebook's own options
MODELS = {'ours': ('ours', 'paper', dict(lr_xe=3e-3, dropout=0.3)),
          'c_updn': ('c_updn', 'paper', dict(lr_xe=3e-3, dropout=0.3)),
          'c_lstm': ('c_lstm', 'paper', dict(lr_xe=3e-3, dropout=0.3)),
          'sct': ('sct', 'paper', dict(lr_xe=3e-3, dropout=0.3)),
          'ours_preset': ('ours', 'ours', dict(lr_xe=3e-3, dropout=0.3))}

def corpus()->Path:
    "The real-language training corpus (train / val / test splits), built once"
    d = HOME/'data'/'train'
    if (d/'meta.json').exists(): return d
    from vsr_cic.core import shared_data_dir
    from vsr_cic.readers import read_coco, concat_records, sample_records
    from vsr_cic.flickr import read_multi30k
    from vsr_cic.build import build
    sd = shared_data_dir()
    if sd is None: sys.exit("the shared data folder (../shared/data or $VSR_CIC_SHARED) was not found: no corpus to train on")
    parts = {'coco': read_coco(sd/'coco_captions'/'captions_val2017.json'), 'flickr30k': read_multi30k(sd/'flickr30k_captions')}
    recs = concat_records({c: sample_records(p, {'coco': None, 'flickr30k': 8000}[c], 0) for c, p in parts.items()})
    t = time.time()
    build(recs, d, text_only=True, feature_kind='class', n_distractors=2, scene_context_weight=0.5, progress=False, seed=0)
    print(f"built {d} in {time.time() - t:.0f} s", flush=True)
    return d

def trained(name:str, epochs:int=EPOCHS)->Path:
    "The run folder of `name` (a key of MODELS) trained `epochs` XE epochs on `corpus()`"
    from vsr_cic.captioning import train_captioner
    from vsr_cic.protocol import PRESET_TRAINING
    model, preset, extra = MODELS[name]
    out = HOME/f'{name}_xe{epochs}_v{VERSION}'
    if (out/'model.pt').exists() and (out/'metrics.json').exists(): return out
    kw = dict(data_dir=str(corpus()), out_dir=str(out), model=model, preset=preset, epochs_xe=epochs, epochs_rl=0,
              batch_size=64, lr_decay=0.8, hidden=128, min_freq=5, beam=1, bucket=True, precompute=True,
              seed=0, threads=1, progress=False, metrics=False, control=False, test_split='val')
    kw.update(PRESET_TRAINING[preset]); kw.update(extra)
    t = time.time()
    m = train_captioner(**kw)
    print(f"{name}: {epochs} XE epochs in {time.time() - t:.0f} s, val CIDEr-D {m['val']['CIDEr-D']:.3f}", flush=True)
    return out

if __name__ == '__main__':
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--epochs', type=int, default=EPOCHS)
    ap.add_argument('--models', nargs='+', default=list(MODELS), choices=list(MODELS))
    a = ap.parse_args()
    print(corpus())
    for n in a.models: print(trained(n, a.epochs))
