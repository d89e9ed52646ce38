"Cross-component checks of the built-in VSR world: generator (vsr_cic.world) x format (vsr_cic.data) x control signal (vsr_cic.vsr)"
import hashlib, json
import numpy as np
import pytest
from vsr_cic.data import load_dataset, validate_caption, frame_structure, caption_vsrs, group_proposals
from vsr_cic.vsr import VSR, VERB
from vsr_cic.world import generate_world, ensure_world, world_stats, held_out_vsrs, load_scenes, WORLD_NAME
from vsr_cic.scenes import CLASSES, VERBS, FEATURE_DIM, IMAGE_W, IMAGE_H

N = 60

@pytest.fixture(scope='module')
def world(tmp_path_factory):
    return generate_world(tmp_path_factory.mktemp('w')/'world', n_images=N, seed=0, render=True)

@pytest.fixture(scope='module')
def ds(world): return load_dataset(world)

def _digest(p):
    return {f: hashlib.sha256((p/f).read_bytes()).hexdigest() for f in ('captions.jsonl', 'images.jsonl', 'scenes.jsonl', 'meta.json')}

def test_sizes_and_meta(ds):
    assert len(ds.images) == N and 3 * N <= len(ds.captions) <= 5 * N
    m = ds.meta
    assert m['name'] == WORLD_NAME and m['grouping'] == 'class' and m['classes'] == CLASSES and m['seed'] == 0
    assert m['held_out'] == held_out_vsrs(0) and len(m['held_out']) >= 3
    assert ds.feature_dim == FEATURE_DIM
    assert len(CLASSES) - 1 >= 30 and len(VERBS) >= 20

def test_every_caption_validates(ds):
    for c in ds.captions:
        validate_caption(c, ds.images[c['image_id']])
        assert c['tokens'] == c['caption'].split() and all(t.isalpha() and t.islower() for t in c['tokens'])

def test_structures_are_structures_of_their_vsr(ds):
    for c in ds.captions:
        vsrs = caption_vsrs(c)
        assert len(vsrs) == len(c['frames']) >= 1
        for f, v in enumerate(vsrs):
            s = frame_structure(c, f)
            assert v.is_structure(s), (c['caption'], s, v)
            assert VSR.from_structure(v.verb, s).subroles() and s.count(VERB) == 1
        if len(c['frames']) == 1:          # one verb: the slot labels read in order are the structure
            assert [l for sl in c['slots'] for _, l in sl['labels']] == frame_structure(c)

def test_grounding_points_at_the_right_objects(ds, world):
    scenes = load_scenes(world)
    for c in ds.captions:
        img, sc = ds.images[c['image_id']], scenes[c['image_id']]
        cls_of_set = {}
        p = ds.features(c['image_id'])['cls_prob']
        assert img['sets'] == group_proposals(p, 'class')           # sets follow the COCO rule from the file
        for k, s in enumerate(img['sets']): cls_of_set[k] = CLASSES[int(p[s[0], 1:].argmax()) + 1]
        for sl in c['slots']:
            if sl['set'] is None: continue
            head = c['tokens'][sl['span'][1] - 1]                     # the noun ends the entity span
            assert cls_of_set[sl['set']] == head, (c['caption'], sl)
            kind = next(o['kind'] for j, o in enumerate(sc['objects']) if sc['set_of_object'][j] == sl['set'])
            assert kind != 'distractor'

def test_boxes_inside_images_and_pictures(ds, world):
    for iid, img in ds.images.items():
        b = ds.features(iid)['boxes']
        assert (b[:, 0] >= 0).all() and (b[:, 2] <= img['width']).all() and (b[:, 3] <= img['height']).all()
        assert (world/img['file']).exists()
    from PIL import Image
    assert Image.open(world/ds.images['000000']['file']).size == (IMAGE_W, IMAGE_H)

def test_held_out_absent_from_train(ds):
    held = set(ds.meta['held_out'])
    for split, caps in ds.splits.items():
        if split == 'test': continue
        assert not any(str(v) in held for c in caps for v in caption_vsrs(c)), split

def test_held_out_present_in_test_of_a_default_sized_sample(tmp_path):
    # the held-out VSRs must actually occur in test; 400 images hold some of them
    st = world_stats(load_dataset(generate_world(tmp_path/'w', n_images=400, seed=0, render=False)))
    assert st['held_out_captions_per_split'].get('test', 0) > 0
    assert st['held_out_captions_per_split'].get('train', 0) == 0 and st['held_out_captions_per_split'].get('val', 0) == 0

def test_determinism(tmp_path, world):
    a = generate_world(tmp_path/'a', n_images=20, seed=3, render=False)
    b = generate_world(tmp_path/'b', n_images=20, seed=3, render=False)
    c = generate_world(tmp_path/'c', n_images=20, seed=4, render=False)
    assert _digest(a) == _digest(b) and _digest(a)['captions.jsonl'] != _digest(c)['captions.jsonl']
    fa, fb = load_dataset(a).features('000007'), load_dataset(b).features('000007')
    for k in fa: np.testing.assert_array_equal(fa[k], fb[k])
    # a prefix of a larger world is the smaller world (per-image random streams)
    big = load_dataset(generate_world(tmp_path/'big', n_images=25, seed=3, render=False))
    small = load_dataset(a)
    assert [c for c in big.captions if c['image_id'] < '000020'] == small.captions

def test_ensure_world_reuses_and_regenerates(tmp_path):
    p = ensure_world(tmp_path, n_images=8, seed=1, render=False)
    assert p == tmp_path/WORLD_NAME and (p/'meta.json').exists()
    mt = (p/'meta.json').stat().st_mtime_ns
    assert ensure_world(tmp_path, n_images=8, seed=1, render=False) == p and (p/'meta.json').stat().st_mtime_ns == mt
    ensure_world(tmp_path, n_images=9, seed=1, render=False)                      # other size: regenerated
    assert json.loads((p/'meta.json').read_text())['n_images'] == 9
    assert not [q for q in tmp_path.iterdir() if q.name.startswith('.')]          # no temp folders left

def test_half_written_world_is_not_taken(tmp_path):
    p = tmp_path/WORLD_NAME; p.mkdir()
    (p/'captions.jsonl').write_text('')                                            # a crashed writer without meta.json…
    with pytest.raises(FileExistsError): ensure_world(tmp_path, n_images=4, render=False)  # …is not overwritten blindly
    (p/'captions.jsonl').unlink()
    assert (ensure_world(tmp_path, n_images=4, render=False)/'meta.json').exists()  # an empty folder is fine

def test_structure_is_fixed_by_the_vsr(ds):
    # world version 2: each VSR has one canonical structure (up to rare exceptions), so a planner can learn it
    from vsr_cic.world import canonical_structure, role_order
    st = world_stats(ds)
    assert st['structure_ceiling']['train'] > .93
    follows = n = 0
    for c in ds.captions:
        for f, v in enumerate(caption_vsrs(c)):
            roles = {r for r, _ in v.roles}; order = role_order(frame_structure(c, f))
            if 'LOC' in roles: follows += (order[0] == 'LOC') == canonical_structure(v.verb, roles)['front']; n += 1
    assert follows / n > .93

def test_captions_name_the_nearest_eligible_entities(ds, world):
    # the image decides the grounding: a role's sets are the nearest ones among the sets whose class can fill it
    from collections import defaultdict
    scenes = load_scenes(world)
    fills, queries = defaultdict(set), []
    for c in ds.captions:
        sc = scenes[c['image_id']]; obj = {sc['set_of_object'][j]: o for j, o in enumerate(sc['objects'])}
        for fr in c['frames']:
            sets = defaultdict(list)
            for a in fr['args']: sets[a['role']] += [e['set'] for e in a['entities'] if e['set'] is not None]
            for r, ss in sets.items():
                fills[fr['verb'], r] |= {obj[k]['cls'] for k in ss}; queries.append((fr['verb'], r, ss, obj))
    ok = 0
    for v, r, ss, obj in queries:
        el = sorted((k for k in obj if obj[k]['cls'] in fills[v, r]), key=lambda k: (obj[k]['kind'] != 'place', -obj[k]['depth']))
        ok += set(el[:len(ss)]) == set(ss)
    assert ok / len(queries) > .95
