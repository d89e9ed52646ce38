"Paper-scale data: the bottom-up-shaped generator, the budgeted feature cache with workers, and the --paper-scale smoke run"
import json, subprocess, sys
import numpy as np, h5py, pytest, torch
from conftest import ROOT
sys.path.insert(0, str(ROOT/'bench'))
from paperscale import generate_paperscale, FEAT_D, MIN_PROP, MAX_PROP, N_CLASSES

@pytest.fixture(scope='module')
def ps(tmp_path_factory):
    p = tmp_path_factory.mktemp('ps')/'d'
    return p, generate_paperscale(p, 30, 'float16', seed=1, chunk=8, progress=False)

def test_generator_shapes(ps):
    from vsr_cic.data import load_dataset
    p, g = ps
    d = load_dataset(p)                                   # validates every image and caption record
    assert len(d.images) == 30 and len(d.captions) == g['captions'] == 150
    assert {r['split'] for r in d.images.values()} >= {'train'}
    with h5py.File(p/'features.hdf5', 'r') as h:
        n = [h[f'{i}_features'].shape[0] for i in d.images]
        assert all(MIN_PROP <= k <= MAX_PROP for k in n) and len(set(n)) > 5
        f = h['ps000000_features']
        assert f.shape[1] == FEAT_D and f.dtype == np.float16 and f.chunks is None   # contiguous: one read per key
        assert h['ps000000_cls_prob'].shape[1] == N_CLASSES and (f[()] >= 0).all()
    r = d.features('ps000003')                           # boxes inside the image, read back as float32
    assert r['feats'].dtype == np.float32 and r['feats'].shape == (n[3], FEAT_D)
    with pytest.raises(ValueError, match="dtype must be one of"): generate_paperscale(p.parent/'x', 5, 'int8')
    with pytest.raises(ValueError, match="n_images must be in"): generate_paperscale(p.parent/'x', 0)

def test_budgeted_loader_matches_unbudgeted(ps):
    "A cache far below the file (with 2 workers, each its own handle and half the budget) gives the same batches"
    from vsr_cic.loader import make_loader, build_vocabs
    p, _ = ps
    voc = build_vocabs(p)
    one_image = 60 * FEAT_D * 4
    runs = [list(make_loader(p, 'caption', batch_size=16, vocab=voc, shuffle=True, dense=True, **kw))
            for kw in (dict(cache=False), dict(cache_bytes=2 * one_image, num_workers=2))]
    assert len(runs[0]) == len(runs[1]) > 1
    for a, b in zip(*runs):
        assert a['caption_id'] == b['caption_id']
        assert torch.equal(a['regions'], b['regions']) and torch.equal(a['words'], b['words'])

def test_budget_bounds_cache(ps):
    from vsr_cic.loader import FeatureStore
    p, _ = ps
    budget = 3 * 60 * (FEAT_D + 4 + N_CLASSES) * 4
    st = FeatureStore(p/'features.hdf5', cache_bytes=budget)
    ids = [f'ps{k:06d}' for k in range(30)]
    got = st.get_many(ids)
    assert st.cached_bytes <= budget and 0 < len(st._mem) < 30 and not st.fits()
    assert [g['feats'].shape[0] for g in got] == [st.get(i)['feats'].shape[0] for i in ids]

def test_run_all_paper_scale_quick(tmp_path):
    out = tmp_path/'r.json'
    p = subprocess.run([sys.executable, str(ROOT/'bench'/'run_all.py'), '--paper-scale', '--quick', '--out', str(out)],
                       capture_output=True, text=True, cwd=ROOT)
    assert p.returncode == 0, p.stderr[-3000:]
    r = json.loads(out.read_text())
    from run_all import PAPER_REQUIRED
    for k in PAPER_REQUIRED: assert isinstance(r.get(k), float), (k, r.get(k), r['paper_scale']['benches'])
    assert r['paper_scale']['mode'] == 'quick' and 'Paper-scale summary' in p.stdout

def test_lazy_dataset_same_examples_compact(ps):
    "A loader dataset opened from a path keeps no caption records (lazy, packed) and gives what an eager one gives"
    from vsr_cic.loader import CaptionDataset, GSRLDataset
    from vsr_cic.data import load_dataset, CaptionFile
    p, _ = ps
    eager_data = load_dataset(p)
    for cls in (CaptionDataset, GSRLDataset):
        lazy, eager = cls(p), cls(eager_data)
        assert isinstance(lazy.data.captions, CaptionFile) and isinstance(eager.data.captions, list)
        assert len(lazy) == len(eager) > 8 and list(lazy.examples) == list(eager.examples)
        assert lazy.examples.nbytes / len(lazy) < 1024          # bytes per example; a dict of lists is several KB
        b1, b2 = lazy.collate([lazy[i] for i in range(8)]), eager.collate([eager[i] for i in range(8)])
        assert b1.keys() == b2.keys()
        for k in b1: assert torch.equal(b1[k], b2[k]) if torch.is_tensor(b1[k]) else b1[k] == b2[k], k
