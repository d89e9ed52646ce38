"Two CPU ranks under torchrun (gloo) reach the weights of one process with the same global batch; NaN and early stopping stay in step across ranks"
import json, os, shutil, socket, subprocess, sys, time
import pytest, torch
from conftest import ROOT

LIMIT_S = 60   # expected wall time of the two-rank run on a shared 2-core CPU (the subprocess timeout is 4x this)


def free_port()->int:
    with socket.socket() as s: s.bind(('127.0.0.1', 0)); return s.getsockname()[1]


@pytest.fixture(scope='module')
def ddp_run(tmp_path_factory):
    "Run tests/ddp_script.py on 2 CPU processes; return its output folder and the wall time"
    if not torch.distributed.is_available(): pytest.skip("torch.distributed is not available in this build")
    out = tmp_path_factory.mktemp('ddp')
    env = {**os.environ, 'OMP_NUM_THREADS': '1', 'PYTHONPATH': f"{ROOT}{os.pathsep}{os.environ.get('PYTHONPATH', '')}"}
    for k in ('RANK', 'WORLD_SIZE', 'LOCAL_RANK', 'MASTER_ADDR', 'MASTER_PORT'): env.pop(k, None)
    if sys.platform.startswith('linux'): env.setdefault('GLOO_SOCKET_IFNAME', 'lo')   # containers whose hostname does not resolve
    t0 = time.time()
    r = subprocess.run([sys.executable, '-m', 'torch.distributed.run', '--nproc_per_node', '2', '--master_addr', '127.0.0.1',
                        '--master_port', str(free_port()), str(ROOT/'tests'/'ddp_script.py'), str(out)],
                       env=env, capture_output=True, text=True, timeout=4 * LIMIT_S)
    assert r.returncode == 0, r.stderr[-3000:]
    return out, time.time() - t0


def weights(path): return torch.load(path, map_location='cpu', weights_only=False)['model']


def close(a, b):
    assert a.keys() == b.keys()
    for k in a: torch.testing.assert_close(a[k], b[k], rtol=1e-5, atol=1e-6, msg=lambda m: f"{k}: {m}")


def test_ddp_matches_single_process(ddp_run, tmp_path):
    import ddp_script as S
    out, wall = ddp_run
    ranks = [json.loads((out/f'rank{r}.json').read_text()) for r in (0, 1)]
    assert [r['world_size'] for r in ranks] == [2, 2] and ranks[0]['backend'] == 'gloo'
    single, st, smp = S.train(tmp_path/'single', ddp=False)
    g = smp.batches(0)                                                 # one process: global batches of 8
    assert [a + b for a, b in zip(ranks[0]['batches'], ranks[1]['batches'])] == g   # 2 ranks x 4 = the same batches
    assert all(len(b) == S.BATCH // 2 for r in ranks for b in r['batches'])
    assert ranks[0]['steps'] == [st.step, st.step] == [S.N // S.BATCH * S.EPOCHS] * 2
    ref = single.state_dict()
    close(weights(out/'ddp'/'last.pt'), ref)                           # DistributedDataParallel
    close(weights(out/'sync'/'last.pt'), ref)                          # unwrapped model, fit averages the gradients
    hist = json.loads((out/'ddp'/'history.json').read_text())
    torch.testing.assert_close([h['loss'] for h in hist], [h['loss'] for h in st.history], rtol=1e-5, atol=1e-6)  # logged: mean over ranks
    for r in ranks: assert 'ranks hold different weights' in r['bypass'], r['bypass']   # a DDP step that skips forward is caught
    for r in ranks:                                                    # a NaN on rank 1 stops both ranks, no hang
        assert 'loss is nan at epoch 1, batch 2, step 2 (mean over 2 ranks)' in r['nan'], r['nan']
        assert r['early'] == [2, 0.5]                                  # both stop after epoch 2 on rank 0's scores
    assert weights(out/'nan'/'last.pt').keys() == ref.keys()           # the last good checkpoint is there
    print(f"2-rank torchrun run (6 trainings): {wall:.1f} s")


def test_ddp_checkpoint_resumes_on_one_process(ddp_run, tmp_path):
    "A checkpoint of 2 ranks (split='batch') resumes exactly on 1 process: the loop counts global batches"
    import ddp_script as S
    out, _ = ddp_run
    ck = torch.load(out/'part'/'last.pt', map_location='cpu', weights_only=False)
    assert ck['loop']['step'] == S.PART and ck['world_size'] == 2 and len(ck['rng_ranks']) == 2
    assert not any(k.startswith('module.') for k in ck['model'])      # the bare module's weights, loadable anywhere
    shutil.copytree(out/'part', tmp_path/'part')
    resumed, st, _ = S.train(tmp_path/'part', ddp=False)
    single, st1, _ = S.train(tmp_path/'single', ddp=False)
    assert st.step == st1.step
    assert [h['first'] for h in st.history] == [h['first'] for h in st1.history]   # no batch lost or repeated
    close(resumed.state_dict(), single.state_dict())


@pytest.mark.skipif(not torch.cuda.is_available() or torch.cuda.device_count() < 2, reason="needs 2 CUDA GPUs (NCCL)")
def test_ddp_nccl_matches_single_process(tmp_path):
    "The same run on 2 GPUs (NCCL, picked by init_distributed) against one CPU process"
    import ddp_script as S
    env = {**os.environ, 'OMP_NUM_THREADS': '1', 'PYTHONPATH': f"{ROOT}{os.pathsep}{os.environ.get('PYTHONPATH', '')}"}
    r = subprocess.run([sys.executable, '-m', 'torch.distributed.run', '--nproc_per_node', '2', '--master_addr', '127.0.0.1',
                        '--master_port', str(free_port()), str(ROOT/'tests'/'ddp_script.py'), str(tmp_path/'out')],
                       env=env, capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr[-3000:]
    assert json.loads((tmp_path/'out'/'rank0.json').read_text())['backend'] == 'nccl'
    single, _, _ = S.train(tmp_path/'single', ddp=False)
    ref = single.state_dict()
    for k, v in weights(tmp_path/'out'/'ddp'/'last.pt').items(): torch.testing.assert_close(v, ref[k], rtol=1e-4, atol=1e-5)
