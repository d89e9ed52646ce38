"""CIDEr-D: vsr_cic.cider.CiderD vs pycocoevalcap's Cider on the same 5,000 real COCO val2017 caption/reference pairs.

Pairs: for each of the 4,921 val images with more than one caption, caption 0 is scored against the others
(the leave-one-out human-agreement check); 79 more pairs score caption 1 of the first images against their
other captions, to reach 5,000. Captions are PTB-tokenised once with pycocoevalcap's Java tokenizer and cached
in runs/bench_cache (tokenising is not timed: both scorers take the same tokenised strings).

Cases: corpus mode (df from the 5,000 reference groups, what pycocoevalcap computes) and the RL-reward case
(df cached once; 100 images x 6 candidates scored per call; pycocoevalcap recomputes df every call).
Usage: python bench/bench_cider.py [--quick]
"""
from __future__ import annotations
import argparse, json, pickle, shutil, sys
from pathlib import Path
import numpy as np
sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import CACHE, best_time, best_times, table

N_PAIRS = 5000
QUICK_PAIRS = 500
RL_IMAGES, RL_SAMPLES = 100, 6     # reward batch: 100 images x (5 samples + 1 greedy) candidates

def coco_pairs(n:int=N_PAIRS)->tuple[dict, dict]|None:
    "({key: [candidate]}, {key: [references]}) of n real COCO val caption pairs, PTB-tokenised (cached); None without data/Java"
    from vsr_cic.core import shared_data_dir
    f = CACHE/'coco_val_ptb.pkl'
    if f.exists(): tok = pickle.loads(f.read_bytes())
    else:
        d = shared_data_dir()
        if d is None or shutil.which('java') is None: return None
        ann = json.loads((d/'coco_captions'/'captions_val2017.json').read_text())['annotations']
        by = {}
        for a in ann: by.setdefault(a['image_id'], []).append(a['caption'])
        by = {k: v for k, v in sorted(by.items()) if len(v) > 1}
        if n < len(by): by = dict(list(by.items())[:n])                 # a quick run tokenises only what it needs (not cached)
        from pycocoevalcap.tokenizer.ptbtokenizer import PTBTokenizer
        tok = PTBTokenizer().tokenize({k: [{'caption': c} for c in v] for k, v in by.items()})
        if n >= len(by): f.parent.mkdir(parents=True, exist_ok=True); f.write_bytes(pickle.dumps(tok))
    imgs = sorted(tok)
    res, gts = {}, {}
    for which in range(max(len(c) for c in tok.values())):       # caption 0 of every image, then caption 1, …
        for k in imgs:
            if len(res) >= n: break
            caps = tok[k]
            if which < len(caps):
                res[(k, which)] = [caps[which]]; gts[(k, which)] = caps[:which] + caps[which + 1:]
    return res, gts

def run(quick:bool=False)->dict:
    from pycocoevalcap.cider.cider import Cider
    from vsr_cic.cider import CiderD
    pairs = coco_pairs(QUICK_PAIRS if quick else N_PAIRS)
    if pairs is None: return {'skipped': 'COCO captions (shared data) or Java not found', 'cider_speedup': None, 'cider_max_abs_diff': None}
    res, gts = pairs
    rep = 1 if quick else 3
    (m_ref, s_ref), t_ref, c_ref = best_times(lambda: Cider().compute_score(gts, res), rep)
    CiderD().compute_score(gts, res)                                           # warm-up (imports, allocator)
    (m, s), t_ours, c_ours = best_times(lambda: CiderD().compute_score(gts, res), 3 * rep + 2)
    diff = float(np.abs(np.asarray(s) - np.asarray(s_ref)).max())
    corpus = dict(case=f'corpus df, {len(res)} pairs', pycoco_s=t_ref, ours_s=t_ours, speedup=t_ref / t_ours,
                  pycoco_cpu_s=c_ref, ours_cpu_s=c_ours, cpu_speedup=c_ref / c_ours,
                  max_abs_diff=diff, score_pycoco=float(m_ref), score_ours=float(m))
    # RL reward: df cached once from all reference groups, then batches of 600 candidates against their refs
    keys = list(res)
    (cached), t_build = best_time(lambda: CiderD([gts[k] for k in keys]), 1)
    B = [k for k in keys[:RL_IMAGES] for _ in range(RL_SAMPLES)]
    hyps = [res[k][0] for k in B]; refs = [gts[k] for k in B]
    _, t_batch, c_batch = best_times(lambda: cached.score(hyps, refs), 5 if quick else 20)
    g6, r6 = {i: refs[i] for i in range(len(B))}, {i: [hyps[i]] for i in range(len(B))}
    _, t_batch_ref, c_batch_ref = best_times(lambda: Cider().compute_score(g6, r6), 3 * rep)
    rl = dict(case=f'RL reward: {len(B)} candidates, df cached', pycoco_s=t_batch_ref, ours_s=t_batch, speedup=t_batch_ref / t_batch,
              pycoco_cpu_s=c_batch_ref, ours_cpu_s=c_batch, cpu_speedup=c_batch_ref / c_batch, max_abs_diff=None, df_build_s=t_build)
    return {'rows': [corpus, rl], 'cider_speedup': corpus['speedup'], 'cider_cpu_speedup': corpus['cpu_speedup'], 'cider_max_abs_diff': diff,
            'cider_rl_speedup': rl['speedup'], 'cider_rl_cpu_speedup': rl['cpu_speedup'], 'cider_pairs': len(res), 'cider_target_speedup': 20}

if __name__ == '__main__':
    ap = argparse.ArgumentParser(); ap.add_argument('--quick', action='store_true'); a = ap.parse_args()
    r = run(a.quick)
    print(table('CIDEr-D: ours vs pycocoevalcap (target >= 20x)', r.get('rows', []) or [r]))
