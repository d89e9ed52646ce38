"Loaders of every task over the toy fixture and the generated VSR world: shapes, masks and ground-truth invariants"
import inspect
import pytest, torch
from vsr_cic.core import MAX_SUBROLES, MAX_PER_ROLE, MAX_REGIONS_PER_SET, MAX_PROPOSALS
from vsr_cic.vsr import ROLE_VOCAB
from vsr_cic.data import load_dataset, frame_structure
from vsr_cic.loader import (TASKS, GATE_PAD, GLOBAL, Limits, make_loader, build_vocabs, densify, make_toy_dataset,
                            frame_slots)

WORLD_IMAGES = 40   # small enough to generate in seconds


@pytest.fixture(scope='module')
def toy(tmp_path_factory): return make_toy_dataset(tmp_path_factory.mktemp('toy')/'toy')


@pytest.fixture(scope='module')
def world(tmp_path_factory):
    try: import vsr_cic.world as W
    except ImportError as e: pytest.skip(f"vsr_cic.world is not there yet ({e}); the world tests run once nbs/03_world.ipynb is exported")
    gen = getattr(W, 'generate_world', None)
    if gen is None: pytest.skip("vsr_cic.world has no generate_world(out_dir, n_images=…, seed=…) yet")
    kw = {k: v for k, v in dict(n_images=WORLD_IMAGES, seed=0, render=False).items() if k in inspect.signature(gen).parameters}
    return gen(tmp_path_factory.mktemp('world')/'world', **kw)


def check_batch(b, task, limits):
    "Shape and mask invariants every batch of `task` must satisfy"
    I = len(b['image_id']) if task != 'slevel' else None
    if task != 'slevel':
        B = len(b['img']); assert int(b['img'].max()) < I
    if task == 'gsrl':
        N = b['img_set_mask'].shape[1]
        if limits.fixed and limits.sets: assert N == limits.sets
        assert b['target'].shape == (B, N) and b['img_set_feats'].shape[:2] == (I, N)
        d = densify(b)
        assert d['set_feats'].shape == (B, N, b['img_set_feats'].shape[-1])
        assert (b['target'] * ~d['set_mask']).sum() == 0, 'a target points at a padded set'
        assert (b['target'].sum(1) >= 1).all() and (b['target'].sum(1) <= b['count']).all()
        assert (b['img_set_feats'][~b['img_set_mask']] == 0).all()
    elif task == 'slevel':
        B, M = b['roles'].shape
        if limits.fixed: assert M == limits.subroles
        assert b['target'].shape == (B, M + 1)
        n = b['role_mask'].sum(1)
        assert (b['target_mask'].sum(1) == n + 1).all()
        for k in range(B):
            assert sorted(b['roles'][k, :n[k]].tolist()) == sorted(b['target'][k, :n[k]].tolist())
            assert b['target'][k, n[k]] == 0 and ROLE_VOCAB['V'] in b['target'][k, :n[k]].tolist()
            assert len(set(b['target'][k, :n[k]].tolist())) == n[k], 'a role appears twice'
        assert (b['roles'][~b['role_mask']] == 0).all()
    elif task == 'rlevel':
        B, nmax, R = b['region_idx'].shape
        if limits.fixed: assert (nmax, R) == (limits.per_role, limits.regions)
        P = b['perm_matrix']
        assert torch.equal(P.sum(1), torch.ones(B, nmax)) and torch.equal(P.sum(2), torch.ones(B, nmax))
        assert torch.equal(b['order'], b['perm'].argsort(-1))
        assert (b['item_mask'].sum(1) == b['count']).all() and (b['count'] >= 2).all()
        assert (b['region_mask'].any(-1) == b['item_mask']).all()
        d = densify(b)
        assert d['regions'].shape == (B, nmax, R, b['img_feats'].shape[-1])
        pos = d['region_pos'][d['region_mask']]
        assert ((pos >= -0.01) & (pos <= 1.01)).all(), 'boxes outside the image'
    elif task == 'caption':
        B, T = b['words'].shape
        K, R = b['region_idx'].shape[1:]
        if limits.fixed: assert (K, R) == (limits.subroles, limits.regions)
        m = b['word_mask']
        assert (b['gate'][~m] == GATE_PAD).all() and ((b['gate'][m] == 0) | (b['gate'][m] == 1)).all()
        steps = b['slot_idx'][:, 1:] - b['slot_idx'][:, :-1]
        assert ((steps[m[:, 1:]] == 0) | (steps[m[:, 1:]] == 1)).all(), 'slots must advance one at a time'
        assert torch.equal((steps * m[:, 1:]).clamp(min=0), b['gate'][:, :-1].clamp(min=0)), 'gate != next word in the next slot'
        last = m.sum(1) - 1
        assert torch.equal(b['slot_idx'][torch.arange(B), last], b['n_slots'] - 1), '<eos> is not in the last slot'
        assert torch.equal(b['slot_mask'].sum(1), b['n_slots'])
        assert ((b['region_idx'] == GLOBAL) == (b['slot_is_verb'][..., None] & b['region_mask'])).all()
        assert (b['slot_role'][b['slot_is_verb']] == ROLE_VOCAB['V']).all()
        d = densify(b)
        assert d['regions'].shape == (B, K, R, b['img_feats'].shape[-1])
        assert torch.allclose(d['regions'][b['slot_is_verb']][:, 0], d['global_feat'][:, None].expand(B, K, -1)[b['slot_is_verb']])
        assert (d['regions'][~b['region_mask']] == 0).all()


@pytest.mark.parametrize('task', list(TASKS))
def test_toy_every_task(toy, task):
    for limits in (Limits(), Limits(fixed=False), Limits(sets=MAX_PROPOSALS)):
        dl = make_loader(toy, task, batch_size=3, limits=limits)
        n = 0
        for b in dl: check_batch(b, task, limits); n += len(b['caption_id'])
        assert n == len(dl.dataset)


def test_toy_workers_match(toy):
    vocab = build_vocabs(toy)
    for task in TASKS:
        a = list(make_loader(toy, task, batch_size=2, vocab=vocab, seed=3))
        b = list(make_loader(toy, task, batch_size=2, vocab=vocab, seed=3, num_workers=2))
        c = list(make_loader(toy, task, batch_size=2, vocab=vocab, seed=3, reopen=True))
        for x, y, z in zip(a, b, c):
            for k in x:
                if torch.is_tensor(x[k]): assert torch.equal(x[k], y[k]) and torch.equal(x[k], z[k]), (task, k)
                else: assert x[k] == y[k] == z[k]


def test_world_slots_agree_with_frames(world):
    ds = load_dataset(world)
    for c in ds.captions[:500]:
        for f in range(len(c['frames'])): assert [s for s, _ in frame_slots(c, f)] == frame_structure(c, f), c['caption_id']


@pytest.mark.parametrize('task', list(TASKS))
def test_world_every_task(world, task):
    ds = load_dataset(world)
    vocab = build_vocabs(ds)
    for split in ('train', 'val'):
        for limits in (Limits(), Limits(fixed=False)):
            dl = make_loader(ds, task, split=split, batch_size=16, vocab=vocab, limits=limits)
            assert len(dl.dataset) > 0, f'no {task} examples in the world {split} split (skipped: {dict(dl.dataset.skipped)})'
            for i, b in enumerate(dl):
                check_batch(b, task, limits)
                if i == 3: break


def test_world_workers(world):
    ds = load_dataset(world)
    dl0 = make_loader(ds, 'caption', batch_size=16, shuffle=False, limits=Limits(fixed=False))
    dl2 = make_loader(ds, 'caption', batch_size=16, shuffle=False, limits=Limits(fixed=False), num_workers=2, vocab=dl0.dataset.vocab)
    for x, y in zip(dl0, dl2):
        for k in x:
            if torch.is_tensor(x[k]): assert torch.equal(x[k], y[k]), k


def test_world_verb_one_word(world):
    "With verb_one_word, every verb slot that is not the caption's last slot holds exactly its verb"
    from vsr_cic.loader import CaptionDataset
    ds = CaptionDataset(load_dataset(world), split=None, verb_one_word=True)
    for ex in ds.examples:
        for k, s in enumerate(ex['slots']):
            if s[2] and k < len(ex['slots']) - 1: assert ex['slot_idx'][1:-1].count(k) == 1, ex['caption_id']
