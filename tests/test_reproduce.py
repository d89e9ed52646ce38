"""`nbs/experiments/reproduce.ipynb` end to end on a tiny private world: every step runs in one papermill command, the
summary has every step and every Table 1 row, and its `table1_metrics.json` publishes (README block, results page)"""
import json
from conftest import ROOT, run_notebook

STEPS = ['train_gsrl', 'train_planner', 'train_planner_no_verb', 'train_verbs', 'compare_captioners', 'evaluate',
         'diversity', 'ablation']
TINY = {'train_verbs': {'epochs': 2}, 'compare_captioners': {'hidden': 16, 'beam': 2}, 'evaluate': {'beam': 2},
        'diversity': {'beam': 2, 'ks': [2], 'verb_epochs': 2}}


def test_reproduce_end_to_end_and_publish(tmp_path):
    out = tmp_path/'rep'
    run_notebook('experiments/reproduce.ipynb', tmp_path, out_root=str(out), preset='paper', quick=True, world_images=40,
                 limit_eval=8, step_params=TINY, nbs_dir=str(ROOT/'nbs'/'experiments'),
                 ablation={'seeds': [0], 'hidden': 8, 'beam': 2, 'diversity_ks': [2], 'diversity_limit': 4})
    s = json.loads((out/'summary.json').read_text())
    assert list(s['wall_s']) == STEPS                               # every step ran, in order
    got = set(s['metrics'])
    assert {'train_gsrl', 'train_planner', 'train_planner_no_verb', 'train_verbs', 'evaluate', 'diversity', 'ablation'} <= got
    assert {f'captioner/{m}' for m in ('ours', 'c_lstm', 'c_updn', 'sct', 'no_verb')} <= got
    rows = {(r['method'], r['grounding']) for r in s['table1_rows'] if r['verbs'] == 'all'}
    for m in ('c_lstm', 'c_updn', 'sct', 'ours_no_verb', 'ours', 'ours_oracle_verb'):
        assert {(m, 'gsrl'), (m, 'gt')} <= rows, m
    assert {r['preset'] for r in s['table1_rows']} == {'paper'}
    # the run's Table 1 publishes with one call, as the README says
    from vsr_cic.tables import publish
    root = tmp_path/'repo'; (root/'nbs').mkdir(parents=True)
    block = '<!-- results:world_table1 -->\nold\n<!-- /results:world_table1 -->\n'
    (root/'README.md').write_text('# x\n' + block)
    (root/'nbs'/'index.ipynb').write_text(json.dumps({'cells': [{'cell_type': 'markdown', 'metadata': {}, 'source': [block]}]}))
    m = publish(out/'table1_metrics.json', 'world_table1', 'Table 1 on a tiny world', root=root)
    assert m['table1_settings'] == {'seeds': [0], 'preset': 'paper', 'quick': True}
    readme = (root/'README.md').read_text()
    assert 'old' not in readme and '| ours | gsrl | paper | 8 |' in readme, readme
    assert (root/'results'/'world_table1.md').read_text().startswith('# Table 1 on a tiny world')
    assert '| ours | gsrl | paper | 8 |' in ''.join(json.loads((root/'nbs'/'index.ipynb').read_text())['cells'][0]['source'])
