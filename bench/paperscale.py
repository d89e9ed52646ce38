"""A paper-scale synthetic dataset in the canonical format: bottom-up-shaped features, COCO-sized.

`generate_paperscale(out, n_images)` writes `meta.json`, `images.jsonl`, `captions.jsonl` and `features.hdf5`
(HDF5 bottom-up layout: `<id>_features` (N, 2048), `<id>_boxes` (N, 4), `<id>_cls_prob` (N, C)) for `n_images`
images, from 1,000 up to COCO's 123,287, with 10-100 proposals per image. Everything is written in chunks of
`chunk` images (features, then the JSON lines of those images), so generating never holds the dataset in
memory; `meta.json` is written last (an interrupted run leaves no valid dataset).

Shaped like the real thing, not learnable: the proposal count follows 10 + 90 x Beta(2, 2.2) (mean ~53, the mean
implied by COCO's 53.5 GB of float32 2048-d features over 123k images; bottom-up's adaptive 10-100 range), the
features are non-negative and sparse like pooled ReLU outputs (rows drawn from a fixed random pool and
rescaled, so generation is bound by the disk, not the random generator), boxes lie in a 640 x 480 image,
`cls_prob` is a softmax over `n_classes` (COCO's 80 + background). Each image has 5 captions (COCO) of 10-16
tokens from a `vocab`-word vocabulary, one verb frame: ARG0 (a proposal set), V, ARG1 (a set), LOC (a set).
Splits follow Karpathy's proportions (113,287 / 5,000 / 5,000).
Usage: python bench/paperscale.py OUT --images 1000 [--dtype float16]
"""
from __future__ import annotations
import argparse, json, os, sys, time
from pathlib import Path
import numpy as np

FEAT_D, MIN_PROP, MAX_PROP = 2048, 10, 100           # bottom-up: 2048-d, adaptive 10-100 proposals
COCO_IMAGES, CAPTIONS_PER_IMAGE = 123_287, 5
N_CLASSES, VOCAB, WIDTH, HEIGHT = 81, 10_000, 640, 480
SPLIT_SHARE = (('train', 113_287 / COCO_IMAGES), ('val', 5_000 / COCO_IMAGES))   # the rest: test
POOL_ROWS, CHUNK = 4096, 256
DTYPES = ('float16', 'float32')

def n_proposals(rng, n:int)->np.ndarray:
    "Proposals per image: 10 + round(90 x Beta(2, 2.2)), mean ~53 (COCO's 53.5 GB / 123k images of float32 2048-d)"
    return MIN_PROP + np.rint((MAX_PROP - MIN_PROP) * rng.beta(2.0, 2.2, n)).astype(int)

def _pools(rng, dtype)->tuple:
    "(POOL_ROWS, FEAT_D) non-negative sparse feature rows, like pooled ReLU activations, and (POOL_ROWS, C) cls_prob rows"
    x = rng.standard_normal((POOL_ROWS, FEAT_D), dtype=np.float32)
    feats = np.maximum(x, 0) * rng.uniform(0.5, 2.0, (POOL_ROWS, 1)).astype(np.float32)
    z = rng.standard_normal((POOL_ROWS, N_CLASSES)).astype(np.float32) * 3
    p = np.exp(z - z.max(1, keepdims=True)); p /= p.sum(1, keepdims=True)
    return feats.astype(dtype), p.astype(dtype)

def _image(rng, k:int, n:int, split:str)->tuple[dict, list]:
    "Image record with 3-8 proposal sets, and its captions"
    iid = f'ps{k:06d}'
    perm = rng.permutation(n)
    n_sets = int(rng.integers(3, 9)); cuts = np.sort(rng.choice(np.arange(1, min(n, 40)), n_sets - 1, replace=False))
    sets = [s.tolist() for s in np.split(perm[:min(n, 40)], cuts)][:n_sets]
    sets = [s[:5] for s in sets if s]
    rec = {'image_id': iid, 'split': split, 'width': WIDTH, 'height': HEIGHT, 'file': None, 'sets': sets}
    return rec, [_caption(rng, iid, j, len(sets)) for j in range(CAPTIONS_PER_IMAGE)]

def verb_name(n:int)->str:
    "A synthetic verb lemma in the lexicon's syntax (ASCII letters only): 0 -> 'verba', 27 -> 'verbbb'"
    out = ''
    while True:
        n, d = divmod(n, 26); out = chr(97 + d) + out
        if not n: return 'verb' + out

def _caption(rng, iid:str, j:int, n_sets:int)->dict:
    "A 10-16 token caption: ARG0 [0, a) V [a, a+1) ARG1 [a+1, b) LOC [b+1, T) (word b: a preposition)"
    T = int(rng.integers(10, 17)); a = int(rng.integers(2, 4)); b = int(rng.integers(a + 3, T - 2))
    toks = [f'w{w}' for w in rng.integers(0, VOCAB, T)]
    st = rng.choice(n_sets, 3, replace=n_sets < 3).tolist()
    ent = lambda s, e, k: {'span': [s, e], 'set': st[k]}
    arg = lambda r, s, e, k: {'role': r, 'span': [s, e], 'entities': [ent(s, e, k)]}
    frame = {'roleset': None, 'verb': verb_name(int(rng.integers(0, 300))), 'verb_span': [a, a + 1],
             'args': [arg('ARG0', 0, a, 0), arg('ARG1', a + 1, b, 1), arg('LOC', b + 1, T, 2)]}
    slots = [{'span': [0, a], 'set': st[0], 'labels': [[0, 'ARG0']]}, {'span': [a, a + 1], 'set': None, 'labels': [[0, 'V']]},
             {'span': [a + 1, b], 'set': st[1], 'labels': [[0, 'ARG1']]}, {'span': [b + 1, T], 'set': st[2], 'labels': [[0, 'LOC']]}]
    return {'caption_id': f'{iid}_{j}', 'image_id': iid, 'caption': ' '.join(toks), 'tokens': toks, 'frames': [frame], 'slots': slots}

def _arrays(rng, pools, n:int, dtype)->tuple:
    "features (n, D), boxes (n, 4), cls_prob (n, C) of one image (rows gathered from the pools: no float16 arithmetic)"
    rows = rng.integers(0, POOL_ROWS, n)
    xy = rng.uniform(0, [WIDTH - 2, HEIGHT - 2], (n, 2))
    wh = 1 + rng.uniform(0, 1, (n, 2)) * ([WIDTH, HEIGHT] - xy - 1)                  # x2 <= W, y2 <= H
    return pools[0][rows], np.concatenate([xy, xy + wh], 1).astype(dtype), pools[1][rows]

def _splits(n:int)->list[str]:
    n_tr = max(1, round(n * SPLIT_SHARE[0][1])); n_va = max(1, round(n * SPLIT_SHARE[1][1]))
    return ['train'] * n_tr + ['val'] * n_va + ['test'] * max(0, n - n_tr - n_va)

def generate_paperscale(out:str|os.PathLike, # dataset folder (created)
                        n_images:int=1000,     # 1,000 ... 123,287 (COCO)
                        dtype:str='float16',   # storage of features, boxes, cls_prob: 'float16' | 'float32'
                        seed:int=0,
                        chunk:int=CHUNK,       # images generated and written per step
                        progress:bool=True)->dict:
    "Write the dataset in chunks; return sizes and timings"
    import h5py
    from vsr_cic.data import validate_caption, _check_image, check_boxes, BACKGROUND, FORMAT_VERSION
    if dtype not in DTYPES: raise ValueError(f"dtype must be one of {DTYPES}, got {dtype!r}")
    if not 1 <= n_images <= COCO_IMAGES: raise ValueError(f"n_images must be in 1..{COCO_IMAGES}, got {n_images}")
    out = Path(out); out.mkdir(parents=True, exist_ok=True)
    if (out/'meta.json').exists(): (out/'meta.json').unlink()               # not a valid dataset until written again
    rng = np.random.default_rng(seed); pools = _pools(rng, dtype)
    counts, splits = n_proposals(rng, n_images), _splits(n_images)
    t0 = time.perf_counter(); n_caps = 0
    bar = _bar(n_images, progress)
    with h5py.File(out/'features.hdf5', 'w') as h, open(out/'images.jsonl', 'w') as fi, open(out/'captions.jsonl', 'w') as fc:
        for c0 in range(0, n_images, chunk):
            imgs, caps = [], []
            for k in range(c0, min(n_images, c0 + chunk)):
                rec, cs = _image(rng, k, int(counts[k]), splits[k])
                feats, boxes, cls_prob = _arrays(rng, pools, int(counts[k]), dtype)
                if k < chunk:                                                # the first chunk is validated record by record
                    _check_image(rec); check_boxes(rec, boxes); [validate_caption(c, rec) for c in cs]
                for name, a in (('features', feats), ('boxes', boxes), ('cls_prob', cls_prob)):
                    h.create_dataset(f"{rec['image_id']}_{name}", data=a)  # contiguous: one read per key
                imgs.append(rec); caps.extend(cs)
            fi.write(''.join(json.dumps(r, separators=(',', ':')) + '\n' for r in imgs))
            fc.write(''.join(json.dumps(r, separators=(',', ':')) + '\n' for r in caps))
            n_caps += len(caps); bar(len(imgs))
    meta = {'name': f'paperscale_{n_images}_{dtype}', 'format_version': FORMAT_VERSION, 'grouping': 'class',
            'classes': [BACKGROUND] + [f'class{i}' for i in range(1, N_CLASSES)], 'feature_file': 'features.hdf5',
            'source': f'bench/paperscale.py generate_paperscale(n_images={n_images}, dtype={dtype!r}, seed={seed})'}
    (out/'meta.json').write_text(json.dumps(meta, indent=1))
    dt = time.perf_counter() - t0; size = (out/'features.hdf5').stat().st_size
    return dict(images=n_images, captions=n_caps, dtype=dtype, mean_proposals=float(counts.mean()), features_gb=size / 1e9,
                generate_s=dt, write_mb_per_s=size / 2**20 / dt)

def _bar(total:int, on:bool):
    "A progress bar (tqdm if installed, else a line every 10 %)"
    if not on: return lambda n: None
    try:
        from tqdm.auto import tqdm
        t = tqdm(total=total, unit='img', desc='paperscale'); return t.update
    except ImportError:
        done = [0]
        def upd(n):
            done[0] += n
            if done[0] * 10 // total != (done[0] - n) * 10 // total: print(f'  {done[0]}/{total} images', flush=True)
        return upd

if __name__ == '__main__':
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument('out'); ap.add_argument('--images', type=int, default=1000)
    ap.add_argument('--dtype', default='float16', choices=DTYPES); ap.add_argument('--seed', type=int, default=0)
    a = ap.parse_args()
    print(json.dumps(generate_paperscale(a.out, a.images, a.dtype, a.seed), indent=1))
