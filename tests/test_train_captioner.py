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
    assert m['preset'] == 'ours' and m['options'] == {'role_emb': True, 'complete': True, 'constrain_verbs': True, 'last_slot': True}   # the default
    for f in ('model.pt', 'curves.png', 'samples.txt', 'ckpt/xe/last.pt', 'ckpt/rl/last.pt'):
        assert (out/f).exists(), f
    print(f"smoke run took {time.time() - t:.0f} s")   # reported, not asserted: speed belongs to bench/

def test_parameters_cell_is_train_settings():
    "The notebook's papermill parameters are `TrainSettings`'s fields, in order, with its defaults (a drift in either fails)"
    import ast, nbformat
    from dataclasses import MISSING, fields
    from conftest import ROOT
    from vsr_cic.captioning import TrainSettings
    nb = nbformat.read(ROOT/'nbs'/'train_captioner.ipynb', as_version=4)
    cells = [c for c in nb.cells if 'parameters' in c.metadata.get('tags', [])]
    assert len(cells) == 1, f"{len(cells)} cells tagged 'parameters'"
    src = cells[0].source
    assigned = [(n.targets[0].id, ast.literal_eval(n.value)) for n in ast.parse(src).body]   # plain `name = literal` lines
    expected = [(f.name, f.default) for f in fields(TrainSettings) if f.default is not MISSING]
    assert [n for n, _ in assigned] == [n for n, _ in expected], "parameters differ from TrainSettings's fields"
    for (n, v), (_, d) in zip(assigned, expected):
        assert v == d and type(v) is type(d), f"parameter {n} = {v!r}, but TrainSettings's default is {d!r}"
    comments = [l.split('#', 1)[1] for l in src.splitlines() if '#' in l]
    assert not [c for c in comments if '=' in c], "papermill misreads a parameter whose comment holds '='"
