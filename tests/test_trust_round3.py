"""Trust boundaries, round three (issue 43): the photo panel's files, results publishing, run archives, the shipped
photo bundle, the `vsr_caption_photo` CLI and box records, pictures, the panel's observers and round two's leftovers.
One group per surface, each calling the entry points that existed before the issue (save_photo_json, OwnPhotoPanel,
publish, bench/gpu/gpu_real_language.py decode/pack/score, check_fingerprint, load_photo_models, main, box_record,
check_drawn_boxes, read_picture, load_image, FeatureStore, claim_run, train_captioner_cli) with hostile inputs. What
every one asserts: nothing is lost or written outside the folder given, nothing hangs (FIFO and device cases refuse
before opening), nothing allocates past a stated bound, and the refusal names the file, field or value."""
import gzip, io, json, math, os, shutil, subprocess, sys, tarfile, textwrap
from pathlib import Path
import h5py, numpy as np, pytest
from conftest import ROOT
from PIL import Image

from vsr_cic.guards import UnsafeInput, RunFolderError

from test_trust_files import SHORT, raises   # one `raises`: the refusal names what it refuses, briefly


def png(path, size=(40, 30)):
    Image.fromarray(np.full((size[1], size[0], 3), 120, np.uint8)).save(path)
    return Path(path)


def snapshot(root:Path)->dict:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob('*')) if p.is_file() and not p.is_symlink()}


@pytest.fixture(scope='module')
def models():
    import torch
    torch.set_num_threads(1)
    from vsr_cic.own_photo import load_photo_models
    return load_photo_models()


BOX = {'class': 'person', 'box': [2, 2, 30, 25]}


def upload(panel, name, raw:bytes):
    "What the browser sends when a file is chosen in the panel's upload button"
    import datetime
    panel.upload.value = ({'name': name, 'content': memoryview(raw), 'type': 'image/png', 'size': len(raw),
                           'last_modified': datetime.datetime.now()},)


# ------------------------------------------------------------------ 1. the sidecar JSON never overwrites user files
FOREIGN = {                                             # what lies at <stem>.json before the panel saves boxes
    'run metrics': '{"CIDEr-D": 0.91, "epochs": 3}',
    'another picture': '{"image": "cat.png", "boxes": [{"class": "dog", "box": [1, 1, 9, 9]}]}',
    'list form (the CLI reads it)': '[{"class": "person", "box": [1, 1, 9, 9]}]',
    'not JSON': 'my notes, not JSON',
    'empty': '',
    'a number': '42',
    'boxes not a list': '{"image": "photo.png", "boxes": {"class": "dog"}}',
    'deep nesting': '[' * 50_000,
    'binary': '\x00\x01\x02',
    'image is a list': '{"image": ["photo.png"], "boxes": []}',
}

@pytest.mark.parametrize('case', list(FOREIGN))
def test_save_photo_json_never_replaces_a_file_that_is_not_this_pictures(tmp_path, case):
    from vsr_cic.own_photo import save_photo_json
    pic = png(tmp_path/'photo.png'); js = tmp_path/'photo.json'; js.write_text(FOREIGN[case])
    raises(lambda: save_photo_json(pic, [BOX]), 'photo.json', 'not saved', kind=ValueError)
    assert js.read_text() == FOREIGN[case]
    assert sorted(p.name for p in tmp_path.iterdir()) == ['photo.json', 'photo.png']      # no temporary file left

def test_a_picture_named_json_is_not_its_own_sidecar(tmp_path):
    from vsr_cic.own_photo import save_photo_json
    pic = png(tmp_path/'shot.png'); shot = tmp_path/'shot.json'; shutil.copy(pic, shot)
    before = shot.read_bytes()
    raises(lambda: save_photo_json(shot, [BOX]), 'shot.json', kind=ValueError)
    assert shot.read_bytes() == before

@pytest.mark.parametrize('link', ['photo.json', 'photo.json.tmp'])
def test_a_planted_link_never_redirects_the_write(tmp_path, link):
    from vsr_cic.own_photo import save_photo_json
    d = tmp_path/'pics'; d.mkdir(); pic = png(d/'photo.png')
    outside = tmp_path/'outside.txt'; outside.write_text('keep')
    os.symlink(outside, d/link)
    if link == 'photo.json':
        raises(lambda: save_photo_json(pic, [BOX]), 'symbolic link', kind=ValueError)
    else:                                                   # a private temporary file: the planted name is ignored
        js = save_photo_json(pic, [BOX]); assert not js.is_symlink() and json.loads(js.read_text())['image'] == 'photo.png'
    assert outside.read_text() == 'keep'

def test_own_sidecar_is_rewritten(tmp_path):
    from vsr_cic.own_photo import save_photo_json
    pic = png(tmp_path/'photo.png')
    save_photo_json(pic, [BOX]); js = save_photo_json(pic, [BOX, BOX], 'ride: ARG0, ARG1')
    spec = json.loads(js.read_text()); assert len(spec['boxes']) == 2 and spec['vsr'] == 'ride: ARG0, ARG1'

def test_opening_a_picture_writes_nothing(tmp_path, models):
    from vsr_cic.widgets import OwnPhotoPanel
    d = tmp_path/'run'; d.mkdir(); (d/'metrics.json').write_text('{"CIDEr-D": 0.9}'); png(d/'metrics.png')
    before = snapshot(d)
    panel = OwnPhotoPanel(models, tmp_path/'uploads', picture=d/'metrics.png')
    assert panel.picture is not None and snapshot(d) == before                          # the run's metrics kept
    panel.bbox.bboxes = [{'x': 2, 'y': 2, 'width': 20, 'height': 20, 'label': 'person'}]  # the user draws: refused, said
    assert 'not saved' in panel.saved.value and 'metrics.json' in panel.saved.value and snapshot(d) == before

def test_another_pictures_sidecar_is_neither_shown_nor_taken_over(tmp_path, models):
    from vsr_cic.widgets import OwnPhotoPanel
    png(tmp_path/'cat.png'); png(tmp_path/'cat.jpg')
    (tmp_path/'cat.json').write_text(FOREIGN['another picture'])
    panel = OwnPhotoPanel(models, tmp_path/'uploads', picture=tmp_path/'cat.jpg')
    assert panel.bbox.bboxes == [] and 'cat.png' in panel.error.value
    panel.bbox.bboxes = [{'x': 2, 'y': 2, 'width': 20, 'height': 20, 'label': 'person'}]
    assert (tmp_path/'cat.json').read_text() == FOREIGN['another picture'] and 'not saved' in panel.saved.value

def test_list_form_sidecar_is_shown_and_kept(tmp_path, models):
    from vsr_cic.widgets import OwnPhotoPanel
    png(tmp_path/'photo.png'); (tmp_path/'photo.json').write_text(FOREIGN['list form (the CLI reads it)'])
    panel = OwnPhotoPanel(models, tmp_path/'uploads', picture=tmp_path/'photo.png')
    assert [b['label'] for b in panel.bbox.bboxes] == ['person'] and panel.error.value == ''
    assert (tmp_path/'photo.json').read_text() == FOREIGN['list form (the CLI reads it)']

def test_downscaled_copy_never_overwrites_an_upload(tmp_path, models):
    from vsr_cic.widgets import OwnPhotoPanel
    up = tmp_path/'uploads'; up.mkdir()
    panel = OwnPhotoPanel(models, up)
    big = io.BytesIO(); Image.fromarray(np.zeros((10, 3000, 3), np.uint8)).save(big, format='png')
    small = io.BytesIO(); Image.fromarray(np.zeros((10, 20, 3), np.uint8)).save(small, format='png')
    upload(panel, 'x.shown.png', small.getvalue()); upload(panel, 'x.png', big.getvalue())
    assert (up/'x.shown.png').read_bytes() == small.getvalue()
    assert panel.scale < 1 and Path(panel.bbox.image).parent.name == '.shown'


# ------------------------------------------------------------------ 2. publish: a safe name, escaped cells, nothing half-written
def _repo(tmp_path):
    root = tmp_path/'repo'; (root/'nbs').mkdir(parents=True)
    (root/'README.md').write_text('# x\n<!-- results:demo -->\nold\n<!-- /results:demo -->\n')
    (root/'nbs'/'index.ipynb').write_text(json.dumps({'cells': [{'cell_type': 'markdown', 'metadata': {},
        'source': ['# x\n', '<!-- results:demo -->\n', 'old\n', '<!-- /results:demo -->']}]}))
    (root/'setup.py').write_text('setup()')
    return root

def _row(**kw):
    return {'method': 'ours', 'grounding': 'gsrl', 'preset': 'paper', 'verbs': 'all', 'n_captions': 10, 'test_set': 'photos',
            'CIDEr-D': 0.5, 'R_V': 0.4, **kw}

def _metrics(tmp_path, m, name='m.json'):
    f = tmp_path/name; f.write_text(json.dumps(m) if not isinstance(m, str) else m); return f

BAD_NAMES = ['../README', '../../x', '../setup', '/tmp/abs', '', ' ', '.', '..', 'a/b', 'a\\b', 'x\x00y', 'a\nb',
             'x' * 300, '.hidden', 'a b', 'demo -->', '<script>', 'dé\u202emo', None, 5]

@pytest.mark.parametrize('name', BAD_NAMES, ids=[repr(n)[:20] for n in BAD_NAMES])
def test_publish_name_stays_in_results(tmp_path, name):
    from vsr_cic.tables import publish
    root = _repo(tmp_path); f = _metrics(tmp_path, {'table1': [_row()]})
    before = snapshot(tmp_path)
    raises(lambda: publish(f, name, 'T', root), 'publish name', kind=ValueError)
    assert snapshot(tmp_path) == before

BAD_METRICS = {
    'not JSON': 'not json', 'a list': [1, 2], 'no table1': {'run': {}}, 'table1 a dict': {'table1': {'a': 1}},
    'row a string': {'table1': ['ours']}, 'method missing': {'table1': [{k: v for k, v in _row().items() if k != 'method'}]},
    'method a number': {'table1': [_row(method=5)]}, 'value a string': {'table1': [_row(**{'CIDEr-D': 'high'})]},
    'sd a string': {'table1': [_row(**{'CIDEr-D_sd': 'x'})]}, 'run a list': {'table1': [_row()], 'run': [1]},
    'deep': '[' * 50_000, 'commit closes the block': {'table1': [_row()], 'run': {'commit': 'abc\n<!-- /results:demo -->'}},
    'machine opens a block': {'table1': [_row()], 'run': {'machine': '<!-- results:demo -->'}},
    'preset comment': {'table1': [_row(preset='paper<!--')]},
}

@pytest.mark.parametrize('case', list(BAD_METRICS))
def test_malformed_metrics_write_nothing(tmp_path, case):
    from vsr_cic.tables import publish
    root = _repo(tmp_path); f = _metrics(tmp_path, BAD_METRICS[case])
    before = snapshot(tmp_path)
    raises(lambda: publish(f, 'demo', 'T', root), 'm.json', kind=ValueError)
    assert snapshot(tmp_path) == before and not (root/'results').exists()

INJECT = {'preset': ('<script>alert(1)</script>', '&lt;script&gt;'), 'method': ('a|b', 'a\\|b'),
          'grounding': ('gs\nrl', 'gs rl'), 'preset ': ('x<img src=y onerror=z>', '&lt;img'),
          'method ': ('ours|</td>', 'ours\\|&lt;/td&gt;')}

@pytest.mark.parametrize('field', list(INJECT))
def test_strings_are_escaped_in_the_pages(tmp_path, field):
    from vsr_cic.tables import publish
    root = _repo(tmp_path); value, shown = INJECT[field]
    f = _metrics(tmp_path, {'table1': [_row(**{'method': 'ours', 'grounding': 'gsrl', field.strip(): value})]})
    publish(f, 'demo', 'T', root)
    for text in ((root/'README.md').read_text(), (root/'results'/'demo.md').read_text(), (root/'nbs'/'index.ipynb').read_text()):
        assert value not in text
    page = (root/'results'/'demo.md').read_text()
    assert shown in page, page
    table = [l for l in page.splitlines() if l.startswith('| ')]
    assert len({l.replace('\\|', '').count('|') for l in table}) == 1, table                # every row has the header's columns

@pytest.mark.parametrize('v', [float('nan'), float('inf'), float('-inf')])
def test_nan_is_not_printed_as_nan(tmp_path, v):
    from vsr_cic.tables import publish
    root = _repo(tmp_path); f = tmp_path/'m.json'
    f.write_text(json.dumps({'table1': [_row(**{'CIDEr-D': v})]}))                # json writes NaN / Infinity
    publish(f, 'demo', 'T', root)
    page = (root/'results'/'demo.md').read_text()
    assert 'n/a' in page and not any(w in page.split() for w in ('nan', 'inf', '-inf'))

def test_valid_results_regenerate_identically(tmp_path):
    from vsr_cic.tables import publish
    root = tmp_path/'repo'; (root/'nbs').mkdir(parents=True)
    shutil.copy(ROOT/'README.md', root); shutil.copy(ROOT/'nbs'/'index.ipynb', root/'nbs')
    for f in sorted((ROOT/'results').glob('*.json')):
        if f'<!-- results:{f.stem} -->' not in (ROOT/'README.md').read_text(): continue
        publish(f, f.stem, json.loads(f.read_text())['title'], root)
        for ext in ('json', 'md'): assert (root/'results'/f'{f.stem}.{ext}').read_text() == (ROOT/'results'/f'{f.stem}.{ext}').read_text()
    assert (root/'README.md').read_text() == (ROOT/'README.md').read_text()


# ------------------------------------------------------------------ 3. run archives: decode, pack, score
def _bench():
    sys.path.insert(0, str(ROOT/'bench'/'gpu'))
    try:
        import gpu_real_language
        return gpu_real_language
    finally: sys.path.remove(str(ROOT/'bench'/'gpu'))

def _ti(name, size=0, kind=tarfile.REGTYPE, link=''):
    t = tarfile.TarInfo(name); t.size, t.type, t.linkname = size, kind, link; return t

def _archive(path, members, mode='w:gz'):
    with tarfile.open(path, mode) as t:
        for ti, data in members: t.addfile(ti, io.BytesIO(data) if data is not None else None)
    return path

HOSTILE_TARS = {
    'dotdot': [(_ti('../escape.txt', 1), b'x')],
    'deep dotdot': [(_ti('a/../../escape.txt', 1), b'x')],
    'absolute': [(_ti('/tmp/vsr_cic_abs_escape.txt', 1), b'x')],
    'symlink out': [(_ti('data', kind=tarfile.SYMTYPE, link='/tmp'), None)],
    'symlink then file': [(_ti('l', kind=tarfile.SYMTYPE, link='..'), None), (_ti('l/escape.txt', 1), b'x')],
    'relative symlink': [(_ti('gsrl', kind=tarfile.SYMTYPE, link='../../x'), None)],
    'hardlink': [(_ti('h', kind=tarfile.LNKTYPE, link='/etc/passwd'), None)],
    'char device': [(_ti('zero', kind=tarfile.CHRTYPE), None)],
    'block device': [(_ti('disk', kind=tarfile.BLKTYPE), None)],
    'fifo': [(_ti('pipe', kind=tarfile.FIFOTYPE), None)],
    'backslash': [(_ti('..\\escape.txt', 1), b'x')],
    'drive': [(_ti('C:/escape.txt', 1), b'x')],
    'dot dot only': [(_ti('..', kind=tarfile.DIRTYPE), None)],
}

@pytest.mark.parametrize('case', list(HOSTILE_TARS))
def test_decode_refuses_hostile_archive_members(tmp_path, case):
    g = _bench()
    a = _archive(tmp_path/'a.tar.gz', HOSTILE_TARS[case])
    raises(lambda: g.decode(a, tmp_path/'out', work=tmp_path/'work'), 'a.tar.gz', 'member', kind=UnsafeInput)
    assert not (tmp_path/'escape.txt').exists() and not Path('/tmp/vsr_cic_abs_escape.txt').exists()
    assert sorted(os.listdir(tmp_path/'work')) == ['.vsr_cic_work']                 # nothing unpacked

def test_decode_caps_the_unpacked_size(tmp_path):
    from vsr_cic.guards import extract_archive
    a = _archive(tmp_path/'bomb.tar.xz', [(_ti(f'z{i}', 64 << 20), b'\0' * (64 << 20)) for i in range(4)], 'w:xz')
    assert a.stat().st_size < 200_000
    raises(lambda: extract_archive(a, tmp_path/'w', max_bytes=128 << 20), 'bomb.tar.xz', 'more than', kind=UnsafeInput)
    assert not (tmp_path/'w').exists() or sum(p.stat().st_size for p in (tmp_path/'w').rglob('*')) == 0

@pytest.mark.parametrize('what', ['thesis', 'file', 'link'])
def test_decode_work_folder_is_never_a_users(tmp_path, what):
    g = _bench()
    a = _archive(tmp_path/'a.tar.gz', [(_ti('ok.txt', 1), b'x')])
    user = tmp_path/'mine'
    if what == 'thesis': user.mkdir(); (user/'thesis.tex').write_text('years of work')
    elif what == 'file': user.write_text('a file')
    else: (tmp_path/'real').mkdir(); (tmp_path/'real'/'thesis.tex').write_text('x'); os.symlink(tmp_path/'real', user)
    before = snapshot(tmp_path)
    raises(lambda: g.decode(a, tmp_path/'out', work=user), 'mine', kind=UnsafeInput)
    assert snapshot(tmp_path) == before

def test_pack_stores_a_linked_checkpoint_as_its_file(tmp_path):
    "A checkpoint linked from elsewhere in the run is packed as its file (a link out of the run is refused: test_trust_round4)"
    g = _bench()
    run = tmp_path/'run'
    for f in g.SHARED: (run/f).parent.mkdir(parents=True, exist_ok=True); (run/f).write_text(f)
    real = run/'kept'/'elsewhere.pt'; real.parent.mkdir(); real.write_bytes(b'weights')
    for d in g.SHARED_DIRS: (run/d/'s').mkdir(parents=True); os.symlink(real, run/d/'s'/'best.pt')
    g.pack(run, tmp_path/'p.tar.xz')
    with tarfile.open(tmp_path/'p.tar.xz') as t:
        assert all(m.isreg() or m.isdir() for m in t.getmembers())
        assert t.extractfile('gsrl/s/best.pt').read() == b'weights'

def test_score_caps_the_predictions_it_decompresses(tmp_path, monkeypatch):
    "`score` itself on a real gzip bomb: refused by its decompression cap before the log, the run or anything else is read"
    from vsr_cic.guards import read_json_file
    g = _bench()
    f = tmp_path/'predictions.json.gz'
    with gzip.open(f, 'wb') as z:
        z.write(b'["'); [z.write(b'a' * (1 << 20)) for _ in range(64)]; z.write(b'"]')
    assert f.stat().st_size < 1 << 20
    raises(lambda: read_json_file(f, 'predictions', max_bytes=16 << 20), 'predictions.json.gz', 'gzip bomb', kind=UnsafeInput)
    monkeypatch.setattr(g, 'MAX_PREDICTION_BYTES', 16 << 20)        # score's own cap, lowered so that 64 MiB is a bomb
    run = tmp_path/'run'; run.mkdir()                                # no metrics.json, no data: reached only past the cap
    raises(lambda: g.score(run, f, tmp_path/'out', publish_to=None), 'predictions.json.gz', 'gzip bomb', kind=UnsafeInput)
    assert not (tmp_path/'out'/'metrics.json').exists()


# ------------------------------------------------------------------ 4. the shipped photo bundle's fingerprint
@pytest.fixture
def bundle(tmp_path):
    from vsr_cic.own_photo import models_dir
    return Path(shutil.copytree(models_dir(), tmp_path/'bundle'))

def test_bundle_data_meta_is_fingerprinted(bundle):
    from vsr_cic.own_photo import check_fingerprint
    m = json.loads((bundle/'data'/'meta.json').read_text())
    c = m['classes']; i, j = c.index('person'), c.index('horse'); c[i], c[j] = c[j], c[i]
    (bundle/'data'/'meta.json').write_text(json.dumps(m))
    raises(lambda: check_fingerprint(bundle, json.loads((bundle/'meta.json').read_text())), 'data/meta.json', kind=ValueError)

LISTED = {'dev zero': '/dev/zero', 'outside': '../outside.txt', 'absolute': '/etc/passwd', 'nul': 'a\x00b',
          'backslash': '..\\x', 'fifo': 'pipe', 'folder': 'data', 'dev null': '/dev/null', 'deep': 'a/../../x'}
BOUNDARY = {'dev zero': 'leaves its folder', 'outside': 'leaves its folder', 'absolute': 'leaves its folder',
            'nul': 'not a relative file path', 'backslash': 'leaves its folder', 'fifo': 'FIFO', 'folder': 'a folder',
            'dev null': 'leaves its folder', 'deep': 'leaves its folder'}

@pytest.mark.parametrize('case', list(LISTED))
def test_listed_paths_are_regular_files_inside(bundle, case):
    "Each entry is listed with the true SHA-256 of what it names (where that can be read), so only the bundle boundary can refuse it"
    import hashlib
    from vsr_cic.own_photo import check_fingerprint
    (bundle.parent/'outside.txt').write_text('x'); (bundle.parent/'x').write_text('deep')
    if case == 'fifo': os.mkfifo(bundle/'pipe')
    target = {'outside': bundle.parent/'outside.txt', 'absolute': Path('/etc/passwd'), 'deep': bundle.parent/'x'}.get(case)
    true = (hashlib.sha256(target.read_bytes()).hexdigest() if target is not None and target.is_file()
            else hashlib.sha256(b'').hexdigest())                 # /dev/null, a FIFO: empty (a naive read matches)
    meta = json.loads((bundle/'meta.json').read_text())
    meta['files'][LISTED[case]] = true
    msg = raises(lambda: check_fingerprint(bundle, meta), 'photo models', BOUNDARY[case], kind=ValueError)
    assert 'differs from its fingerprint' not in msg, msg          # the boundary refused it, not the hash

def test_an_unlisted_changed_checkpoint_is_refused(bundle):
    from vsr_cic.own_photo import check_fingerprint
    meta = json.loads((bundle/'meta.json').read_text())
    meta['files'] = {k: v for k, v in meta['files'].items() if not k.startswith('captioner/')}
    with open(bundle/'captioner'/'model.pt', 'ab') as f: f.write(b'changed')
    raises(lambda: check_fingerprint(bundle, meta), 'not in the fingerprint', 'captioner/model.pt', kind=ValueError)

@pytest.mark.parametrize('text', ['not json', '', '[1, 2]', '"x"', '{"files": 5}', '{"files": {"decoding.json": 5}}',
                                  '[' * 50_000])
def test_bad_bundle_meta_names_the_file(bundle, text):
    from vsr_cic.own_photo import load_photo_models
    (bundle/'meta.json').write_text(text)
    raises(lambda: load_photo_models(bundle), 'meta.json', kind=ValueError)

def test_a_fifo_meta_json_is_refused_not_waited_on(bundle):
    from vsr_cic.own_photo import load_photo_models
    (bundle/'meta.json').unlink(); os.mkfifo(bundle/'meta.json')
    raises(lambda: load_photo_models(bundle), 'meta.json', 'FIFO', kind=ValueError)

def test_a_link_out_of_the_bundle_is_refused(bundle, tmp_path):
    from vsr_cic.own_photo import check_fingerprint
    (tmp_path/'x.pt').write_bytes(b'x'); os.symlink(tmp_path/'x.pt', bundle/'extra.pt')
    raises(lambda: check_fingerprint(bundle, json.loads((bundle/'meta.json').read_text())), 'extra.pt', kind=ValueError)


# ------------------------------------------------------------------ 5. the CLI and box records
BAD_RECORDS = {'a string': 'person', 'a list': ['person', 1, 2, 3, 4], 'a number': 5, 'None': None, 'nested list': [[1]],
               'true': True}

@pytest.mark.parametrize('case', list(BAD_RECORDS))
def test_box_records_that_are_not_objects(case):
    from vsr_cic.own_photo import check_drawn_boxes, PhotoInputError
    raises(lambda: check_drawn_boxes([BOX, BAD_RECORDS[case]], (50, 50), ['person']), 'box 2', kind=PhotoInputError)

BAD_COORDS = {'401 digits': 10 ** 400, '401-digit string': '1' * 401, 'letters': 'a', 'None': None, 'NaN': float('nan'),
              'inf': float('inf'), '-inf': float('-inf'), 'list': [1], 'dict': {'x': 1}, 'bool': True, 'huge': 1e300,
              'empty string': '', 'nan string': 'nan', 'inf string': 'Infinity', 'hex': '0x10'}

@pytest.mark.parametrize('case', list(BAD_COORDS))
def test_box_coordinates_name_the_box(case):
    from vsr_cic.own_photo import check_drawn_boxes, PhotoInputError
    b = {'class': 'person', 'box': [BAD_COORDS[case], 1, 2, 3]}
    raises(lambda: check_drawn_boxes([BOX, b], (50, 50), ['person']), 'box 2', 'x1', kind=PhotoInputError)
    w = {'x': 1, 'y': BAD_COORDS[case], 'width': 5, 'height': 5, 'label': 'person'}
    raises(lambda: check_drawn_boxes([w], (50, 50), ['person']), 'box 1', 'y', kind=PhotoInputError)

def _cli(*args, timeout=120):
    return subprocess.run([sys.executable, '-c', 'import sys; from vsr_cic.own_photo import main; sys.exit(main())', *args],
                          capture_output=True, text=True, timeout=timeout, env={**os.environ, 'PYTHONPATH': str(ROOT)})

BAD_FLAGS = [('--beam', '1000000'), ('--beam', '0'), ('--beam', '-1'), ('--beam', 'x'), ('--beam', '1e9'),
             ('--suggest', '1000000000'), ('--suggest', '-1'), ('--suggest', '9' * 5000)]

@pytest.mark.parametrize('flag,value', BAD_FLAGS)
def test_cli_flags_are_bounded(tmp_path, flag, value):
    from vsr_cic.own_photo import main
    pic = png(tmp_path/'p.png'); (tmp_path/'p.json').write_text(json.dumps({'image': 'p.png', 'boxes': [BOX], 'vsr': 'ride: ARG0'}))
    with pytest.raises(SystemExit) as e: main([str(pic), flag, value])
    assert e.value.code == 2

BAD_BOX_FILES = {'deep': '[' * 100_000, 'strings': '["a", "b"]', 'big int': '[{"class": "person", "box": [' + '1' * 401 + ', 1, 2, 3]}]',
                 'not json': 'nope', 'a number': '7', 'list coords': '[{"class": "person", "box": ["a", 1, 2, 3]}]',
                 'huge class': json.dumps([{'class': 'x' * 1_000_000, 'box': [1, 1, 20, 20]}])}

@pytest.mark.parametrize('case', list(BAD_BOX_FILES))
def test_cli_bad_boxes_file_is_one_short_line(tmp_path, case):
    pic = png(tmp_path/'p.png'); (tmp_path/'p.json').write_text(BAD_BOX_FILES[case])
    r = _cli(str(pic), '--vsr', 'ride: ARG0')
    assert r.returncode == 2, r.stderr[-2000:]
    assert 'Traceback' not in r.stderr and r.stderr.startswith('vsr_caption_photo: error:') and len(r.stderr) < SHORT, r.stderr[:2000]

def test_cli_long_vsr_is_not_echoed_whole(tmp_path):
    pic = png(tmp_path/'p.png'); (tmp_path/'p.json').write_text(json.dumps({'image': 'p.png', 'boxes': [BOX]}))
    r = _cli(str(pic), '--vsr', 'ride: ' + 'ARG0, ' * 15_000 + 'X')
    assert r.returncode == 2 and 'Traceback' not in r.stderr and len(r.stderr) < SHORT, r.stderr[:1000]

def test_caption_photo_bounds_beam_and_suggest(models, tmp_path):
    from vsr_cic.own_photo import caption_photo
    pic = png(tmp_path/'p.png')
    for kw in ({'beam': 1_000_000}, {'beam': 0}, {'beam': -1}, {'suggest': 10 ** 9}, {'suggest': -1}):
        raises(lambda: caption_photo(models, pic, [BOX], 'ride: ARG0', **kw), next(iter(kw)), kind=ValueError)

def test_cli_says_what_it_did_with_the_verb(tmp_path):
    "The console says what the panel says: an unknown verb is refused by name with close known verbs (issue 41), an inflected one noted"
    pic = png(tmp_path/'p.png', (60, 60))
    (tmp_path/'p.json').write_text(json.dumps({'image': 'p.png', 'boxes': [{'class': 'person', 'box': [2, 2, 50, 50]}]}))
    r = _cli(str(pic), '--vsr', 'zorbify: ARG0')
    assert r.returncode == 2 and 'zorbify' in r.stderr and 'did you mean' in r.stderr and 'Traceback' not in r.stderr, r.stderr[-2000:]
    r = _cli(str(pic), '--vsr', 'riding: ARG0')
    assert r.returncode == 0, r.stderr[-2000:]
    assert any(l.startswith('note:') and 'ride' in l for l in r.stdout.splitlines()), r.stdout


# ------------------------------------------------------------------ 6. pictures: special files are not "not found"
@pytest.mark.parametrize('what', ['folder', 'fifo', '/dev/zero', '/dev/null'])
def test_special_pictures_are_named_for_what_they_are(tmp_path, what):
    from vsr_cic.own_photo import read_picture, PhotoInputError
    p = {'folder': tmp_path, '/dev/zero': Path('/dev/zero'), '/dev/null': Path('/dev/null')}.get(what, tmp_path/'p.png')
    if what == 'fifo': os.mkfifo(p)
    msg = raises(lambda: read_picture(p), 'not a regular file', kind=PhotoInputError)
    assert 'not found' not in msg

def test_a_sparse_huge_picture_is_not_read_whole(tmp_path):
    from vsr_cic.own_photo import read_picture, PhotoInputError
    p = tmp_path/'huge.png'
    with open(p, 'wb') as f: f.truncate(4 << 30)                                   # 4 GiB, no blocks on disk
    raises(lambda: read_picture(p), 'huge.png', 'bytes', kind=PhotoInputError)


# ------------------------------------------------------------------ 7. the panel's observers report through the panel
BAD_UPLOADS = ['..', '.', 'a\x00.png', 'x' * 300 + '.png', '../../escape.png', '/abs/x.png', 'a/b.png', 'notes.json',
               'x.py', '', '.bashrc.png', 'a\nb.png', None, 7]

@pytest.mark.parametrize('name', BAD_UPLOADS, ids=[repr(n)[:20] for n in BAD_UPLOADS])
def test_upload_names_are_reported_in_the_panel(tmp_path, models, name):
    from vsr_cic.widgets import OwnPhotoPanel
    up = tmp_path/'a'/'uploads'; up.mkdir(parents=True)
    panel = OwnPhotoPanel(models, up)
    content = io.BytesIO(); Image.fromarray(np.zeros((10, 10, 3), np.uint8)).save(content, format='png')
    upload(panel, name, content.getvalue())
    assert 'upload name' in panel.error.value, panel.error.value
    assert os.listdir(up) == [] and sorted(os.listdir(tmp_path/'a')) == ['uploads'] and not (tmp_path/'escape.png').exists()

BAD_DRAWN = {'x letters': {'x': 'abc'}, 'y None': {'y': None}, 'width NaN': {'width': float('nan')},
             'height inf': {'height': float('inf')}, 'x list': {'x': [1]}, 'x 401 digits': {'x': 10 ** 400}}

@pytest.mark.parametrize('case', list(BAD_DRAWN))
def test_bad_drawn_boxes_are_reported_in_the_panel(tmp_path, models, case):
    from vsr_cic.widgets import OwnPhotoPanel
    pic = png(tmp_path/'p.png', (60, 60))
    panel = OwnPhotoPanel(models, tmp_path/'up', picture=pic)
    panel.bbox.bboxes = [{'x': 2, 'y': 2, 'width': 20, 'height': 20, 'label': 'person', **BAD_DRAWN[case]}]  # no exception
    assert 'box 1' in panel.error.value, panel.error.value
    panel.caption('ride: ARG0'); assert 'box 1' in panel.error.value
    assert not (tmp_path/'p.json').exists()

@pytest.mark.parametrize('path', ['/dev/zero', '/nonexistent/x.png', 'x' * 5000, '\x00'])
def test_path_box_reports_in_the_panel(tmp_path, models, path):
    from vsr_cic.widgets import OwnPhotoPanel
    panel = OwnPhotoPanel(models, tmp_path/'up')
    panel.path.value = path
    assert panel.error.value and len(panel.error.value) < SHORT + 100, panel.error.value[:300]


# ------------------------------------------------------------------ 8. round two's leftovers
@pytest.mark.parametrize('words,verbs', [('my words', 'my verbs'), ('{}', '{}'), ('[]', '[]'), ('{"tokens": 5}', 'x'),
                                         ('{"tokens": [1, 2]}', '{"tokens": [3]}')])
def test_user_files_named_like_vocabularies_are_not_a_run(tmp_path, words, verbs):
    from vsr_cic.guards import claim_run
    d = tmp_path/'mine'; d.mkdir(); (d/'words_vocab.json').write_text(words); (d/'verbs_vocab.json').write_text(verbs)
    before = snapshot(d)
    raises(lambda: claim_run(d, 'train_captioner'), 'not a vsr_cic run folder', kind=RunFolderError)
    assert snapshot(d) == before

def _h5_case(path, case):
    with h5py.File(path, 'w') as h:
        if case == '1-D':
            h['a_features'] = np.ones(8, np.float32); h['a_boxes'] = np.ones((1, 4), np.float32); h['a_cls_prob'] = np.ones((1, 3), np.float32)
        elif case == 'group':
            h.create_group('a_features'); h['a_boxes'] = np.ones((1, 4), np.float32); h['a_cls_prob'] = np.ones((1, 3), np.float32)
        elif case == 'boxes width 3':
            h['a_features'] = np.ones((1, 8), np.float32); h['a_boxes'] = np.ones((1, 3), np.float32); h['a_cls_prob'] = np.ones((1, 3), np.float32)
        for i, d in (('a', 8), ('b', 9)) if case == 'ragged' else ():
            h[f'{i}_features'] = np.ones((2, d), np.float32); h[f'{i}_boxes'] = np.ones((2, 4), np.float32)
            h[f'{i}_cls_prob'] = np.ones((2, 3), np.float32)

@pytest.mark.parametrize('case', ['1-D', 'group', 'boxes width 3', 'ragged'])
def test_loader_names_bad_feature_shapes(tmp_path, case):
    from vsr_cic.loader import FeatureStore
    f = tmp_path/'features.hdf5'; _h5_case(f, case)
    fs = FeatureStore(f)
    get = (lambda: fs.get_many(['a', 'b'])) if case == 'ragged' else (lambda: fs.get('a'))
    msg = raises(get, 'features.hdf5', kind=ValueError)
    assert ('a_' in msg or "'b'" in msg), msg

@pytest.mark.parametrize('case', ['truncated jpeg', 'huge png', 'folder', 'text'])
def test_cnn_pictures_name_the_file(tmp_path, case):
    from vsr_cic.features import load_image
    p = tmp_path/'pic.jpg'
    if case == 'truncated jpeg':
        b = io.BytesIO(); Image.fromarray(np.random.default_rng(0).integers(0, 255, (64, 64, 3), dtype=np.uint8)).save(b, format='jpeg')
        p.write_bytes(b.getvalue()[:400])
    elif case == 'huge png':
        p = tmp_path/'pic.png'
        b = io.BytesIO(); Image.new('1', (20000, 20000)).save(b, format='png'); p.write_bytes(b.getvalue())
    elif case == 'folder': p.mkdir()
    else: p.write_text('not a picture')
    raises(lambda: load_image(p), p.name, kind=ValueError)

def test_a_second_trainer_prints_runlocked_without_a_traceback(tmp_path):
    from vsr_cic.guards import run_lock, claim_run
    out = claim_run(tmp_path/'run', 'train_captioner')
    with run_lock(out):
        r = subprocess.run([sys.executable, '-c', 'from vsr_cic.captioning import train_captioner_cli; train_captioner_cli()',
                            '--out_dir', str(out), '--epochs_xe', '0', '--epochs_rl', '0'], capture_output=True, text=True,
                           timeout=300, env={**os.environ, 'PYTHONPATH': str(ROOT)})
    assert r.returncode == 2 and 'Traceback' not in r.stderr and 'in use by another process' in r.stderr, r.stderr[-2000:]
