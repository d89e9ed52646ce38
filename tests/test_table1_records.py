"""Issue 40: Table 1's verb-blind floor (`vsr_cic.baselines.retrieval_blind`) on a real dataset folder (a tiny private
world): verb-blind, deterministic, nearest by class multiset, fast enough for a COCO-sized index, and scored as a row"""
import copy, time
from collections import Counter
import numpy as np
import pytest

N_IMAGES = 40


@pytest.fixture(scope='module')
def world(tmp_path_factory):
    "A 40-image private world (every split, proposal features on disk)"
    import torch
    from vsr_cic.world import ensure_world
    from vsr_cic.data import load_dataset
    torch.set_num_threads(1)
    return load_dataset(ensure_world(tmp_path_factory.mktemp('t1rec')/'data', n_images=N_IMAGES, render=False, n_workers=1))


def _test_view(data):
    "The world's test-split captions, as a Table 1 test set"
    d = copy.copy(data)
    d.captions = [c for c in data.captions if data.images[c['image_id']]['split'] == 'test']
    assert d.captions, 'the tiny world has no test caption'
    return d


def _l1(a:Counter, b:Counter)->int: return sum(abs(a.get(k, 0) - b.get(k, 0)) for k in set(a) | set(b))


def test_retrieval_blind_is_nearest_deterministic_and_verb_blind(world):
    from vsr_cic.baselines import BlindIndex, retrieval_blind, image_classes
    test = _test_view(world)
    index = BlindIndex(world)
    assert all(world.images[c['image_id']]['split'] == 'train' for c in index.caps)
    preds = retrieval_blind(index, test)
    assert [p['caption_id'] for p in preds] == [c['caption_id'] for c in test.captions]
    by_id = {c['caption_id']: c for c in index.caps}
    train_ms = {iid: image_classes(world, iid) for iid in index.images}
    for p in preds:                                   # the answer's picture is a nearest one, by brute force
        q = image_classes(world, p['image_id'])
        assert 'scene' not in q
        got = _l1(q, train_ms[by_id[p['retrieved']]['image_id']])
        assert got == p['distance'] == min(_l1(q, m) for m in train_ms.values())
        assert p['tokens'] == by_id[p['retrieved']]['tokens']
    assert retrieval_blind(BlindIndex(world), test) == preds           # deterministic (a fresh index too)
    other = copy.copy(test)                                            # another verb and no roles in every query
    other.captions = [{**c, 'frames': [{**f, 'verb': 'zzverb', 'args': []} for f in c['frames']]} for c in test.captions]
    assert [p['retrieved'] for p in retrieval_blind(index, other)] == [p['retrieved'] for p in preds]
    per_image = {}
    for p in preds: per_image.setdefault(p['image_id'], set()).add(p['retrieved'])
    assert all(len(v) == 1 for v in per_image.values())               # one answer per picture


def test_retrieval_blind_scale():
    "~25k training captions × ~1.5k queries: well under a minute (vectorised distances, one per distinct picture)"
    from vsr_cic.baselines import BlindIndex, retrieval_blind
    rng = np.random.default_rng(0)
    C, I, Q = 82, 5000, 1500
    classes = ['__background__'] + [f'c{k}' for k in range(C - 2)] + ['scene']

    class Fake:
        meta = {'classes': classes}
        def __init__(self, n, split, caps_per):
            self.images, self.cp = {}, {}
            for i in range(n):
                k = rng.integers(1, 6)
                cls = list(rng.choice(np.arange(1, C - 1), size=k, replace=False)) + [C - 1]
                self.cp[f'{split}{i}'] = np.eye(C, dtype=np.float32)[cls]
                self.images[f'{split}{i}'] = {'split': split, 'sets': [[j] for j in range(len(cls))]}
            self.captions = [{'caption_id': f'{iid}_{j}', 'image_id': iid, 'tokens': f'a c{j} near a thing'.split(),
                              'frames': []} for iid in self.images for j in range(caps_per)]
        def features(self, iid): return {'cls_prob': self.cp[iid]}

    train, test = Fake(I, 'train', 5), Fake(Q // 5, 'test', 5)
    t = time.time()
    preds = retrieval_blind(BlindIndex(train), test)
    assert len(BlindIndex(train).caps) == 5 * I and len(preds) == Q
    assert time.time() - t < 60, f'retrieval_blind took {time.time() - t:.1f} s'
