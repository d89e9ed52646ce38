"""Issue 40: Table 1's verb-blind floor (`vsr_cic.baselines.retrieval_blind`) on a real dataset folder (a tiny private
world): verb-blind, deterministic, nearest by class multiset (its timing at COCO size: bench/bench_blind.py), and scored as a row"""
import copy
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


def test_retrieval_blind_at_scale_is_the_brute_force_nearest():
    "Many pictures of random class sets: every answer is a nearest training picture by brute-force L1, one answer per picture (its timing: bench/bench_blind.py)"
    import sys
    from conftest import ROOT
    from vsr_cic.baselines import BlindIndex, retrieval_blind, image_classes
    sys.path.insert(0, str(ROOT/'bench'))
    try: from bench_blind import ClassSets
    finally: sys.path.remove(str(ROOT/'bench'))
    rng = np.random.default_rng(0)
    train, test = ClassSets(600, 'train', 5, rng), ClassSets(40, 'test', 5, rng)
    index = BlindIndex(train)
    preds = retrieval_blind(index, test)
    assert len(index.caps) == 5 * 600 and len(preds) == 5 * 40
    train_ms = {iid: image_classes(train, iid) for iid in index.images}
    by_id = {c['caption_id']: c for c in index.caps}
    for p in preds:
        q = image_classes(test, p['image_id'])
        best = min(_l1(q, m) for m in train_ms.values())
        assert p['distance'] == best == _l1(q, train_ms[by_id[p['retrieved']]['image_id']]), p
        first = next(iid for iid in index.images if _l1(q, train_ms[iid]) == best)   # ties: the first picture, its first caption
        assert p['retrieved'] == index.caps[index.of_image[index.images.index(first)][0]]['caption_id']
    per_image = {}
    for p in preds: per_image.setdefault(p['image_id'], set()).add(p['retrieved'])
    assert len(per_image) == 40 and all(len(v) == 1 for v in per_image.values())
