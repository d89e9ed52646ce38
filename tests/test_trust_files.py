"""Trust boundaries, round two (issue 32): a hostile corpus for the surfaces round one left open — paths inside data
files, derived datasets, run folders of every trainer, HDF5 files, checkpoint configs, own-photo JSON, COCO files,
long captions, dataset fields and failed writes. One test (or one parametrized group) per finding of the issue; each
calls the entry points that existed before the issue (read_coco, build, write_dataset, load_dataset, check_inputs,
train_gsrl, train_verbs, train_captioner, load_gsrl, load_checkpoint, photo_proposals, load_photo_spec, VSR.parse,
analyse, atomic_save) and matches the message, so that it fails on the code before the fix. What every one asserts:
nothing is written outside the folder given, no finished run or user file is overwritten, nothing hangs (the FIFO
cases run in a subprocess with a deadline) and nothing allocates past the stated bounds."""
import json, os, shutil, subprocess, sys, textwrap
from pathlib import Path
import h5py, numpy as np, pytest, torch
from conftest import ROOT

from vsr_cic.data import load_dataset, write_dataset, DataError
from vsr_cic.loader import make_toy_dataset
from vsr_cic.train import check_inputs, load_checkpoint, atomic_save

SHORT = 600


def raises(fn, *parts, kind=Exception):
    "Call `fn`; it must raise `kind` and the message must contain every part (and stay short); returns the message"
    with pytest.raises(kind) as e: fn()
    msg = str(e.value)
    for p in parts: assert p in msg, (p, type(e.value).__name__, msg)
    assert len(msg) < SHORT, msg
    return msg


def snapshot(root:Path)->dict:
    "Every file under `root` with its size and modification time (the run lock's pid note aside: each call rewrites it)"
    return {str(p.relative_to(root)): (p.stat().st_size, p.stat().st_mtime_ns) for p in sorted(root.rglob('*'))
            if p.is_file() and p.name != '.vsr_cic_run.lock'}


@pytest.fixture(scope='module')
def toy(tmp_path_factory):
    return make_toy_dataset(tmp_path_factory.mktemp('trust2')/'toy')


def copy(toy, tmp_path, name='d'):
    return Path(shutil.copytree(toy, tmp_path/name))


def run_py(code:str, timeout:int=120)->subprocess.CompletedProcess:
    "Run python code in a fresh interpreter that imports this checkout; a hang fails the test instead of hanging it"
    env = {**os.environ, 'PYTHONPATH': str(ROOT)}
    return subprocess.run([sys.executable, '-c', textwrap.dedent(code)], capture_output=True, text=True, timeout=timeout,
                          env=env, cwd=ROOT)


# ------------------------------------------------------------------ 1. paths read from data files stay in their folder
def _coco(tmp_path, file_name, bbox=(10, 10, 20, 20)):
    cap, inst = tmp_path/'captions.json', tmp_path/'instances.json'
    im = {'id': 1, 'file_name': file_name, 'width': 64, 'height': 64}
    cap.write_text(json.dumps({'images': [im], 'annotations': [{'id': 5, 'image_id': 1, 'caption': 'a man rides a horse'}]}))
    inst.write_text(json.dumps({'images': [im], 'categories': [{'id': 1, 'name': 'person'}],
                                'annotations': [{'id': 9, 'image_id': 1, 'category_id': 1, 'bbox': list(bbox)}]}))
    return cap, inst

@pytest.mark.parametrize('name', ['../../victim/x.jpg', '../victim/x.jpg', '/abs/x.jpg', 'link.jpg'])
def test_coco_file_name_cannot_leave_image_dir(tmp_path, name):
    from vsr_cic.readers import read_coco
    victim = tmp_path/'victim'; victim.mkdir(); (victim/'x.jpg').write_bytes(b'secret')
    images = tmp_path/'coco'/'images'; images.mkdir(parents=True)
    (images/'link.jpg').symlink_to(victim/'x.jpg')                          # a "picture" that is a link out of the folder
    cap, inst = _coco(tmp_path, name)
    raises(lambda: read_coco(cap, inst, image_dir=images), 'file_name', kind=ValueError)

def test_build_never_reads_or_writes_outside_its_folders(tmp_path, toy):
    "Records naming '../victim/x.jpg': build refuses before copying, and nothing appears outside out_dir"
    from vsr_cic.readers import Records
    from vsr_cic.build import build
    victim = tmp_path/'victim'; victim.mkdir(); (victim/'x.jpg').write_bytes(b'secret')
    images = tmp_path/'coco'/'images'; images.mkdir(parents=True)
    ds = load_dataset(toy)
    c = dict(ds.captions[0]); im = {**ds.images[c['image_id']], 'file': '../../victim/x.jpg', 'split': 'train'}
    rec = Records(dict(ds.meta), [im], [c], {im['image_id']: ds.features(im['image_id'])['boxes']},
                  {im['image_id']: ['man'] * len(ds.features(im['image_id'])['boxes'])})
    before = snapshot(tmp_path)
    raises(lambda: build(rec, tmp_path/'o'/'built', images, feature_kind='class', splits=None, progress=False),
           '../../victim/x.jpg', kind=ValueError)
    after = {k: v for k, v in snapshot(tmp_path).items() if not k.startswith('o/built/')}
    assert after == before, 'build wrote outside out_dir'

def test_dataset_file_fields_stay_inside(toy, tmp_path):
    for bad in ('../victim.jpg', '/etc/passwd'):
        q = copy(toy, tmp_path, bad.replace('/', '_'))
        lines = (q/'images.jsonl').read_text().splitlines()
        r = json.loads(lines[0]); r['file'] = bad; lines[0] = json.dumps(r)
        (q/'images.jsonl').write_text('\n'.join(lines) + '\n')
        raises(lambda: load_dataset(q), 'images.jsonl', "'img0'", 'field file', kind=DataError)


# ------------------------------------------------------------------ 2. a derived dataset never writes into its source
def test_feature_file_outside_the_folder_is_never_written(toy, tmp_path):
    victim = tmp_path/'victim.txt'; victim.write_text('my notes')
    ds = load_dataset(toy)
    meta = {**ds.meta, 'feature_file': '../victim.txt'}
    feats = [(i, *(ds.features(i)[k] for k in ('feats', 'boxes', 'cls_prob'))) for i in ds.images]
    raises(lambda: write_dataset(tmp_path/'derived', meta, list(ds.images.values()), list(ds.captions), feats),
           'feature_file', '../victim.txt', kind=DataError)
    assert victim.read_text() == 'my notes'

def test_reading_a_feature_file_outside_the_folder_is_refused(toy, tmp_path):
    q = copy(toy, tmp_path)
    shutil.move(q/'features.hdf5', tmp_path/'elsewhere.hdf5')
    m = json.loads((q/'meta.json').read_text()); m['feature_file'] = '../elsewhere.hdf5'
    (q/'meta.json').write_text(json.dumps(m))
    raises(lambda: load_dataset(q).features('img0'), 'feature_file', '../elsewhere.hdf5', kind=DataError)
    (q/'features.hdf5').symlink_to(tmp_path/'elsewhere.hdf5')               # a link out of the folder
    m['feature_file'] = 'features.hdf5'; (q/'meta.json').write_text(json.dumps(m))
    raises(lambda: load_dataset(q).features('img0'), 'outside', kind=DataError)

def test_derived_dataset_from_a_subset_leaves_the_source_intact(toy, tmp_path):
    "corpus_subset shares the source's features; a dataset written from the subset (add_scene_region's path) writes its own file"
    from vsr_cic.data import corpus_subset
    src = copy(toy, tmp_path, 'train')
    for f in ('images.jsonl', 'captions.jsonl'):                            # corpus-prefixed ids, as concat_records makes
        recs = [json.loads(l) for l in (src/f).read_text().splitlines() if l.strip()]
        for r in recs:
            r['image_id'] = 'coco:' + r['image_id']
            if 'caption_id' in r: r['caption_id'] = 'coco:' + r['caption_id']
        (src/f).write_text(''.join(json.dumps(r) + '\n' for r in recs))
    with h5py.File(src/'features.hdf5', 'a') as h:
        for k in list(h): h.move(k, 'coco:' + k)
    before = (src/'features.hdf5').read_bytes()
    sub = load_dataset(corpus_subset(src, tmp_path/'gsrl_train', ['coco']))
    assert sub.feature_path.resolve().parent == sub.path.resolve()
    feats = [(i, sub.features(i)['feats'] + 1, sub.features(i)['boxes'], sub.features(i)['cls_prob']) for i in sub.images]
    write_dataset(tmp_path/'gsrl_scene', sub.meta, list(sub.images.values()), list(sub.captions), feats)
    write_dataset(sub.path, sub.meta, list(sub.images.values()), list(sub.captions), feats)     # even over the subset itself
    assert (src/'features.hdf5').read_bytes() == before, "the source's feature file changed"
    load_dataset(src).features('coco:img0')


# ------------------------------------------------------------------ 3, 4. run folders of every trainer
GSRL_KW = dict(epochs=1, batch_size=16, d_emb=8, d_att=16, hidden=16, device='cpu')

@pytest.fixture(scope='module')
def gsrl_run(toy, tmp_path_factory):
    from vsr_cic.train_planners import train_gsrl
    out = tmp_path_factory.mktemp('g')/'run'
    train_gsrl(toy, out, **GSRL_KW)
    return out

def test_train_gsrl_refuses_another_dataset_in_a_finished_run(gsrl_run, toy, tmp_path):
    from vsr_cic.train_planners import train_gsrl
    other = copy(toy, tmp_path, 'ds_b')
    before = snapshot(gsrl_run)
    raises(lambda: train_gsrl(other, gsrl_run, **GSRL_KW), 'run_config.json', 'ds_b')
    assert snapshot(gsrl_run) == before, 'verbs_vocab.json or the weights changed'

def test_train_verbs_refuses_another_dataset_in_a_finished_run(toy, tmp_path):
    from vsr_cic.verbs import train_verbs
    kw = dict(epochs=1, batch_size=8, hidden=8, device='cpu')
    train_verbs(toy, tmp_path/'v', **kw)
    before = snapshot(tmp_path/'v')
    raises(lambda: train_verbs(copy(toy, tmp_path, 'ds_b'), tmp_path/'v', **kw), 'run_config.json', 'ds_b')
    assert snapshot(tmp_path/'v') == before

@pytest.mark.parametrize('trainer', ['train_captioner', 'train_gsrl', 'train_planner', 'train_verbs'])
def test_every_trainer_refuses_a_users_folder(toy, tmp_path, trainer):
    "A non-empty folder without the run marker is a user's: refused, nothing written or replaced"
    import vsr_cic.captioning, vsr_cic.train_planners, vsr_cic.verbs
    fn = {'train_captioner': vsr_cic.captioning.train_captioner, 'train_gsrl': vsr_cic.train_planners.train_gsrl,
          'train_planner': vsr_cic.train_planners.train_planner, 'train_verbs': vsr_cic.verbs.train_verbs}[trainer]
    mine = tmp_path/'my_folder'; mine.mkdir()
    for f in ('model.pt', 'metrics.json', 'samples.txt', 'curves.png'): (mine/f).write_text(f'my own {f}')
    before = snapshot(mine)
    raises(lambda: fn(toy, mine), 'not a vsr_cic run folder', "'metrics.json'")
    assert snapshot(mine) == before

@pytest.mark.parametrize('out', ['', '  '])
def test_empty_out_dir_is_refused(toy, tmp_path, monkeypatch, out):
    from vsr_cic.captioning import train_captioner
    from vsr_cic.train_planners import train_gsrl
    monkeypatch.chdir(tmp_path)
    raises(lambda: train_captioner(toy, out), 'out_dir')
    raises(lambda: train_gsrl(toy, out), 'out_dir')
    assert not any(tmp_path.iterdir()), 'a run was written into the current directory'


# ------------------------------------------------------------------ 5. one trainer per run folder at a time
def test_a_second_trainer_on_a_locked_folder_names_the_holder(toy, tmp_path):
    "Another process trains in runs/x (holds its lock): a second trainer stops at once, naming that process's pid"
    from vsr_cic.captioning import train_captioner
    from vsr_cic.train_planners import train_gsrl
    out = tmp_path/'x'
    p = subprocess.Popen([sys.executable, '-c', textwrap.dedent(f"""
        import sys, time
        from vsr_cic.guards import claim_run, run_lock
        with run_lock(claim_run({str(out)!r}, 'train_captioner')):
            print('holding', flush=True); sys.stdin.read()
        """)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        env={**os.environ, 'PYTHONPATH': str(ROOT)})
    try:
        line = p.stdout.readline()
        assert line.strip() == 'holding', p.stderr.read()
        raises(lambda: train_captioner(toy, out, epochs_xe=1, epochs_rl=0, progress=False), f'pid {p.pid}', 'in use')
        raises(lambda: train_gsrl(toy, out, **GSRL_KW), f'pid {p.pid}')
        assert not (out/'ckpt').exists() and not (out/'gsrl').exists()
    finally:
        p.stdin.close(); p.wait(30)
    assert p.returncode == 0


# ------------------------------------------------------------------ 6, 8. HDF5 files: bounds, external data, special files
def _h5(q, fn):
    with h5py.File(q/'features.hdf5', 'r+') as h: fn(h, q)

def _declared(h, q):          # declared (1000, 4000) float32 = 16 MB, never written: the file stays small
    del h['img1_features']; h.create_dataset('img1_features', shape=(1000, 4000), dtype='f4')
def _huge(h, q):              # the (4, 5e8): 7.5 GB if allocated
    del h['img1_features']; h.create_dataset('img1_features', shape=(4, 500_000_000), dtype='f4')
def _external(h, q):          # img1_features stored in another file's bytes
    a = h['img1_features'][()]; (q/'raw.bin').write_bytes(np.ones_like(a).tobytes())
    del h['img1_features']; h.create_dataset('img1_features', shape=a.shape, dtype='f4', external=[(str(q/'raw.bin'), 0, a.nbytes)])
def _elink(h, q):
    with h5py.File(q/'other.hdf5', 'w') as o: o['x'] = h['img1_features'][()]
    del h['img1_features']; h['img1_features'] = h5py.ExternalLink(str(q/'other.hdf5'), 'x')
def _softlink(h, q):
    del h['img1_features']; h['img1_features'] = h5py.SoftLink('/img0_features')
def _complex(h, q):
    a = h['img1_features'][()]; del h['img1_features']; h['img1_features'] = a.astype(np.complex64)
def _strings(h, q):
    a = h['img1_features'][()]; del h['img1_features']; h['img1_features'] = np.array([[b'x'] * a.shape[1]] * len(a))
def _rank3(h, q):
    a = h['img1_features'][()]; del h['img1_features']; h['img1_features'] = a[:, :, None]

HOSTILE_H5 = {'declared': (_declared, 'unwritten'), 'huge': (_huge, 'more than'), 'external storage': (_external, 'external'),
              'external link': (_elink, 'ExternalLink'), 'soft link': (_softlink, 'SoftLink'), 'complex': (_complex, 'dtype'),
              'strings': (_strings, 'dtype'), 'rank 3': (_rank3, 'shape')}

@pytest.mark.parametrize('case', list(HOSTILE_H5))
def test_hostile_hdf5_refused_before_reading(toy, tmp_path, case):
    fn, part = HOSTILE_H5[case]
    q = copy(toy, tmp_path); _h5(q, fn)
    raises(lambda: check_inputs(q), 'features.hdf5', "'img1_features'", part)
    raises(lambda: load_dataset(q).features('img1'), 'img1_features', part)
    from vsr_cic.loader import CaptionDataset
    raises(lambda: CaptionDataset(load_dataset(q), 'train').store.get('img1'), 'img1_features', part)

@pytest.mark.parametrize('what', ['features.hdf5', 'best.pt'])
def test_fifo_is_refused_not_waited_on(toy, tmp_path, what):
    "A FIFO where a file is expected: refused at once (run in a subprocess: on a reader that opens it, the test would hang)"
    q = copy(toy, tmp_path)
    if what == 'features.hdf5':
        (q/'features.hdf5').unlink(); os.mkfifo(q/'features.hdf5')
        call = f"from vsr_cic.train import check_inputs; check_inputs({str(q)!r})"
    else:
        (tmp_path/'g'/'gsrl').mkdir(parents=True); os.mkfifo(tmp_path/'g'/'gsrl'/'best.pt')
        call = f"from vsr_cic.runs import load_gsrl; load_gsrl({str(tmp_path/'g')!r})"
    try: r = run_py(f"{call}\n", timeout=120)
    except subprocess.TimeoutExpired: pytest.fail(f'the reader hung on a FIFO named {what}')
    assert r.returncode != 0 and 'FIFO' in r.stderr, r.stderr[-2000:]

def test_checkpoint_config_is_checked_before_the_module_is_built(gsrl_run, tmp_path):
    "n_verbs = 10**9 would allocate 32 GB in GSRL's embedding: refused from the config and the meta-device shapes"
    from vsr_cic.runs import load_gsrl
    from vsr_cic.train import CheckpointError
    for key, value, part in (('n_verbs', 10**9, 'beyond'), ('n_verbs', 10**6, 'does not fit its own config'),
                             ('hidden', '16', "hidden"), ('dropout', float('nan'), 'not finite')):
        cp = Path(shutil.copytree(gsrl_run, tmp_path/f'{key}{value}'))
        f = cp/'gsrl'/'best.pt'
        ck = torch.load(f, weights_only=True); ck['config'][key] = value; torch.save(ck, f)
        raises(lambda: load_gsrl(cp), 'best.pt', part, kind=CheckpointError)

def test_captioner_checkpoint_config_checked(tmp_path):
    "vocab_size = 1e9 in model.pt (64 GB of embeddings): refused before make_captioner builds anything"
    from vsr_cic.pipeline import load_captioner
    from vsr_cic.train import CheckpointError
    from vsr_cic.baselines import make_captioner
    net = make_captioner('ours', 30, 8, hidden=16)
    (tmp_path/'c').mkdir()
    atomic_save({'model': net.state_dict(), 'name': 'ours', 'config': {'hidden': 16}, 'vocab_size': 10**9, 'feat_dim': 8},
                tmp_path/'c'/'model.pt')
    raises(lambda: load_captioner(tmp_path/'c'), 'model.pt', 'beyond', kind=CheckpointError)


# ------------------------------------------------------------------ 7. long captions: a bound that names itself
def test_long_caption_refused_by_srl_entry_and_dataset(toy):
    from vsr_cic.build import analyse
    from vsr_cic.data import validate_caption, MAX_TOKENS
    raises(lambda: analyse([['a'] * 2_000]), 'MAX_TOKENS', '2,000 tokens', kind=ValueError)
    c = dict(load_dataset(toy).captions[0])
    raises(lambda: validate_caption({**c, 'tokens': ['a'] * (MAX_TOKENS + 1)}), "caption 'c0'", 'field tokens', 'MAX_TOKENS', kind=DataError)
    raises(lambda: validate_caption({**c, 'tokens': ['x' * 10**6] + c['tokens'][1:]}), 'field tokens[0]', 'MAX_TOKEN_CHARS', kind=DataError)

def test_build_leaves_long_captions_out_and_says_so(tmp_path):
    "build counts a 2,000-word caption as dropped ('longer than MAX_TOKENS…') instead of labelling it for seconds"
    from vsr_cic.readers import Records
    from vsr_cic.build import build, LONG_CAPTION
    from vsr_cic.srl import GoldSRL
    im = {'image_id': '1', 'split': 'train', 'width': None, 'height': None, 'file': None, 'sets': []}
    caps = [{'caption_id': '1_0', 'image_id': '1', 'caption': 'x', 'tokens': ['man'] * 2000, 'frames': [], 'slots': []}]
    rep = build(Records({'name': 'long', 'format_version': 1, 'grouping': 'class', 'classes': ['__background__', 'man'],
                         'feature_file': 'features.hdf5'}, [im], caps), tmp_path/'b', text_only=True, splits=None,
                srl=GoldSRL([]), progress=False)
    assert rep['captions_dropped'] == {LONG_CAPTION: 1}, rep['captions_dropped']


# ------------------------------------------------------------------ 9. boxes: NaN, inverted, outside, too many
BAD_BOXES = {'NaN': [[float('nan'), 1, 50, 50]], 'inf': [[0, 0, float('inf'), 5]], 'inverted': [[50, 50, 10, 10]],
             'far outside': [[0, 0, 5000, 5000]], '10,000 boxes': [[0, 0, 5, 5]] * 10_000}

@pytest.mark.parametrize('case', list(BAD_BOXES))
def test_own_photo_boxes_checked(case):
    from vsr_cic.photo_proposals import photo_proposals
    b = BAD_BOXES[case]
    raises(lambda: photo_proposals(np.zeros((100, 100, 3), np.uint8), b, ['person'] * len(b), ['__background__', 'person'],
                                   'mine', feature_kind='class'), "photo 'mine'", kind=ValueError)

@pytest.mark.parametrize('spec,part', [
    ({'image': 'x.png', 'boxes': [{'class': 'person', 'box': [float('nan'), 1, 50, 50]}]}, 'finite'),
    ({'image': 'x.png', 'boxes': [{'class': 'person', 'box': [True, 1, 50, 50]}]}, 'boxes[0]'),
    ({'image': 'x.png', 'boxes': [{'class': 5, 'box': [0, 1, 50, 50]}]}, 'boxes[0]'),
    ({'image': 'x.png', 'boxes': {'class': 'person'}}, 'field boxes'),
    ({'image': 'x.png', 'boxes': [{'class': 'person', 'box': [0, 0, 5, 5]}] * 10_000}, 'MAX_PHOTO_BOXES'),
    ({'image': '../../etc/passwd', 'boxes': []}, 'leaves its folder'),
    ({'image': 'x.png', 'boxes': [], 'vsr': ['ride']}, 'field vsr'),
    ([1, 2, 3], 'JSON object')], ids=['NaN', 'bool', 'class int', 'boxes dict', 'too many', 'escape', 'vsr list', 'list'])
def test_own_photo_json_hostile(tmp_path, spec, part):
    from vsr_cic.photo_proposals import load_photo_spec
    f = tmp_path/'photo.json'; f.write_text(json.dumps(spec))
    raises(lambda: load_photo_spec(f, ['__background__', 'person']), 'photo.json', part)

def test_own_photo_hdf5_bounds(tmp_path):
    from vsr_cic.photo_proposals import load_photo_spec
    with h5py.File(tmp_path/'dets.hdf5', 'w') as h:
        h.create_dataset('7_boxes', shape=(4, 50_000_000), dtype='f4'); h['7_cls_prob'] = np.ones((4, 2), np.float32)
    raises(lambda: load_photo_spec((tmp_path/'dets.hdf5', '7', 'x.png'), ['__background__', 'person']), '7_boxes', 'more than')

@pytest.mark.parametrize('bbox', [(float('nan'), 1, 50, 50), (1, 1, float('inf'), 5), (True, 1, 5, 5)], ids=['NaN', 'inf', 'bool'])
def test_coco_bbox_must_be_finite(tmp_path, bbox):
    from vsr_cic.readers import read_coco
    cap, inst = _coco(tmp_path, 'x.jpg', bbox)
    raises(lambda: read_coco(cap, inst), 'instances.json', 'annotations[0]', 'finite', kind=ValueError)


# ------------------------------------------------------------------ 10. every dataset field typed and bounded, named on read
def _edit_caption(fn):
    def edit(q):
        lines = (q/'captions.jsonl').read_text().splitlines()
        r = json.loads(lines[0]); fn(r); lines[0] = json.dumps(r)
        (q/'captions.jsonl').write_text('\n'.join(lines) + '\n')
    return edit

def _edit_image(fn, i=0):
    def edit(q):
        lines = (q/'images.jsonl').read_text().splitlines()
        r = json.loads(lines[i]); fn(r, lines); lines[i] = json.dumps(r)
        (q/'images.jsonl').write_text('\n'.join(lines) + '\n')
    return edit

def _edit_meta(fn):
    def edit(q):
        m = json.loads((q/'meta.json').read_text()); fn(m); (q/'meta.json').write_text(json.dumps(m))
    return edit

def _set(path, value):
    def fn(r):
        x = r
        for k in path[:-1]: x = x[k]
        x[path[-1]] = value
    return fn

def _same_file(r, lines):
    other = json.loads(lines[1]); r['file'] = 'pic.jpg'; other['file'] = 'pic.jpg'; lines[1] = json.dumps(other)

def _no_proposals(q):
    _edit_image(lambda r, l: r.update(sets=[]), 1)(q)
    with h5py.File(q/'features.hdf5', 'r+') as h:
        for k in ('features', 'boxes', 'cls_prob'):
            a = h[f'img1_{k}'][()]; del h[f'img1_{k}']; h[f'img1_{k}'] = a[:0]
    for f in ('captions.jsonl',):                     # its captions point at sets it no longer has
        lines = [l for l in (q/f).read_text().splitlines() if json.loads(l)['image_id'] != 'img1']
        (q/f).write_text('\n'.join(lines) + '\n')

def _zero_width(q):
    with h5py.File(q/'features.hdf5', 'r+') as h:
        a = h['img1_features'][()]; del h['img1_features']; h['img1_features'] = a[:, :0]

FIELDS = {   # case: (edit, parts of the message: file, id, field)
    'entities: 5': (_edit_caption(_set(['frames', 0, 'args', 0, 'entities'], 5)), ["caption 'c0'", 'entities', 'must be a list']),
    'entity as a string': (_edit_caption(_set(['frames', 0, 'args', 0, 'entities', 0], 'man')), ["caption 'c0'", 'entities[0]']),
    'image_id a list': (_edit_caption(_set(['image_id'], ['img0'])), ["caption 'c0'", 'field image_id']),
    'caption_id a dict': (_edit_caption(_set(['caption_id'], {'a': 1})), ['field caption_id']),
    'slot label LOC-99': (_edit_caption(_set(['slots', 3, 'labels'], [[0, 'LOC-99']])), ["caption 'c0'", 'slots[3].labels', "'LOC-99'"]),
    'slot label LOC-0': (_edit_caption(_set(['slots', 3, 'labels'], [[0, 'LOC-0']])), ["caption 'c0'", 'slots[3].labels', "'LOC-0'"]),
    'slot label V-2': (_edit_caption(_set(['slots', 1, 'labels'], [[0, 'V-2']])), ['slots[1].labels', "'V-2'"]),
    'slot label not a string': (_edit_caption(_set(['slots', 1, 'labels'], [[0, 7]])), ['slots[1].labels']),
    'slot a string': (_edit_caption(_set(['slots', 1], 'V')), ['slots[1]']),
    'verb RIDE': (_edit_caption(_set(['frames', 0, 'verb'], 'RIDE')), ["caption 'c0'", 'frames[0].verb', "'ride'"]),
    'verb ARG0': (_edit_caption(_set(['frames', 0, 'verb'], 'ARG0')), ['frames[0].verb', 'semantic role']),
    'verb "ride: ARG0"': (_edit_caption(_set(['frames', 0, 'verb'], 'ride: ARG0')), ['frames[0].verb', 'not a lemma']),
    'verb a number': (_edit_caption(_set(['frames', 0, 'verb'], 7)), ['frames[0].verb']),
    'args a dict': (_edit_caption(_set(['frames', 0, 'args'], {'role': 'ARG0'})), ['frames[0].args']),
    'token of 10^6 characters': (_edit_caption(_set(['tokens', 0], 'x' * 10**6)), ['tokens[0]', 'MAX_TOKEN_CHARS']),
    'caption a number': (_edit_caption(_set(['caption'], 5)), ['field caption']),
    'width 10^40': (_edit_image(lambda r, l: r.update(width=10**40)), ["images.jsonl image 'img0'", 'field width', 'MAX_IMAGE_SIDE']),
    'width True': (_edit_image(lambda r, l: r.update(width=True)), ["image 'img0'", 'field width']),
    'float index in sets': (_edit_image(lambda r, l: r.update(sets=[[0.0, 3], [1], [2, 4], [5]])), ["image 'img0'", 'field sets[0]']),
    'huge index in sets': (_edit_image(lambda r, l: r.update(sets=[[10**12], [1], [2, 4], [5]])), ["image 'img0'", 'field sets[0]']),
    'same picture under two ids': (_edit_image(_same_file), ['images.jsonl', "'img0'", "'img1'", "'pic.jpg'"]),
    'duplicate class names': (_edit_meta(lambda m: m.update(classes=m['classes'][:-1] + ['man'])), ['meta.json', 'field classes', "['man']"]),
    'class not a string': (_edit_meta(lambda m: m.update(classes=m['classes'][:-1] + [7])), ['meta.json', 'field classes']),
    'feature_file absolute': (_edit_meta(lambda m: m.update(feature_file='/tmp/x.hdf5')), ['meta.json', 'feature_file']),
    'zero proposals': (_no_proposals, ['features.hdf5', "'img1'", 'proposals']),
    'zero-width features': (_zero_width, ['features.hdf5', "'img1'", 'width 0']),
}

@pytest.mark.parametrize('case', list(FIELDS))
def test_wrong_typed_field_names_file_id_and_field(toy, tmp_path, case):
    "Each is refused on read (load_dataset, or the first feature read / check_inputs) with file, record id and field"
    edit, parts = FIELDS[case]
    q = copy(toy, tmp_path); edit(q)
    def read():
        ds = load_dataset(q)
        check_inputs(q)
        for i in ds.images: ds.features(i)
    raises(read, *parts, kind=DataError)

def test_complex_features_refused_on_write(toy, tmp_path):
    ds = load_dataset(toy)
    feats = [(i, ds.features(i)['feats'] * (1 + 1j), ds.features(i)['boxes'], ds.features(i)['cls_prob']) for i in ds.images]
    raises(lambda: write_dataset(tmp_path/'c', dict(ds.meta), list(ds.images.values()), list(ds.captions), feats),
           "'img0'", 'complex', kind=DataError)

@pytest.mark.parametrize('text', ["r'''': ARG0", 'ride-: ARG0', 'q9999', 'the: ARG0', 'x' * 10**6, 'NEG*3', 'B-C-ARG0',
                                  'ride: dıſ'], ids=lambda t: t[:12])
def test_vsr_verbs_are_lemmas(text):
    from vsr_cic.vsr import VSR, VSRError
    raises(lambda: VSR.parse(text), kind=VSRError)

def test_kelvin_sign_folds_to_ascii():
    from vsr_cic.vsr import VSR
    assert VSR.parse('\u212aick: ARG0').verb == 'kick'


# ------------------------------------------------------------------ disk full: the path and the cause
def test_disk_full_names_the_checkpoint_and_the_cause(tmp_path):
    "A file-size limit (RLIMIT_FSIZE, as a full disk or quota would) while saving: an OSError naming the file and the cause"
    r = run_py(f"""
        import resource, signal, torch
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (20_000, resource.getrlimit(resource.RLIMIT_FSIZE)[1]))
        from vsr_cic.train import atomic_save
        try: atomic_save({{'w': torch.zeros(100_000)}}, {str(tmp_path/'run'/'best.pt')!r})
        except OSError as e: print('OSError', e)
        """)
    assert f"{tmp_path/'run'/'best.pt'}" in r.stdout and 'OSError' in r.stdout, (r.stdout, r.stderr[-1500:])
    assert 'File too large' in r.stdout or 'write failed' in r.stdout, r.stdout
    assert not [p for p in (tmp_path/'run').iterdir() if p.name != 'best.pt'], 'a temporary file was left behind'

@pytest.mark.skipif(not Path('/sys/kernel').is_dir(), reason="needs Linux sysfs: /sys refuses new files even to root")
def test_permission_error_names_the_file_and_the_cause():
    from vsr_cic.data import _write_jsonl
    raises(lambda: atomic_save({'w': torch.ones(2)}, '/sys/vsr_cic_test.pt'), "'/sys/vsr_cic_test.pt'", 'checkpoint', kind=OSError)
    raises(lambda: _write_jsonl(Path('/sys/images.jsonl'), [{'a': 1}]), "'/sys/images.jsonl'", kind=OSError)
