"""Robustness of training and inputs: SIGKILL during checkpoint writes and during training, NaN/inf losses,
truncated or corrupt HDF5/JSON inputs (errors must name the file and the key)"""
import json, math, multiprocessing as mp, os, random, shutil, signal, subprocess, sys, time
from contextlib import contextmanager
from pathlib import Path
import h5py, pytest, torch
from conftest import ROOT
from vsr_cic.train import atomic_save, load_checkpoint, clean_partial, fit, NonFiniteLoss, check_inputs, _toy
from vsr_cic.data import load_dataset, DataError
from vsr_cic.loader import make_toy_dataset, FeatureStore, make_loader

BIG = 2**21          # floats per checkpoint in the writer test (8 MB: a write takes long enough to be hit)
N_KILLS = 8          # SIGKILLs of the checkpoint writer
N_INTERRUPTS = 3     # SIGKILLs of the training run before it is let finish
STEP_SLEEP = 0.03    # seconds per training step in the killed run (so kills land mid-run)
EPOCHS = 3           # of vsr_cic.train._toy: 7 steps each


@contextmanager
def one_thread():
    n = torch.get_num_threads(); torch.set_num_threads(1)
    try: yield
    finally: torch.set_num_threads(n)


def child_env():
    return {**os.environ, 'OMP_NUM_THREADS': '1', 'PYTHONPATH': f"{ROOT}{os.pathsep}{os.environ.get('PYTHONPATH', '')}"}


# ---- (a) a checkpoint write killed with SIGKILL never leaves a corrupt last.pt
def _writer(path, big):
    torch.set_num_threads(1)
    i = 0
    while True:
        i += 1; atomic_save({'i': i, 'w': big, 'check': big.sum()}, path)


def test_sigkill_during_checkpoint_write_leaves_a_loadable_file(tmp_path):
    path, big = tmp_path/'last.pt', torch.arange(BIG, dtype=torch.float32)
    ctx, rng, last_i, partial = mp.get_context('fork'), random.Random(0), 0, 0
    for _ in range(N_KILLS):
        p = ctx.Process(target=_writer, args=(path, big)); p.start()
        t0 = time.time()
        while not path.exists() and time.time() - t0 < 30: time.sleep(0.005)
        time.sleep(rng.uniform(0.0, 0.3))
        os.kill(p.pid, signal.SIGKILL); p.join()
        assert p.exitcode == -signal.SIGKILL
        ck = load_checkpoint(path)                       # never corrupt…
        assert torch.equal(ck['w'], big) and ck['check'] == big.sum() and ck['i'] >= 1
        last_i = ck['i']
        partial += len(list(tmp_path.glob('.last.pt.*.tmp')))
        clean_partial(tmp_path)                          # …only hidden temporaries are left, and fit removes them
        assert [f.name for f in tmp_path.iterdir()] == ['last.pt']
    print(f"{N_KILLS} kills; {partial} of them hit a write in progress")


# ---- (b) a training run killed at a random step resumes with no lost or repeated step
WORKER = f"""
import sys, time, torch
torch.set_num_threads(1)
from vsr_cic.train import fit, _toy
m, opt, sch, smp, loader, step = _toy(0)
sys.stdin.readline()                     # imported and ready: wait for the go (the test starts the next run early)
def slow(b):
    out = step(b); print('step', flush=True); time.sleep({STEP_SLEEP}); return out
fit(m, loader, smp, slow, opt, epochs={EPOCHS}, sched=sch, ckpt_dir=sys.argv[1], ckpt_every=1, progress=False)
print('done', flush=True)
"""


def test_sigkill_mid_training_resumes_exactly(tmp_path):
    with one_thread():                                   # the uninterrupted reference, in this process
        m, opt, sch, smp, loader, step = _toy(0)
        ref = fit(m, loader, smp, step, opt, epochs=EPOCHS, sched=sch, ckpt_dir=tmp_path/'ref', ckpt_every=1, progress=False)
    total, rng, kills = ref.step, random.Random(1), []
    spawn = lambda: subprocess.Popen([sys.executable, '-c', WORKER, str(tmp_path/'run')], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, text=True, env=child_env())
    nxt = spawn()
    for i in range(N_INTERRUPTS + 1):
        done = load_checkpoint(tmp_path/'run'/'last.pt')['loop']['step'] if (tmp_path/'run'/'last.pt').exists() else 0
        p, nxt = nxt, (spawn() if i < N_INTERRUPTS else None)   # the next process imports torch while this one trains
        p.stdin.write('go\n'); p.stdin.flush()
        if i < N_INTERRUPTS:
            k = rng.randint(1, max(1, (total - done) // 2))   # kill during the k-th step of this process
            for _ in range(k): assert p.stdout.readline().startswith('step'), "worker ended early"
            time.sleep(rng.uniform(0, 2 * STEP_SLEEP))   # land in the step, the optimiser step or the checkpoint write
            p.send_signal(signal.SIGKILL); p.wait(); p.stdin.close(); p.stdout.close(); kills.append(done + k)
            assert p.returncode == -signal.SIGKILL
        else:
            out, _ = p.communicate(timeout=120)
            assert p.returncode == 0 and out.strip().endswith('done'), out
    ck = load_checkpoint(tmp_path/'run'/'last.pt')
    r = load_checkpoint(tmp_path/'ref'/'last.pt')
    assert ck['loop']['step'] == total and ck['loop']['epoch'] == EPOCHS
    steps = [h['step'] for h in ck['loop']['history'] if h['kind'] == 'step']
    assert steps == list(range(1, total + 1))            # every step once: none lost, none repeated
    assert ck['loop']['history'] == r['loop']['history'] # the same batches gave the same losses, in the same order
    assert json.loads((tmp_path/'run'/'history.json').read_text()) == ck['loop']['history']
    for k in r['model']: assert torch.equal(ck['model'][k], r['model'][k]), k   # and the same final weights, exactly
    print(f"killed at steps {kills} of {total}; resumed to identical weights")


# ---- (c) NaN / inf stop the run with a clear message; the last good checkpoint is intact
@pytest.mark.parametrize('bad', [float('nan'), float('inf')])
def test_nonfinite_loss_stops_with_the_last_good_checkpoint(tmp_path, bad):
    m, opt, sch, smp, loader, step = _toy(0)
    calls = {'n': 0}
    def poisoned(b):
        calls['n'] += 1; out = step(b)
        return {'loss': out['loss'] * bad} if calls['n'] == 10 else out   # epoch 2, batch 2 (7 batches per epoch)
    with pytest.raises(NonFiniteLoss) as e:
        fit(m, loader, smp, poisoned, opt, epochs=EPOCHS, ckpt_dir=tmp_path, ckpt_every=1, progress=False, desc='toy')
    msg = str(e.value)
    for part in (f'toy: loss is {bad}', 'epoch 2, batch 2, step 9', 'before the optimiser step', str(tmp_path/'last.pt')):
        assert part in msg, (part, msg)
    ck = load_checkpoint(tmp_path/'last.pt')
    assert ck['loop']['step'] == 9                       # the 9 good steps are saved, the bad one is not
    for k, v in m.state_dict().items():                  # the model was not stepped with the bad loss
        assert torch.isfinite(ck['model'][k]).all() and torch.equal(ck['model'][k], v), k
    st = fit(m, loader, smp, step, opt, epochs=EPOCHS, ckpt_dir=tmp_path, ckpt_every=1, progress=False)
    assert st.step == 3 * 7                              # and the run resumes from it


# ---- (d) corrupt or truncated inputs: errors name the file and the key
@pytest.fixture
def toy(tmp_path):
    return make_toy_dataset(tmp_path/'toy')


def copy(toy, name): return Path(shutil.copytree(toy, toy.parent/name))


def raises_naming(fn, *parts):
    with pytest.raises(Exception) as e: fn()
    msg = str(e.value)
    for p in parts: assert p in msg, (p, type(e.value).__name__, msg)
    return e.value


def test_corrupt_caption_line_names_file_and_line(toy):
    q = copy(toy, 'badjson')
    lines = (q/'captions.jsonl').read_text().splitlines(); lines[2] = lines[2][:40]   # a line cut in the middle
    (q/'captions.jsonl').write_text('\n'.join(lines) + '\n')
    assert isinstance(raises_naming(lambda: load_dataset(q), 'captions.jsonl', 'line 3'), DataError)
    raises_naming(lambda: make_loader(q, 'caption', batch_size=2), 'captions.jsonl', 'line 3')
    raises_naming(lambda: check_inputs(q), 'captions.jsonl', 'line 3')


def test_bad_caption_field_names_file_record_and_field(toy):
    q = copy(toy, 'badfield')
    recs = [json.loads(l) for l in (q/'captions.jsonl').read_text().splitlines()]
    recs[1]['frames'][0]['args'][0]['role'] = 'AGENT'
    (q/'captions.jsonl').write_text(''.join(json.dumps(r) + '\n' for r in recs))
    raises_naming(lambda: load_dataset(q), 'captions.jsonl', "'c1'", 'role', "'AGENT'")


def test_missing_hdf5_key_names_file_and_key(toy):
    q = copy(toy, 'nokey')
    with h5py.File(q/'features.hdf5', 'r+') as h: del h['img1_boxes']
    ds = load_dataset(q)                                  # lazy: opening works, reading the image fails
    raises_naming(lambda: ds.features('img1'), 'features.hdf5', "'img1_boxes'")
    raises_naming(lambda: FeatureStore(q/'features.hdf5').get('img1'), 'features.hdf5', "'img1_boxes'")
    raises_naming(lambda: list(make_loader(q, 'caption', batch_size=2, shuffle=False)), 'features.hdf5', "'img1_boxes'")
    raises_naming(lambda: check_inputs(q, read=False), str(q/'features.hdf5'), "'img1_boxes'")


def test_truncated_hdf5_is_caught_by_check_inputs(toy):
    q = copy(toy, 'cut'); f = q/'features.hdf5'
    with open(f, 'r+b') as fh: fh.truncate(f.stat().st_size // 2)
    e = raises_naming(lambda: check_inputs(q), str(f), 'truncated')
    assert isinstance(e, DataError)


def test_garbage_inside_hdf5_is_caught_by_check_inputs(toy):
    q = copy(toy, 'garbage'); f = q/'features.hdf5'; n = f.stat().st_size
    with open(f, 'r+b') as fh: fh.seek(n // 3); fh.write(random.Random(0).randbytes(n // 3))   # a damaged third of the file
    e = raises_naming(lambda: check_inputs(q), str(f), "key '")
    assert isinstance(e, DataError)


def test_truncated_hdf5_named_by_the_loaders(toy):
    q = copy(toy, 'cut2'); f = q/'features.hdf5'
    with open(f, 'r+b') as fh: fh.truncate(f.stat().st_size // 2)
    raises_naming(lambda: load_dataset(q).features('img0'), 'features.hdf5')
    raises_naming(lambda: FeatureStore(f).get('img0'), 'features.hdf5')
    raises_naming(lambda: next(iter(make_loader(q, 'caption', batch_size=2))), 'features.hdf5')
