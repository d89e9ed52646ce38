"The main job's trainer under torchrun: 2 CPU ranks (gloo) train the captioner on a small world, rank 0 writes, and the run resumes on one process"
import json, os, subprocess, sys, time
import pytest, torch
from conftest import ROOT
from test_ddp import free_port

LIMIT_S = 120   # expected wall time of the two-rank run on a shared 2-core CPU (the subprocess timeout is 4x this)
ARGS = ['--device', 'cpu', '--world_images', '80', '--batch_size', '20', '--epochs_rl', '0',
        '--metrics', 'False', '--control', 'False', '--progress', 'False', '--seed', '3']


def test_captioner_under_torchrun_then_resume(tmp_path):
    if not torch.distributed.is_available(): pytest.skip("torch.distributed is not available in this build")
    out = tmp_path/'cap'
    env = {**os.environ, 'OMP_NUM_THREADS': '1', 'PYTHONPATH': f"{ROOT}{os.pathsep}{os.environ.get('PYTHONPATH', '')}"}
    for k in ('RANK', 'WORLD_SIZE', 'LOCAL_RANK', 'MASTER_ADDR', 'MASTER_PORT'): env.pop(k, None)
    if sys.platform.startswith('linux'): env.setdefault('GLOO_SOCKET_IFNAME', 'lo')
    t0 = time.time()
    r = subprocess.run([sys.executable, '-m', 'torch.distributed.run', '--nproc_per_node', '2', '--master_addr', '127.0.0.1',
                        '--master_port', str(free_port()), '-m', 'vsr_cic.captioning', '--out_dir', str(out), '--epochs_xe', '1', *ARGS],
                       env=env, capture_output=True, text=True, timeout=4 * LIMIT_S, cwd=tmp_path)
    assert r.returncode == 0, r.stderr[-3000:]
    wall = time.time() - t0
    printed = [json.loads(l) for l in r.stdout.splitlines() if l.startswith('{')]
    assert len(printed) == 1, r.stdout[-2000:]                          # rank 0 alone reports
    m = json.loads((out/'metrics.json').read_text())
    assert m['world_size'] == 2 and m['config']['device'] == 'cpu' and m['n_test'] > 0
    hist = json.loads((out/'ckpt'/'xe'/'history.json').read_text())
    steps = [h for h in hist if h['kind'] == 'step']
    from vsr_cic.captioning import caption_data
    n_train = len(caption_data(out/'world'/'vsr_world', splits=('train',)).splits['train'])
    assert len(steps) == -(-n_train // 20)                              # global batches of 20: as many steps as one process
    assert all(torch.isfinite(torch.tensor(h['loss'])) for h in steps)
    assert steps[-1]['loss'] < steps[0]['loss']                         # it learned
    w2 = torch.load(out/'ckpt'/'xe'/'last.pt', map_location='cpu', weights_only=False)
    assert w2['world_size'] == 2 and w2['loop']['step'] == len(steps)
    # the same out_dir, one more epoch, one process: continues from the 2-rank checkpoint
    from vsr_cic.captioning import train_captioner
    res = train_captioner(out_dir=out, epochs_xe=2, epochs_rl=0, batch_size=20, world_images=80, device='cpu', seed=3,
                          metrics=False, control=False, progress=False)
    assert res['interrupted'] is None and res['epochs']['xe'] == 2
    hist = json.loads((out/'ckpt'/'xe'/'history.json').read_text())
    assert [h['step'] for h in hist if h['kind'] == 'step'] == list(range(1, 2 * len(steps) + 1))   # no lost or repeated steps
    print(f"2-rank torchrun captioner (1 XE epoch, {n_train} captions): {wall:.1f} s")
