"Papermill smoke run of the main job (nbs/train_captioner.ipynb) with tiny parameters"
import json, time
import pytest
from conftest import run_notebook

KEYS = ('BLEU-4', 'METEOR', 'ROUGE-L', 'CIDEr-D', 'SPICE', 'R_V', 'R_SR1', 'R_SR2')

def test_train_captioner_smoke(tmp_path):
    out = tmp_path/'run'
    t = time.time()
    run_notebook('train_captioner.ipynb', tmp_path, out_dir=str(out), world_images=40, epochs_xe=1, epochs_rl=1, hidden=16, batch_size=32, beam=2, seed=0)
    m = json.loads((out/'metrics.json').read_text())
    assert set(KEYS) <= set(m['test']), m['test']
    assert m['model'] == 'ours' and m['epochs'] == {'xe': 1, 'rl': 1} and m['train_seconds'] > 0
    assert m['n_test'] > 0 and isinstance(m['test']['CIDEr-D'], float)
    assert m['test']['SPICE'] is None or isinstance(m['test']['SPICE'], float)
    assert m['preset'] == 'ours' and m['options'] == {'role_emb': True, 'complete': True, 'constrain_verbs': True}   # the default
    for f in ('model.pt', 'curves.png', 'samples.txt', 'ckpt/xe/last.pt', 'ckpt/rl/last.pt'):
        assert (out/f).exists(), f
    print(f"smoke run took {time.time() - t:.0f} s")   # reported, not asserted: speed belongs to bench/
