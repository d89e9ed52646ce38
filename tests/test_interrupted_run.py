"""Issue 53: a run killed at any moment (SIGKILL: a step, the validation, a checkpoint write) and resumed ends with the
same kept epoch, the same scores and the same weights as an uninterrupted one, its stop decided from the recorded
validation history (`vsr_cic.train.Schedule`, `stop_state`). The driver is `interrupted_run_driver.py` beside this
file: a tiny real model and real data, so the whole test takes seconds."""
import hashlib, json, os, random, signal, subprocess, sys, time
from pathlib import Path
import pytest, torch
from conftest import ROOT
from vsr_cic.train import load_checkpoint
import interrupted_run_driver as driver

HERE = Path(__file__).parent
N_KILLS = 5          # SIGKILLs before the run is let finish
STEP_SLEEP = 0.01    # seconds per step in the killed runs (so a kill lands mid-run)


def _env(**extra):
    return {**os.environ, 'OMP_NUM_THREADS': '1', 'PYTHONPATH': f"{ROOT}{os.pathsep}{os.environ.get('PYTHONPATH', '')}",
            **extra}


def _spawn(ckpt, **env):
    return subprocess.Popen([sys.executable, str(HERE/'interrupted_run_driver.py'), str(ckpt), str(STEP_SLEEP)],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=_env(**env))


@pytest.fixture(scope='module')
def reference(tmp_path_factory):
    "The uninterrupted run, in this process: (its folder, its final `LoopState`)"
    d, n = tmp_path_factory.mktemp('ref'), torch.get_num_threads()
    torch.set_num_threads(1)
    try: return d, driver.train(d)
    finally: torch.set_num_threads(n)


def _files(d):
    return {p.name: (p.stat().st_mtime_ns, hashlib.sha256(p.read_bytes()).hexdigest()) for p in sorted(Path(d).iterdir())}


def _same_run(run, ref):
    "Assert the interrupted run's files say what the uninterrupted one's do: steps, scores, stop, kept and last weights"
    ck, r = load_checkpoint(run/'last.pt'), load_checkpoint(ref/'last.pt')
    steps = [h['step'] for h in ck['loop']['history'] if h['kind'] == 'step']
    assert steps == list(range(1, r['loop']['step'] + 1)), 'a step was lost or repeated'
    evals = lambda c: [(h['epoch'], h['val_mse']) for h in c['loop']['history'] if h['kind'] == 'eval']
    assert evals(ck) == evals(r), 'other validation scores'
    for k in ('epoch', 'step', 'best', 'best_epoch', 'stopped'): assert ck['loop'][k] == r['loop'][k], k
    for f in ('best.pt', 'last.pt'):
        a, b = load_checkpoint(run/f), load_checkpoint(ref/f)
        assert a['loop']['epoch'] == b['loop']['epoch'], f'{f}: another epoch kept'
        for k in b['model']: assert torch.equal(a['model'][k], b['model'][k]), f'{f}: {k} differs'
    assert json.loads((run/'history.json').read_text()) == ck['loop']['history']


def test_killed_at_random_moments_ends_as_the_uninterrupted_run(reference, tmp_path):
    ref_dir, ref = reference
    assert ref.stopped == 'plateau' and ref.best_epoch < ref.epoch < driver.SCHEDULE['epochs']   # patience acts, the cap does not
    run, rng, kills, total = tmp_path/'run', random.Random(53), [], ref.step
    nxt = _spawn(run)
    for i in range(N_KILLS + 1):
        p, nxt = nxt, _spawn(run)                               # the next process imports torch while this one trains
        p.stdin.write('go\n'); p.stdin.flush()
        if i < N_KILLS:
            done = load_checkpoint(run/'last.pt')['loop']['step'] if (run/'last.pt').exists() else 0
            k = rng.randint(1, max(1, (total - done) // 3))     # into the k-th step of this process …
            for _ in range(k):
                line = p.stdout.readline()
                assert line.startswith(('step', 'eval')), f'the driver ended early: {line!r}'
            time.sleep(rng.uniform(0, 3 * STEP_SLEEP))          # … then anywhere: the step, a validation, a write
            p.send_signal(signal.SIGKILL); p.wait(); p.stdin.close(); p.stdout.close()
            assert p.returncode == -signal.SIGKILL
            kills.append(load_checkpoint(run/'last.pt')['loop']['step'] if (run/'last.pt').exists() else 0)
        else:
            out, _ = p.communicate(timeout=120)
            assert p.returncode == 0 and 'done ' in out, out
    assert len(set(kills)) >= 3 and max(kills) < total, f'the kills did not land across the run: {kills}'
    res = json.loads(out.rsplit('done ', 1)[1])
    assert (res['best_epoch'], res['stopped'], res['epoch']) == (ref.best_epoch, 'plateau', ref.epoch), res
    _same_run(run, ref_dir)
    before = _files(run)                                    # resumed with nothing to train: every file as it was
    p = nxt; out, _ = p.communicate('go\n', timeout=120)
    assert p.returncode == 0 and 'step' not in out.split() and _files(run) == before, out
    print(f'killed with last.pt at steps {kills} of {total}; kept epoch {ref.best_epoch}, stopped after {ref.epoch}')


def test_the_comparison_catches_a_resume_that_ignores_the_history(reference, tmp_path):
    "Negative control: a resume that forgets the recorded validation scores, killed inside the plateau, ends elsewhere"
    ref_dir, ref = reference
    run = tmp_path/'run'
    p, nxt = _spawn(run, VSR_MUTANT='forget_history'), _spawn(run, VSR_MUTANT='forget_history')
    p.stdin.write('go\n'); p.stdin.flush()
    while (line := p.stdout.readline()) and line.strip() != f'eval {ref.best_epoch + 1}': pass   # one bad epoch seen
    for _ in range(3): assert p.stdout.readline().startswith('step')                           # into the next epoch
    p.send_signal(signal.SIGKILL); p.wait(); p.stdin.close(); p.stdout.close()
    out, _ = nxt.communicate('go\n', timeout=120)
    assert nxt.returncode == 0, out
    try: _same_run(run, ref_dir)
    except AssertionError as e: print(f'caught: {e}')
    else: raise AssertionError('the interrupted-run comparison passed a resume that ignores the validation history')
