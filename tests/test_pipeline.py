"""End-to-end pipeline (GSRL -> SSP -> merge -> captioner) on a tiny world with tiny untrained models, and papermill
smoke runs of the Table 1 / Table 2 experiment notebooks (evaluate.ipynb, diversity.ipynb) on tiny checkpoints"""
import json, subprocess, sys, time
import pytest
import torch
from conftest import ROOT, run_notebook, tiny_world

N_IMAGES = 40


@pytest.fixture(scope='module')
def tiny(tmp_path_factory):
    "A 40-image private world and tiny untrained checkpoints in the trainers' layout"
    return tiny_world(tmp_path_factory, 'tiny', N_IMAGES)


def _one_verb_caption(pipe, min_roles=2):
    from vsr_cic.data import frame_structure
    for c in pipe.data.captions:
        if len(c['frames']) == 1 and sum(s != 'V' for s in frame_structure(c, 0)) >= min_roles: return c
    pytest.skip('tiny world has no one-verb caption with enough roles')


def test_pipeline_end_to_end(tiny):
    from vsr_cic.pipeline import Pipeline
    from vsr_cic.vsr import VSR
    from vsr_cic.data import frame_structure
    data, dirs = tiny
    pipe = Pipeline.from_dirs(dirs['gsrl'], dirs['planner'], dirs['ours'][0], 'cpu', data_dir=data)
    assert pipe.missing == {} and pipe.ssp.rlevel is not None
    c = _one_verb_caption(pipe)
    v = VSR.from_structure(c['frames'][0]['verb'], frame_structure(c, 0))
    res = pipe(c['image_id'], v, n_structures=2, beam=2)
    assert 1 <= len(res.captions) == len(res.plans) == len(res.structures) <= 2
    for cap in res.captions:
        assert isinstance(cap['caption'], str) and cap['caption'] == ' '.join(cap['tokens'])
        assert len(cap['tokens']) == len(cap['subroles']) == len(cap['gates'])
    for st in res.structures: assert v.is_structure([s for s, _ in st['structures'][0]])
    assert len({tuple(p.items) for p in res.plans}) == len(res.plans)            # top-k structures are distinct plans
    n_sets = len(pipe.data.images[c['image_id']]['sets'])
    for role, n in v.roles:
        assert len(res.grounding[0][role]) == n and all(0 <= d['set'] < n_sets and 0 <= d['score'] <= 1 for d in res.grounding[0][role])


def test_pipeline_two_vsrs_merged(tiny):
    from vsr_cic.pipeline import Pipeline
    data, dirs = tiny
    pipe = Pipeline.from_dirs(dirs['gsrl'], dirs['planner'], dirs['ours'][0], 'cpu', data_dir=data)
    c = _one_verb_caption(pipe)
    verbs = list(pipe.vocabs['planner'].itos[2:4])
    res = pipe(c['image_id'], f'{verbs[0]}: ARG0, ARG1; {verbs[1]}: ARG0, LOC*2', n_structures=2, beam=1)
    want = sorted([(0, s) for s in ('V', 'ARG0', 'ARG1')] + [(1, s) for s in ('V', 'ARG0', 'LOC-1', 'LOC-2')])
    for plan in res.plans:
        assert sorted(l for it in plan.items for l in it.labels) == want           # every sub-role exactly once
        for f, v in enumerate(res.vsrs): assert v.is_structure(plan.structure(f))
    assert all(isinstance(x['caption'], str) for x in res.captions)


def test_pipeline_missing_checkpoint_and_fallback(tiny, tmp_path):
    from vsr_cic.pipeline import Pipeline
    from vsr_cic.data import frame_structure
    from vsr_cic.vsr import VSR
    data, dirs = tiny
    with pytest.raises(FileNotFoundError, match='slevel_transformer/best.pt'):
        Pipeline.from_dirs(dirs['gsrl'], tmp_path/'nothing', dirs['ours'][0])
    fb = Pipeline.from_dirs(tmp_path/'no_gsrl', tmp_path/'no_planner', dirs['ours'][0], data_dir=data, fallback=True)
    assert sorted(fb.missing) == ['gsrl', 'planner']
    c = _one_verb_caption(fb)
    res = fb(c['image_id'], VSR.from_structure(c['frames'][0]['verb'], frame_structure(c, 0)), gt=c, beam=1)
    assert [s for s, _ in res.structures[0]['structures'][0]] == list(frame_structure(c, 0))   # the annotated structure
    assert len(res.captions) == 1


def _run(nb, tmp_path, data, dirs, **params):
    ck = {k: [str(x) for x in v] if isinstance(v, list) else str(v) for k, v in dirs.items()}
    run_notebook(nb, tmp_path, data_dir=str(data), ckpt_dirs=ck, out_dir=str(tmp_path/'run'), **params)
    return json.loads((tmp_path/'run'/'metrics.json').read_text()), (tmp_path/'run'/'table.md').read_text()


def test_evaluate_notebook(tiny, tmp_path):
    "evaluate.ipynb: every method x {GSRL, GT}, planned by the right planner without fallbacks, the table rendered from metrics.json"
    t0 = time.time(); data, dirs = tiny
    m, table = _run('experiments/evaluate.ipynb', tmp_path, data, dirs, beam=2, limit=6, metrics=False, control=False, sinkhorn=True)
    rows = {(r['method'], r['grounding'], r['verbs']): r for r in m['rows']}
    for x in ('ours', 'c_lstm', 'c_updn', 'sct', 'ours_no_verb', 'ours (sinkhorn S-level)', 'ours_oracle_verb'):
        for g in ('gsrl', 'gt'): assert (x, g, 'all') in rows, (x, g)
    for r in m['rows']:
        assert r['unplanned'] == 0 and r['planner_fallback'] is False, r
        assert 0. <= r['CIDEr-D'] <= 10. and r['n'] == (r['n_one_verb'] if r['verbs'] == 'one' else
                                                        r['n_multi_verb'] if r['verbs'] == 'multi' else
                                                        r['n_one_verb'] + r['n_multi_verb'])
    assert rows[('ours_no_verb', 'gsrl', 'all')]['planner'] == 'no_verb' and rows[('ours', 'gsrl', 'all')]['planner'] == 'verb'
    assert rows[('ours (sinkhorn S-level)', 'gt', 'all')]['planner'] == 'sinkhorn'
    # untrained models of different kinds say different things: the rows are not one decoding copied
    assert len({round(r['CIDEr-D'], 9) for k, r in rows.items() if k[1:] == ('gt', 'all')}) > 1
    for (meth, g, v), r in rows.items():   # table.md is rendered from these rows
        if v == 'all': assert f"| {meth} | {g} | all | {r['n']} |" in table and f"{100 * r['CIDEr-D']:.1f}" in table
    # the oracle and Ours rows' every caption, for bench/real_language_oracle_check.py; not in metrics.json
    preds = json.loads((tmp_path/'run'/'table1_predictions.json').read_text())
    assert set(preds) == {f'{r}/{g}' for r in ('ours', 'ours_oracle_verb') for g in ('gsrl', 'gt')} and 'predictions' not in m
    assert [p['caption_id'] for p in preds['ours/gsrl']] == [p['caption_id'] for p in preds['ours_oracle_verb/gsrl']]
    assert len(preds['ours/gsrl']) == rows[('ours', 'gsrl', 'all')]['n'] == 6
    p = subprocess.run([sys.executable, str(ROOT/'bench'/'real_language_oracle_check.py'), str(tmp_path/'run')], capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    summary = json.loads(p.stdout.splitlines()[0])
    assert summary['n'] == 6 and summary['test_set'] == 'world test split' and 0 <= summary['R_V_oracle'] <= 1
    print(f'smoke run: {time.time() - t0:.1f} s')   # reported, not asserted: speed belongs to bench/


def test_diversity_notebook(tiny, tmp_path):
    t0 = time.time(); data, dirs = tiny
    m, table = _run('experiments/diversity.ipynb', tmp_path, data, dirs, beam=2, ks=[2, 6], limit=4, verb_epochs=2)
    got = {(r['method'], r['captions']) for r in m['rows']}
    assert got == {(x, k) for x in ('BS', 'SCT', 'Ours', 'Ours (suggested VSRs)') for k in (2, 6)}
    for r in m['rows']: assert 0 <= r['Div-1'] <= 1 and 0 <= r['Div-2'] <= 1 and r['self-CIDEr'] is not None
    assert '| Ours | 6 |' in table and '| Ours (suggested VSRs) | 6 |' in table
    assert m['suggested']['verbs'].startswith('trained into') and (tmp_path/'run'/'train_verbs'/'verbs').is_dir()   # no 'verbs' in ckpt_dirs
    print(f'smoke run: {time.time() - t0:.1f} s')   # reported, not asserted: speed belongs to bench/


def test_ablation_notebook(tiny, tmp_path):
    "ablation.ipynb: paper, paper + each addition, ours; every row over both seeds, with a spread"
    data, dirs = tiny
    out = tmp_path/'abl'
    run_notebook('experiments/ablation.ipynb', tmp_path, data_dir=str(data), out_dir=str(out), seeds=[0, 1], epochs_xe=1, epochs_rl=1,
                 hidden=8, batch_size=32, beam=2, limit=6, gsrl_dir=str(dirs['gsrl']), planner_dir=str(dirs['planner']),
                 diversity_ks=[2], diversity_limit=4)
    m = json.loads((out/'metrics.json').read_text())
    assert [r['row'] for r in m['rows']] == ['paper, verb-blind', 'paper', '+ role_emb', '+ complete (decoding)', 'ours']
    assert all(r['seeds'] == [0, 1] and r['CIDEr-D'] is not None and r['CIDEr-D_sd'] is not None for r in m['rows'])
    dec = {r['row']: r['decoded_with'] for r in m['rows']}
    assert dec['paper'] == {'role_emb': False, 'complete': False, 'constrain_verbs': True, 'last_slot': False}   # the official code's verb channel
    assert dec['paper, verb-blind'] == {'role_emb': False, 'complete': False, 'constrain_verbs': False, 'last_slot': False}
    assert dec['+ complete (decoding)']['complete'] and not dec['+ complete (decoding)']['role_emb']
    assert dec['ours'] == {'role_emb': True, 'complete': True, 'constrain_verbs': True, 'last_slot': True}
    assert '± ' in (out/'table.md').read_text()
    div = m['diversity']   # Table 2 of the ablation: Ours' k captions under every row, both seeds
    assert [r['row'] for r in div['rows']] == [r['row'] for r in m['rows']] and {r['captions'] for r in div['rows']} == {2}
    assert all(r['seeds'] == [0, 1] and 0 <= r['Div-2'] <= 1 and r['CIDEr-D'] is not None for r in div['rows'])
    assert '| paper | 2 | 2 |' in (out/'table.md').read_text()
