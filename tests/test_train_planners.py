"Papermill smoke runs of the GSRL and planner experiment notebooks on a tiny private world (1 epoch each)"
import json, time
import pytest
from conftest import run_notebook

TINY = dict(world_images=40, epochs=1, batch_size=32, seed=0, device='cpu')


def run(nb, tmp_path, **params):
    "Execute an experiment notebook with papermill (its `out_dir` parameter -> tmp_path/'run')"
    run_notebook(nb, tmp_path, out_dir=str(tmp_path/'run'), **params)


def test_train_gsrl_notebook(tmp_path):
    "train_gsrl.ipynb with preset='paper': the paper's lr and widths are used and recorded (epochs given: 1)"
    t0 = time.time()
    run('experiments/train_gsrl.ipynb', tmp_path, preset='paper', **TINY)
    m = json.loads((tmp_path/'run'/'metrics.json').read_text())
    assert m['lr'] == 1e-5 and (m['config']['d_v'], m['config']['d_att'], m['config']['hidden']) == (300, 512, 512)
    assert m['settings']['preset'] == 'paper' and m['settings']['differs_from_paper'] == {'epochs': [1, 20], 'batch_size': [32, 128]}
    assert {'grounding_acc', 'recall_at_n', 'test', 'baseline', 'epochs'} <= set(m)
    assert 0 <= m['grounding_acc'] <= 1 and 0 <= m['recall_at_n'] <= 1 and m['epochs'] == 1
    assert (tmp_path/'run'/'gsrl'/'last.pt').exists() and (tmp_path/'run'/'curves.png').exists()
    print(f'smoke run: {time.time() - t0:.1f} s')   # reported, not asserted: speed belongs to bench/


def test_train_planner_notebook(tmp_path):
    t0 = time.time()
    run('experiments/train_planner.ipynb', tmp_path, n_verbs_fig=2, **TINY)
    m = json.loads((tmp_path/'run'/'metrics.json').read_text())
    for k in ('s_level', 's_level_sn', 'baseline'):
        assert {'exact', 'pair_acc', 'valid', 'exact_seen', 'exact_unseen', 'ceiling'} <= set(m[k]), k
        assert m[k]['valid'] == 1.0
    assert 'perm_acc' in m['r_level'] and 'exact_at_2' in m['s_level']
    assert sum(c['n'] for c in m['structure_cases'].values()) == m['s_level']['n']   # the world's test frames split by case
    for d in ('slevel_transformer', 'slevel_sinkhorn', 'rlevel'): assert (tmp_path/'run'/d/'last.pt').exists(), d
    assert (tmp_path/'run'/'structures.html').read_text().count('<div>') >= 2
    st = m['settings']   # the default preset 'cpu', and what differs from the paper's S-level (recorded for the README)
    assert st['preset'] == 'cpu' and st['differs_from_paper']['d_model'] == [128, 512] and st['differs_from_paper']['n_layers'] == [2, 3]
    import torch
    cfg = torch.load(tmp_path/'run'/'slevel_transformer'/'last.pt', weights_only=False)['config']
    assert (cfg['d_model'], cfg['n_heads'], cfg['n_layers'], cfg['ffn']) == (128, 4, 2, 256)
    print(f'smoke run: {time.time() - t0:.1f} s')   # reported, not asserted: speed belongs to bench/
