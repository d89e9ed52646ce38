"""Table 1's verb-blind floor (`vsr_cic.baselines.retrieval_blind`) at COCO-like scale: seconds to answer ~1.5k queries
against ~25k training captions (5,000 pictures, 82 classes), the nearest picture found by vectorised L1 distances once
per distinct query picture. Moved here from tests/test_table1_records.py (house rule: timing lives in bench/, tests
assert behaviour); the target is well under a minute on the shared 2-core CPU.

Usage: python bench/bench_blind.py [--images 5000] [--queries 1500] [--json PATH] [--quick]
"""
from __future__ import annotations
import argparse, json, sys, time
from pathlib import Path
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))   # the checkout's root
import numpy as np

N_CLASSES = 82   # COCO's 80, the background and the scene proposal's class


class ClassSets:
    "A dataset-shaped stand-in: `n` pictures of 1-5 random classes (one-hot `cls_prob`) and a scene set, `caps_per` captions each"
    def __init__(self, n:int, split:str, caps_per:int, rng, C:int=N_CLASSES):
        self.meta = {'classes': ['__background__'] + [f'c{k}' for k in range(C - 2)] + ['scene']}
        self.images, self.cp = {}, {}
        for i in range(n):
            cls = list(rng.choice(np.arange(1, C - 1), size=int(rng.integers(1, 6)), replace=False)) + [C - 1]
            self.cp[f'{split}{i}'] = np.eye(C, dtype=np.float32)[cls]
            self.images[f'{split}{i}'] = {'split': split, 'sets': [[j] for j in range(len(cls))]}
        self.captions = [{'caption_id': f'{iid}_{j}', 'image_id': iid, 'tokens': f'a c{j} near a thing'.split(),
                          'frames': []} for iid in self.images for j in range(caps_per)]
    def features(self, iid): return {'cls_prob': self.cp[iid]}


def run(images:int=5000, queries:int=1500, seed:int=0)->dict:
    from vsr_cic.baselines import BlindIndex, retrieval_blind
    rng = np.random.default_rng(seed)
    train, test = ClassSets(images, 'train', 5, rng), ClassSets(max(1, queries // 5), 'test', 5, rng)
    t = time.perf_counter(); index = BlindIndex(train); t_index = time.perf_counter() - t
    t = time.perf_counter(); preds = retrieval_blind(index, test); t_query = time.perf_counter() - t
    return {'train_captions': len(index.caps), 'queries': len(preds), 'index_s': round(t_index, 3),
            'retrieval_blind_s': round(t_query, 3), 'target_s': 60}


if __name__ == '__main__':
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument('--images', type=int, default=5000); ap.add_argument('--queries', type=int, default=1500)
    ap.add_argument('--json'); ap.add_argument('--quick', action='store_true', help='tiny sizes (a smoke run)')
    a = ap.parse_args()
    r = run(200, 100) if a.quick else run(a.images, a.queries)
    print(json.dumps(r))
    if a.json: Path(a.json).write_text(json.dumps(r, indent=1) + '\n')
