"""Trust boundaries (issue 18): property tests (hypothesis) over the VSR parser, `parse_vsrs`, `Pipeline.__call__`,
the dataset checks and the checkpoint loaders, and a corpus of hand-written hostile inputs:
(1) checkpoints never run code, (2) run folders refuse what would wreck them, (3) the pipeline rejects nonsense VSRs,
(4) clear errors that name the input, (5) dataset checks, (6) long inputs give short errors (speed: bench/bench_parse.py),
(7) Ctrl-C says what was saved and how to resume.

Tests call the public entry points that existed before the issue (VSR.parse, parse_vsrs, Pipeline, load_dataset,
load_checkpoint, check_inputs, train_captioner, load_captioner) and match the messages, so that each finding's test
fails on the code before the fix."""
import json, os, pickle, shutil, signal, subprocess, sys, time
from pathlib import Path
import h5py, numpy as np, pytest, torch
from hypothesis import given, settings, strategies as st, HealthCheck
from conftest import ROOT

from vsr_cic.vsr import VSR, ROLES, normalize_role, parse_vsrs, VSRError, NOT_VERBS, UNCOUNTED
from vsr_cic.data import load_dataset, DataError
from vsr_cic.loader import make_toy_dataset
from vsr_cic.train import atomic_save, load_checkpoint, check_inputs, fit, _toy

FEW = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
SOME = settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
SHORT = 500        # an error message about hostile input stays this short (a megabyte of input never lands in it)


def raises(fn, *parts, kind=Exception):
    "Call `fn`; it must raise `kind` and the message must contain every part; returns the message"
    with pytest.raises(kind) as e: fn()
    msg = str(e.value)
    for p in parts: assert p in msg, (p, type(e.value).__name__, msg)
    return msg


@pytest.fixture(scope='module')
def toy(tmp_path_factory):
    return make_toy_dataset(tmp_path_factory.mktemp('trust')/'toy')


@pytest.fixture(scope='module')
def pipe(toy):
    from vsr_cic.pipeline import tiny_pipeline
    torch.set_num_threads(1)
    return tiny_pipeline(load_dataset(toy))


# ------------------------------------------------------------------ properties: the VSR parser
role_st = st.sampled_from(ROLES)
verb_st = st.from_regex(r'[a-z]{2,6}(_[a-z]{1,5})?', fullmatch=True).filter(   # lemmas (vsr.canonical_verb; MIN_LEMMA letters)
    lambda v: normalize_role(v, strict=False) is None and v not in NOT_VERBS)

@st.composite
def vsr_st(draw):
    roles = draw(st.lists(role_st, unique=True, max_size=4))   # (a word fills an UNCOUNTED role: its count is 1)
    return VSR(draw(verb_st), [(r, 1 if r in UNCOUNTED else draw(st.integers(1, 2))) for r in roles])

@FEW
@given(vsr_st())
def test_vsr_text_and_json_round_trip(v):
    assert VSR.parse(str(v)) == v and VSR.from_json(v.to_json()) == v
    raises(lambda: parse_vsrs(f'{v}; {v}'), 'given twice', kind=VSRError)       # one VSR twice is refused (#54)

hostile_text = st.one_of(st.text(max_size=80), st.text(alphabet=':,;*×x-0123456789² ARGLOCMNRTPride\t\n', max_size=80))

@FEW
@given(hostile_text)
def test_parser_only_ever_raises_vsr_errors(t):
    "Any text parses or raises VSRError with a short message; never ValueError/OverflowError/AttributeError from inside"
    for f in (VSR.parse, parse_vsrs):
        try: out = f(t)
        except VSRError as e: assert len(str(e)) < SHORT + len(t) * 3
        else: assert out

@FEW
@given(st.one_of(st.none(), st.integers(), st.floats(), st.booleans(), st.binary(max_size=8),
                 st.lists(st.integers(), max_size=3), st.dictionaries(st.text(max_size=5), st.integers(), max_size=3)))
def test_parse_vsrs_rejects_non_text_with_a_vsr_error(x):
    raises(lambda: parse_vsrs(x), kind=VSRError)

@FEW
@given(st.one_of(st.integers(-10**6, 10**6), st.floats(allow_nan=True, allow_infinity=True), st.booleans(),
                 st.text(max_size=6), st.just(10**5000)))
def test_any_count_is_an_int_in_range_or_a_vsr_error(c):
    try: v = VSR('ride', [('LOC', c)])
    except VSRError as e: assert len(str(e)) < SHORT
    else: assert not isinstance(c, bool) and 1 <= v.count('LOC') <= 10

@FEW
@given(st.text(max_size=30))
def test_normalize_role_gives_a_role_or_a_vsr_error(s):
    try: r = normalize_role(s)
    except VSRError: return
    assert r in ROLES or r == 'V'


# ------------------------------------------------------------------ properties: Pipeline.__call__
pipeline_input = st.one_of(hostile_text, vsr_st().map(str), st.none(), st.integers(),
                           st.fixed_dictionaries({'verb': st.sampled_from(['ride', 'xyzzy', 'ARG0']),
                                                  'roles': st.lists(role_st, unique=True, max_size=3)}))

@SOME
@given(pipeline_input)
def test_pipeline_captions_or_names_the_problem(pipe, x):
    "Every input either captions with known verbs only, or raises a ValueError (VSRError) that names the problem"
    try: r = pipe('img0', x, beam=1, n_structures=1, max_len=6)
    except ValueError as e: assert str(e) and len(str(e)) < SHORT + len(str(x)) * 3
    else:
        assert all(v.verb in pipe.vocabs['captioner_verbs'] for v in r.vsrs) and 'verbs' not in r.missing


# ------------------------------------------------------------------ properties: dataset checks and checkpoint loaders
@SOME
@given(key=st.sampled_from(['features', 'boxes', 'cls_prob']), row=st.integers(0, 3), col=st.integers(0, 3),
       value=st.sampled_from([np.nan, np.inf, -np.inf, 1e30, -1e30]))
def test_check_inputs_catches_any_poisoned_value(toy, tmp_path_factory, key, row, col, value):
    q = shutil.copytree(toy, tmp_path_factory.mktemp('poison')/'d')
    with h5py.File(q/'features.hdf5', 'r+') as h: h[f'img1_{key}'][row, col] = value
    raises(lambda: check_inputs(q), str(q/'features.hdf5'), "'img1")

@SOME
@given(st.binary(max_size=200))
def test_load_checkpoint_on_random_bytes_names_the_file(tmp_path_factory, b):
    p = tmp_path_factory.mktemp('bytes')/'x.pt'; p.write_bytes(b)
    raises(lambda: load_checkpoint(p), str(p))


# ------------------------------------------------------------------ (1) checkpoints never run code
class _Payload:
    "A pickle that, loaded the unsafe way, runs a command creating a marker file"
    def __init__(self, cmd): self.cmd = cmd
    def __reduce__(self): return (os.system, (self.cmd,))

class _ExecPayload:
    def __init__(self, code): self.code = code
    def __reduce__(self): return (exec, (self.code,))

def _evil(path:Path, marker:Path, kind:str='zip'):
    "Write a hostile checkpoint at `path` whose loading would create `marker`"
    path.parent.mkdir(parents=True, exist_ok=True)
    obj = {'model': {'w': torch.zeros(2)}, 'config': {}, 'x': _Payload(f'touch {marker}'),
           'y': _ExecPayload(f"open({str(marker)!r}, 'w').write('pwned')")}
    if kind == 'zip': torch.save(obj, path)
    else:
        with open(path, 'wb') as f: pickle.dump(obj, f, protocol=2)
    return path

@pytest.mark.parametrize('kind', ['zip', 'raw'])
def test_malicious_checkpoint_refused_by_load_checkpoint(tmp_path, kind):
    marker = tmp_path/'pwned'
    p = _evil(tmp_path/'evil.pt', marker, kind)
    raises(lambda: load_checkpoint(p), str(p), 'refused')
    assert not marker.exists(), 'loading the checkpoint ran its payload'

def test_malicious_checkpoint_refused_by_every_loader(toy, tmp_path):
    "fit's resume, the GSRL, planner and captioner loaders and the verb predictor: all refuse, none runs it"
    from vsr_cic.runs import load_gsrl
    from vsr_cic.pipeline import load_planner, load_captioner
    from vsr_cic.verbs import load_verb_predictor
    marker = tmp_path/'pwned'
    m, opt, sch, smp, loader, step = _toy()
    _evil(tmp_path/'fit'/'last.pt', marker)
    raises(lambda: fit(m, loader, smp, step, opt, epochs=1, ckpt_dir=tmp_path/'fit', progress=False), 'last.pt', 'refused')
    _evil(tmp_path/'g'/'gsrl'/'best.pt', marker)
    raises(lambda: load_gsrl(tmp_path/'g'), 'best.pt', 'refused')
    _evil(tmp_path/'p'/'slevel_transformer'/'best.pt', marker)
    raises(lambda: load_planner(tmp_path/'p'), 'best.pt', 'refused')
    _evil(tmp_path/'c'/'model.pt', marker)
    raises(lambda: load_captioner(tmp_path/'c'), 'model.pt', 'refused')
    _evil(tmp_path/'v'/'verbs'/'best.pt', marker)
    raises(lambda: load_verb_predictor(tmp_path/'v'), 'best.pt', 'refused')
    assert not marker.exists(), 'a loader ran the payload'

def test_training_checkpoints_load_without_pickled_code(tmp_path):
    "What fit writes (weights, optimiser, scheduler, RNG states of python/numpy/torch) loads with weights_only=True"
    m, opt, sch, smp, loader, step = _toy()
    fit(m, loader, smp, step, opt, epochs=1, sched=sch, ckpt_dir=tmp_path, progress=False)
    ck = torch.load(tmp_path/'last.pt', weights_only=True)          # no allow-list at all: plain containers and tensors
    assert set(ck) >= {'model', 'opt', 'sched', 'rng', 'loop'} and isinstance(ck['rng']['numpy'][1], list)

def test_nan_weights_are_refused(tmp_path):
    atomic_save({'model': {'a': torch.ones(2), 'b': torch.full((3,), float('nan'))}}, tmp_path/'nan.pt')
    raises(lambda: load_checkpoint(tmp_path/'nan.pt'), 'nan.pt', "['b']", 'NaN')


# ------------------------------------------------------------------ (2) run folders cannot be wrecked
RUN = dict(epochs_xe=1, epochs_rl=1, hidden=16, batch_size=32, beam=1, metrics=False, control=False, progress=False,
           n_show=2, world_images=40)

@pytest.fixture(scope='module')
def finished_run(tmp_path_factory):
    "One finished tiny run (40-image private world, one XE and one SCST epoch, no slow metrics)"
    from vsr_cic.captioning import train_captioner
    out = tmp_path_factory.mktemp('runs')/'run'
    r = train_captioner(out_dir=out, **RUN)
    assert r['interrupted'] is None and (out/'model.pt').exists()
    return out

def _snapshot(out:Path)->dict:
    "Modification times and sizes of everything in a run folder (but the run lock, whose pid note every call rewrites)"
    return {str(p.relative_to(out)): (p.stat().st_mtime_ns, p.stat().st_size) for p in sorted(out.rglob('*'))
            if p.is_file() and p.name != '.vsr_cic_run.lock'}

def test_other_world_size_refused_and_nothing_touched(finished_run):
    from vsr_cic.captioning import train_captioner
    before = _snapshot(finished_run)
    raises(lambda: train_captioner(out_dir=finished_run, **{**RUN, 'world_images': 60}), 'run_config.json', 'world_images', '40', '60')
    assert _snapshot(finished_run) == before, 'the refused call changed files of the finished run'

def test_other_dataset_refused(finished_run, toy):
    from vsr_cic.captioning import train_captioner
    before = _snapshot(finished_run)
    raises(lambda: train_captioner(data_dir=toy, out_dir=finished_run, **{**RUN, 'world_images': None}), 'run_config.json', 'data')
    assert _snapshot(finished_run) == before, 'the refused call changed files of the finished run (vocab/ overwritten?)'

def test_copied_run_folder_resumes(finished_run, tmp_path):
    "A copy elsewhere continues (nothing left to train) and loads; the world path is stored relative to the run"
    from vsr_cic.captioning import train_captioner
    from vsr_cic.pipeline import load_captioner
    cp = shutil.copytree(finished_run, tmp_path/'copied')
    assert json.loads((cp/'run_config.json').read_text())['data'] == 'world/vsr_world'
    ckpts = lambda: {str(p.relative_to(cp)): (p.stat().st_mtime_ns, p.read_bytes()) for p in sorted((cp/'ckpt').rglob('*'))
                     if p.is_file()}
    steps = lambda: {st: load_checkpoint(cp/'ckpt'/st/'last.pt')['loop']['step'] for st in ('xe', 'rl')}
    before, steps_before, m_before = ckpts(), steps(), json.loads((cp/'metrics.json').read_text())
    assert before and all(steps_before.values())
    r = train_captioner(out_dir=cp, **RUN)
    assert r['interrupted'] is None and r['selected'] in ('xe', 'rl')
    # nothing was retrained: every checkpoint and history file as it was (bytes and times), the same step counts,
    # epochs and pick (a full retrain from scratch, or an extra epoch, rewrites them)
    assert steps() == steps_before
    assert ckpts() == before, 'resuming a finished copy rewrote its checkpoints'
    m = json.loads((cp/'metrics.json').read_text())
    assert (m['epochs'], m['selected'], m['val']) == (m_before['epochs'], m_before['selected'], m_before['val'])
    net, voc, info = load_captioner(cp)
    assert Path(info['data']) == cp/'world'/'vsr_world' and isinstance(info['data'], str)

def test_load_captioner_refuses_another_vocabulary(finished_run, tmp_path):
    from vsr_cic.pipeline import load_captioner
    cp = shutil.copytree(finished_run, tmp_path/'c')
    f = cp/'vocab'/'words_vocab.json'; d = json.loads(f.read_text())
    d['tokens'][0], d['tokens'][1] = d['tokens'][1], d['tokens'][0]      # same size, two ids swapped
    f.write_text(json.dumps(d))
    raises(lambda: load_captioner(cp), 'model.pt', 'vocabulary')
    d['tokens'].append('zebra-xyz'); f.write_text(json.dumps(d))          # another size
    raises(lambda: load_captioner(cp), 'model.pt', 'vocabulary')

def test_changed_data_under_a_run_is_refused(finished_run, tmp_path):
    "Captions edited under a finished run: the vocabulary it trained with would be overwritten; refused, vocab/ intact"
    from vsr_cic.captioning import train_captioner
    cp = shutil.copytree(finished_run, tmp_path/'c')
    caps = cp/'world'/'vsr_world'/'captions.jsonl'
    lines = caps.read_text().splitlines(True)
    rec = json.loads(lines[0]); rec['tokens'][-1] = 'zebraxyz'; lines[0] = json.dumps(rec) + '\n'
    caps.write_text(''.join(lines))
    before = (cp/'vocab'/'words_vocab.json').read_text()
    raises(lambda: train_captioner(out_dir=cp, **RUN), 'words_vocab.json', 'another words vocabulary')
    assert (cp/'vocab'/'words_vocab.json').read_text() == before

def test_more_xe_epochs_rerun_the_stale_scst_stage(finished_run, tmp_path):
    "Raising epochs_xe: the SCST stage made from the old XE weights is moved aside (kept) and rerun; metrics say so"
    from vsr_cic.captioning import train_captioner
    cp = shutil.copytree(finished_run, tmp_path/'c')
    old_rl = load_checkpoint(cp/'ckpt'/'rl'/'last.pt')['loop']['step']
    r = train_captioner(out_dir=cp, **{**RUN, 'epochs_xe': 2})
    m = json.loads((cp/'metrics.json').read_text())
    assert m['epochs'] == {'xe': 2, 'rl': 1} and r['epochs'] == m['epochs']
    assert (cp/'ckpt'/'rl.stale-1'/'last.pt').exists(), 'the stale SCST checkpoints were not kept aside'
    rl = load_checkpoint(cp/'ckpt'/'rl'/'last.pt')
    assert rl['loop']['step'] == old_rl and rl['loop']['epoch'] == 1      # one fresh SCST epoch from the new XE weights
    xe_hist = json.loads((cp/'ckpt'/'xe'/'history.json').read_text())
    assert max(h['epoch'] for h in xe_hist if h['kind'] == 'eval') == 2


# ------------------------------------------------------------------ (3) the pipeline rejects nonsense VSRs
NONSENSE = [
    ('xyzzy: ARG0, ARG1', ["'xyzzy'", 'unknown', 'verbs']),
    ('ARG0', ["'ARG0'", 'not a verb']),
    ('ride: ARG0-XYZ', ["'ARG0-XYZ'"]),
    ('ride: ARGM-ARG0', ["'ARGM-ARG0'"]),
    (None, ['None']),
    (42, ['42']),
    ({'verb': 'ride', 'role': ['ARG0']}, ["'role'"]),
    ('ride: LOC*²', ["'²'"]),
]

@pytest.mark.parametrize('vsrs,parts', NONSENSE, ids=[repr(v)[:20] for v, _ in NONSENSE])
def test_pipeline_rejects_nonsense(pipe, vsrs, parts):
    raises(lambda: pipe('img0', vsrs, beam=1, n_structures=1, max_len=6), *parts, kind=ValueError)

def test_pipeline_reads_a_dict_as_one_vsr(pipe):
    r = pipe('img0', {'verb': 'ride', 'roles': ['ARG0', 'ARG1']}, beam=1, n_structures=1, max_len=6)
    assert [str(v) for v in r.vsrs] == ['ride: ARG0, ARG1']

def test_pipeline_unknown_verb_fallback_is_explicit_and_noted(pipe):
    r = pipe('img0', 'xyzzy: ARG0', beam=1, n_structures=1, max_len=6, unknown_verbs='unk')
    assert "'xyzzy'" in r.missing['verbs'] and '<unk>' in r.missing['verbs']

def test_bool_count_rejected():
    raises(lambda: VSR('ride', [('LOC', True)]), 'True', kind=VSRError)

def test_pipeline_wrong_feature_width_names_both_widths(pipe):
    img = {**pipe.image('img0')}; img['features'] = torch.ones(len(img['features']), 10)
    raises(lambda: pipe(img, 'ride: ARG0', beam=1, max_len=6), 'D=10', 'captioner', 'D=8')


# ------------------------------------------------------------------ (4) clear errors that name the input
@pytest.mark.parametrize('text,part', [('ride: LOC*²', "'²'"), ('ride: LOC*--1', "'--1'"),
                                       ('ride: LOC*' + '9' * 5000, 'too many digits'), ('ride: LOC*1e999', "'1e999'")])
def test_bad_counts_are_vsr_errors(text, part):
    msg = raises(lambda: VSR.parse(text), part, kind=VSRError)
    assert len(msg) < SHORT

def test_infinite_and_huge_counts():
    raises(lambda: VSR('ride', [('LOC', float('inf'))]), 'inf', kind=VSRError)
    raises(lambda: VSR('ride', [('LOC', 10**5000)]), 'digits', kind=VSRError)

def test_parse_vsrs_none():
    raises(lambda: parse_vsrs(None), 'None', kind=VSRError)

def test_size_mismatch_names_the_checkpoint(finished_run, tmp_path):
    from vsr_cic.pipeline import load_captioner
    cp = shutil.copytree(finished_run, tmp_path/'c')
    ck = torch.load(cp/'model.pt', weights_only=True); ck['config']['hidden'] = 24
    torch.save(ck, cp/'model.pt')
    raises(lambda: load_captioner(cp), str(cp/'model.pt'), 'does not fit')

def test_non_utf8_files_are_named(toy, tmp_path):
    q = shutil.copytree(toy, tmp_path/'d')
    (q/'images.jsonl').write_bytes((q/'images.jsonl').read_bytes() + b'{"image_id": "\xff\xfe"}\n')
    raises(lambda: load_dataset(q), 'images.jsonl', 'UTF-8', kind=DataError)
    from vsr_cic.vsr import Vocab
    (tmp_path/'v.json').write_bytes(b'\xff\xfe{}')
    raises(lambda: Vocab.load(tmp_path/'v.json'), 'v.json')


# ------------------------------------------------------------------ (5) dataset checks
def _edit_h5(q, key, fn):
    with h5py.File(q/'features.hdf5', 'r+') as h: a = fn(h[key][()]); del h[key]; h[key] = a

def test_duplicate_image_id_is_an_error(toy, tmp_path):
    q = shutil.copytree(toy, tmp_path/'d'); f = q/'images.jsonl'
    first = f.read_text().splitlines(True)[0]
    f.write_text(f.read_text() + first.replace('"train"', '"test"'))     # the same image again, now in the test split
    raises(lambda: load_dataset(q), 'images.jsonl', 'duplicate image_id', "'img0'", kind=DataError)

def test_duplicate_caption_id_is_an_error(toy, tmp_path):
    q = shutil.copytree(toy, tmp_path/'d'); f = q/'captions.jsonl'
    f.write_text(f.read_text() + f.read_text().splitlines(True)[0])
    raises(lambda: load_dataset(q), 'captions.jsonl', 'duplicate caption_id', kind=DataError)

@pytest.mark.parametrize('key,fn,part', [
    ('img1_boxes', lambda a: a * 50, 'outside'),
    ('img1_boxes', lambda a: np.where(np.arange(len(a))[:, None] == 0, np.nan, a), 'NaN'),
    ('img1_cls_prob', lambda a: a[:, :-1], 'cls_prob has'),
    ('img1_features', lambda a: a + 1e30, 'reaches 1e+30')], ids=['boxes x50', 'NaN box', 'cls_prob width', 'features 1e30'])
def test_poisoned_arrays_caught_by_check_inputs_and_reading(toy, tmp_path, key, fn, part):
    q = shutil.copytree(toy, tmp_path/'d'); _edit_h5(q, key, fn)
    raises(lambda: check_inputs(q), 'features.hdf5', "'img1'", part)
    raises(lambda: load_dataset(q).features('img1'), 'features.hdf5', "'img1'", part)


# ------------------------------------------------------------------ (6) long inputs: short errors (speed: bench/bench_parse.py)
@pytest.mark.parametrize('text', ['ride: LOC' + ' ' * 64000 + 'Z', 'ride: ' + 'ARG0 x' * 20000, 'x!' * 50000 + ': ARG0',
                                  'ride: ' + ', '.join(['ARG0'] * 20000)])
def test_long_hostile_text_gives_a_short_error(text):
    msg = raises(lambda: VSR.parse(text), kind=VSRError)
    assert len(msg) < SHORT


# ------------------------------------------------------------------ (7) Ctrl-C
def test_ctrl_c_says_what_was_saved_and_how_to_resume(tmp_path):
    "A real SIGINT during the 10th step: fit raises TrainingInterrupted naming the checkpoint on disk and how to resume"
    from vsr_cic.train import TrainingInterrupted
    m, opt, sch, smp, loader, step = _toy()
    n = [0]
    def step_fn(b):
        n[0] += 1
        if n[0] == 10: signal.raise_signal(signal.SIGINT)     # the user presses Ctrl-C during the 10th step
        return step(b)
    # Python's own Ctrl-C handler, as in a terminal: a process started in the background by a non-interactive shell
    # (`nohup … &`) inherits SIGINT ignored, where no Ctrl-C reaches any program; the test must not depend on that
    old = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        msg = raises(lambda: fit(m, loader, smp, step_fn, opt, epochs=3, ckpt_dir=tmp_path, ckpt_every=4, progress=False),
                     f"Saved: {tmp_path/'last.pt'} at step 8", 'run the same call again', kind=TrainingInterrupted)
    finally: signal.signal(signal.SIGINT, old)
    assert 'interrupted at epoch 2, step 9' in msg

def test_cli_ctrl_c_prints_the_message_and_exits_130(monkeypatch, capsys):
    "The console entry point turns TrainingInterrupted into its message on stderr and exit status 130 (no traceback)"
    import vsr_cic.captioning as cap
    from vsr_cic.train import TrainingInterrupted
    def interrupted(*a, **k): raise TrainingInterrupted('ours XE: interrupted at epoch 2, step 9. Saved: run/ckpt/xe/last.pt at step 8')
    monkeypatch.setattr(cap, 'train_captioner', interrupted)
    monkeypatch.setattr(sys, 'argv', ['vsr_train_captioner', '--out_dir', 'run'])
    with pytest.raises(SystemExit) as e: cap.train_captioner_cli()
    assert e.value.code == 130 and 'Saved: run/ckpt/xe/last.pt at step 8' in capsys.readouterr().err

def test_older_checkpoints_with_numpy_rng_state_still_load(tmp_path):
    "Checkpoints written before this change hold numpy's RNG state as an array: allow-listed array rebuilding loads them"
    from vsr_cic.train import set_rng_state
    st = {'python': __import__('random').getstate(), 'numpy': np.random.get_state(), 'torch': torch.get_rng_state()}
    atomic_save({'model': {'w': torch.ones(1)}, 'rng': st, 'loop': {'history': [{'CIDEr-D': np.float64(0.5)}]}}, tmp_path/'old.pt')
    ck = load_checkpoint(tmp_path/'old.pt')
    assert ck['loop']['history'][0]['CIDEr-D'] == 0.5                   # a numpy float metric loads too
    set_rng_state(ck['rng']); a = np.random.rand()
    np.random.set_state(st['numpy']); assert np.random.rand() == a

def test_training_refuses_poisoned_features(toy, tmp_path):
    "train_captioner reads every feature array up front (check_inputs): a box 50x outside the image stops it, naming it"
    from vsr_cic.captioning import train_captioner
    q = shutil.copytree(toy, tmp_path/'d'); _edit_h5(q, 'img1_boxes', lambda a: a * 50)
    raises(lambda: train_captioner(data_dir=q, out_dir=tmp_path/'run', **{**RUN, 'world_images': None}),
           'features.hdf5', "'img1'", 'outside')
