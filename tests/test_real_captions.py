"""The class-feature dataset kind end to end on a tiny real corpus (build from text, load, train a step of every
component, caption a held-out real COCO photo), and a papermill smoke run of nbs/experiments/real_captions.ipynb.
Needs ../shared/data (COCO val2017 captions, coco_mini); skips with the reason when it is absent."""
import json, math
from pathlib import Path
import numpy as np
import pytest
import torch
from conftest import run_notebook

N_IMAGES = 40          # COCO val2017 images (5 captions each) in the tiny corpus
METHODS = ('ours', 'ours_gt', 'retrieval', 'retrieval_gt')
METRICS = ('CIDEr-D', 'CIDEr-D_5ref', 'BLEU-4', 'METEOR', 'R_V', 'R_SR1', 'R_SR2', 'repeat_rate', 'unseen_bigram_rate',
           'n_captions', 'n_images')


@pytest.fixture(scope='module')
def tiny(shared_data, tmp_path_factory):
    "A class-feature training set built from real captions alone, and the coco_mini photos in its classes"
    from vsr_cic.readers import read_coco
    from vsr_cic.build import build
    from vsr_cic.data import load_dataset
    from vsr_cic.photos import coco_test_files
    from vsr_cic.build import photo_test_set
    tmp = tmp_path_factory.mktemp('real_captions')
    rec = read_coco(shared_data/'coco_captions'/'captions_val2017.json')
    rep = build(rec, tmp/'train', text_only=True, feature_kind='class', limit=N_IMAGES, progress=False, splits=(0.2, 0.2))
    data = load_dataset(tmp/'train')
    cj, ij, pics = coco_test_files(shared_data/'coco_mini')
    test_path, _ = photo_test_set(cj, ij, pics, tmp/'photos', data.meta['classes'])
    return tmp, rep, data, load_dataset(test_path)


def test_build_and_load(tiny):
    _, rep, data, test = tiny
    from vsr_cic.features import SCENE_CONTEXT
    assert data.meta['features'] == {'kind': 'class', 'dim': len(data.meta['classes']), 'scene_context': SCENE_CONTEXT}
    assert test.meta['features']['kind'] == 'class' and test.meta['classes'] == data.meta['classes']   # columns line up
    assert test.meta['features']['scene_context'] == SCENE_CONTEXT                   # photos built as the training data
    assert rep['captions_kept'] > 0 and rep['stats']['distractor sets'] > 0
    scene = data.meta['classes'].index('scene')
    for d in (data, test):
        for iid in list(d.images)[:10]:
            f = d.features(iid)
            lab = f['cls_prob'].argmax(1)
            np.testing.assert_array_equal(f['feats'][lab != scene], f['cls_prob'][lab != scene])   # kind 'class': the class scores
            others = len(set(lab[lab != scene].tolist()))                       # scene rows: + the picture's other classes
            np.testing.assert_allclose(f['feats'][lab == scene].sum(1), 1 + (SCENE_CONTEXT if others else 0), rtol=1e-6)
            sets = d.images[iid]['sets']
            assert d.meta['classes'][int(f['cls_prob'][sets[-1][0]].argmax())] == 'scene'   # the whole-picture proposal last
    for c in data.captions:   # every entity is grounded: to its class's set or to the scene
        assert all(sl['set'] is not None for sl in c['slots'] if all(l[1] != 'V' for l in sl['labels'])), c['caption']


def test_train_a_step_and_caption(tiny):
    "A step of GSRL and the planners and one short epoch of the captioner on the class features, then the full pipeline on a real photo"
    tmp, _, data, test = tiny
    from vsr_cic.train_planners import train_gsrl, train_planner
    from vsr_cic.captioning import train_captioner
    from vsr_cic.pipeline import Pipeline
    from vsr_cic.photos import pipeline_predictions
    kw = dict(device='cpu', stop_after=1)
    train_gsrl(tmp/'train', tmp/'gsrl', epochs=1, batch_size=16, **kw)
    train_planner(tmp/'train', tmp/'planner', epochs=1, epochs_r=1, batch_size=16, **kw)
    m = train_captioner(data_dir=tmp/'train', out_dir=tmp/'captioner', epochs_xe=1, epochs_rl=0, batch_size=64, hidden=16, beam=1,
                        progress=False, metrics=False, control=False, device='cpu',   # one epoch: a few steps (it writes model.pt at the end)
                        region_words=True, precompute=True)                           # as real_captions.ipynb trains it
    assert m['epochs']['xe'] == 1
    pipe = Pipeline.from_run(tmp, 'cpu', data_dir=tmp/'train')
    assert pipe.gsrl.cfg.feat_dim == len(data.meta['classes'])
    assert pipe.captioner.region_words is not None and pipe.captioner.precompute   # the options survive the checkpoint
    pipe.data = test
    one = next(iter(test.images))
    test.captions = [c for c in test.captions if c['image_id'] == one]
    preds, failed = pipeline_predictions(pipe, test, None, 'gsrl', 'ssp', beam=1)
    assert len(preds) == len(test.captions) > 0
    ok = [p for p in preds if p['structure'] is not None]
    assert len(ok) + failed == len(preds) and ok, preds   # a verb the tiny corpus never saw is the only reason to fail
    sets = test.images[one]['sets']
    assert all(j is None or 0 <= j < len(sets) for p in ok for g in p['grounding'] for _, j in g)
    pipe.joint_grounding = True                                         # one assignment per VSR: roles share only the scene
    from vsr_cic.pipeline import image_proposals
    shared = pipe.shared_sets(image_proposals(test, one))
    assert shared == [k == len(sets) - 1 for k in range(len(sets))]     # the whole-picture proposal is last
    joint, failed_j = pipeline_predictions(pipe, test, None, 'gsrl', 'ssp', beam=1)
    assert failed_j == failed
    for p in joint:
        for g in p['grounding'] or []:
            objs = [j for s, j in g if s != 'V' and j is not None and not shared[j]]
            assert len(objs) == len(set(objs)), g                       # no set but the scene serves two sub-roles
    pipe.joint_grounding = False
    from vsr_cic.decoding import SlotWordCap, slot_word_limit
    k = slot_word_limit(data)                                           # the training captions' sub-role length limit
    assert 1 <= k <= max(sl['span'][1] - sl['span'][0] for c in data.captions for sl in c['slots'])
    pipe.captioner = SlotWordCap(pipe.captioner, 1)                     # decoding through the limit: one word per sub-role
    capped, failed1 = pipeline_predictions(pipe, test, None, 'gsrl', 'ssp', beam=2)
    assert failed1 == failed and all(p['tokens'] for p in capped if p['structure'] is not None)   # the pipeline decodes through it


def entity_photos(sd, dest):
    "The two COCO Entities sample photos (formats/coco_entities: not in coco_mini, never read by a default) as a COCO-format set"
    import shutil
    from PIL import Image
    cats = json.loads((sd/'coco_mini'/'annotations'/'instances_train2017.json').read_text())['categories']
    by, alias = {c['name']: c['id'] for c in cats}, {'woman': 'person', 'man': 'person'}
    src, dest = sd/'formats'/'coco_entities', Path(dest)
    (dest/'images').mkdir(parents=True); (dest/'annotations').mkdir()
    images, caps, boxes = [], [], []
    for f in sorted(src.glob('*.json')):
        (iid, entry), = json.loads(f.read_text()).items()
        pic = next(src.glob(f'*{int(iid):012d}.jpg'))
        shutil.copy(pic, dest/'images'/pic.name)
        w, h = Image.open(pic).size
        images.append({'id': int(iid), 'file_name': pic.name, 'width': w, 'height': h})
        caps += [{'id': 1000 * int(iid) + i, 'image_id': int(iid), 'caption': c} for i, c in enumerate(entry)]
        seen = {}
        for e in entry.values():
            for cls, dets in e['detections'].items():
                for did, (x1, y1, x2, y2) in dets:
                    if alias.get(cls, cls) in by: seen[did] = (by[alias.get(cls, cls)], [x1, y1, x2 - x1, y2 - y1])
        boxes += [{'id': 1000 * int(iid) + did, 'image_id': int(iid), 'category_id': c, 'bbox': b, 'area': b[2] * b[3], 'iscrowd': 0}
                  for did, (c, b) in seen.items()]
    cj, ij = dest/'annotations'/'captions_entities.json', dest/'annotations'/'instances_entities.json'
    cj.write_text(json.dumps({'images': images, 'annotations': caps}))
    ij.write_text(json.dumps({'images': images, 'annotations': boxes, 'categories': cats}))
    return cj, ij, dest/'images'


@pytest.fixture(scope='module')
def nb_run(shared_data, tmp_path_factory):
    "nbs/experiments/real_captions.ipynb with quick=True (every step, tiny) on photos outside coco_mini (the COCO Entities samples)"
    tmp = tmp_path_factory.mktemp('real_captions_nb')
    out = tmp/'run'
    cj, ij, pics = entity_photos(shared_data, tmp/'photos')
    run_notebook('experiments/real_captions.ipynb', tmp, out_dir=str(out), quick=True, test_captions_json=str(cj), test_instances_json=str(ij),
                 test_image_dir=str(pics), visual_small_dir=str(tmp/'none'), device='cpu', results_md=str(tmp/'results'/'real.md'),
                 figure_path=str(out/'real_captions.png'),   # the run's own figure: no copy onto itself
                 keep_sweep=str(tmp/'kept_sweep'))           # its sweep choices, for a later run's sweep_from
    return out, json.loads((out/'metrics.json').read_text()), tmp


def test_table1_rows(nb_run):
    "metrics.json's table1 / table2 as the issue names them, on photos the defaults never read; the results page is generated from it"
    out, m, tmp = nb_run
    from vsr_cic.tables import TABLE1_METHODS, table1_markdown
    assert m['test']['images'] == 2 and m['test']['captions'] > 0       # the two COCO Entities photos, not coco_mini
    rows = m['table1']
    got = {(r['test_set'], r['method'], r['grounding'], r['preset'], r['verbs']) for r in rows}
    for ts in ('photos', 'corpus'):
        for meth in TABLE1_METHODS:
            for g in ('gsrl', 'gt'):
                assert (ts, meth, g, 'paper', 'all') in got, (ts, meth, g)
        assert (ts, 'ours', 'gsrl', 'ours', 'all') in got               # the additions' rows of their own
    floors = [r for r in rows if r['method'] == 'retrieval_blind']
    assert {(r['test_set'], r['grounding']) for r in floors if r['verbs'] == 'all'} == {(t, g) for t in ('photos', 'corpus') for g in ('gsrl', 'gt')}
    for r in rows:
        assert r['verbs'] in ('all', 'one', 'multi') and r['seeds'] == ([] if r in floors else [0]) and r['n_captions'] > 0
        assert 0 <= r['has_verb'] <= 1, r                                  # share of captions whose own parse has a verb frame
        assert r['special'] == 0, r                                        # no <pad>, <bos>, <eos> in any caption (#54)
        assert 0 <= r['unk'] <= 1 and (r['unk'] == 0 or r['preset'] != 'ours'), r   # `ours` never says <unk>; `paper` may (reported)
        assert r.get('stopped') is None or set(r['stopped']) == {'xe', 'rl'}, r   # why each stage ended (#53)
        for k in ('BLEU-4', 'METEOR', 'ROUGE-L', 'CIDEr-D', 'CIDEr-D_5ref', 'R_V', 'R_SR1', 'R_SR2'):
            assert k in r and (r[k] is None or math.isfinite(r[k])), (r['method'], k)
            assert f'{k}_sd' not in r                                      # one seed: no standard deviation
    assert {r['method'] for r in m['table2']} == {'BS', 'SCT', 'Ours'} and all(r['k'] == 2 for r in m['table2'])
    assert m['run']['commit'] and m['run']['machine'] and set(m['orderings']) == {'photos', 'corpus'}
    page = (tmp/'results'/'real.md').read_text()
    assert page == (out/'results_page.md').read_text() and table1_markdown(rows, 'all', 'photos') in page
    assert '162.8' in page                                                 # the paper's numbers beside ours
    from vsr_cic.protocol import chosen_dir
    trained = {p.parent.name for p in (out/'table1').glob('*/seed0') if (chosen_dir(p)/'model.pt').exists()}
    assert trained == {'c_lstm', 'c_updn', 'sct', 'ours_no_verb', 'ours'}   # the oracle verb decodes ours; w/o verb trains on its own (#53)
    nv, sct = (json.loads((chosen_dir(out/'table1'/m/'seed0')/'metrics.json').read_text()) for m in ('ours_no_verb', 'sct'))
    assert nv['config']['seed'] == 1000 and sct['config']['seed'] == 0   # w/o verb: its own seed stream (SCT's network under `paper`)
    grid = m['table1_settings']['protocol']['grid']
    for p in (out/'table1').glob('*/seed0'):                # one protocol: the same sweep for every method, chosen on validation
        ch = json.loads((p/'choice.json').read_text())
        assert set(ch['val_CIDEr-D']) == set(grid) and ch['chosen'] in grid, ch
        assert ch['chosen'] == max(grid, key=lambda n: (ch['val_CIDEr-D'][n], -list(grid).index(n)))
        for n in grid:                                      # the sweep decoded no test split
            if n != ch['chosen']: assert json.loads((p/'sweep'/n/'metrics.json').read_text())['n_test'] == 0
    assert all(r['has_verb'] >= .9 for r in floors)          # the floor returns human captions: they have verbs
    for r in (r for r in rows if r not in floors):          # every trained row went through XE and self-critical training
        assert r['epochs']['rl'] >= 1 and r['epochs']['xe'] >= 1 and r['selected']['stage'] in ('xe', 'rl'), r
        assert r['stopped'] == {'xe': 'cap', 'rl': 'cap'}, r   # the smoke's one epoch of each stage: its cap, not a plateau
    assert (out/'planner_no_verb'/'slevel_transformer').exists()


def test_table1_intervals(nb_run):
    "Ours minus each baseline with paired intervals over images (#53): in metrics.json, on the baseline rows, on the page; R_V_lemma in every row; the curves"
    out, m, tmp = nb_run
    from vsr_cic.intervals import ORDERINGS
    ivs = m['table1_intervals']
    got = {(e['preset'], e['test_set'], e['grounding'], e['baseline']) for e in ivs}
    for ts in ('photos', 'corpus'):
        for g in ('gsrl', 'gt'):
            assert {('paper', ts, g, b) for b in ('c_lstm', 'c_updn', 'sct', 'ours_no_verb', 'retrieval_blind')} <= got, (ts, g)
    for e in ivs:
        assert e['seeds'] == [0] and e['n_images'] >= 1 and e['n_captions'] >= e['n_images'] and e['B'] == 1000
        assert {'CIDEr-D', 'R_V_lemma'} <= set(e['metrics']), e['metrics'].keys()
        for v in e['metrics'].values(): assert v['lo'] <= v['diff'] <= v['hi'] or v['lo'] == v['hi'], v; assert v['ordering'] in ORDERINGS
    rows = {(r['test_set'], r['method'], r['grounding'], r['preset']): r for r in m['table1'] if r['verbs'] == 'all'}
    for r in rows.values():
        assert r['R_V_lemma'] is None or 0 <= r['R_V_lemma'] <= 1, r
    e = next(e for e in ivs if (e['preset'], e['test_set'], e['grounding'], e['baseline']) == ('paper', 'corpus', 'gsrl', 'sct'))
    assert rows[('corpus', 'sct', 'gsrl', 'paper')]['vs_ours'] == e['metrics']
    o, b = rows[('corpus', 'ours', 'gsrl', 'paper')], rows[('corpus', 'sct', 'gsrl', 'paper')]
    assert abs(e['metrics']['R_V_lemma']['diff'] - (o['R_V_lemma'] - b['R_V_lemma'])) < 1e-9   # the rows' own values
    assert abs(e['metrics']['CIDEr-D']['diff'] - (o['CIDEr-D'] - b['CIDEr-D'])) < 0.05          # our CIDEr-D on the same tokens vs pycocoevalcap's
    assert 'vs_ours' not in rows[('corpus', 'ours', 'gsrl', 'paper')]
    page = (out/'results_page.md').read_text()
    assert '**Ours minus each baseline**' in page and '| sct | gsrl | 0 |' in page
    assert (out/'val_curves_all.png').read_bytes()[:4] == b'\x89PNG'
    from vsr_cic.protocol import DECODING_MENU
    for r in (r for r in rows.values() if r['method'] != 'retrieval_blind'):   # each trained row's beam options, chosen on validation
        d = r['decoding']
        assert d['eos_gate'] == ('paid' if r['preset'] == 'paper' else 'free') and d['chosen']['length_norm'] in DECODING_MENU['length_norm'], d
        assert len(d['val_CIDEr-D']) == len(DECODING_MENU['length_norm']) and d['n_val'] == 8, d
        assert d['val_CIDEr-D'][f"length_norm={d['chosen']['length_norm']}"] == max(d['val_CIDEr-D'].values()), d


def test_run_checks(nb_run, tmp_path):
    "The bench checks read a finished run: where its Table 1 captioners attend, and the oracle row caption by caption"
    import subprocess, sys
    from conftest import ROOT
    out, m, _ = nb_run
    p = subprocess.run([sys.executable, str(ROOT/'bench'/'table1_attention_check.py'), str(out), '--n', '32', '--out', str(tmp_path/'a.json')],
                       capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    rows = json.loads((tmp_path/'a.json').read_text())['rows']
    assert set(rows) == {'c_lstm/seed0', 'c_updn/seed0', 'sct/seed0', 'ours/seed0'} and all(r['n'] > 0 for r in rows.values())
    assert all(0 <= r['alpha_v'] <= 1 for k, r in rows.items() if k in ('sct/seed0', 'ours/seed0'))    # adaptive attention
    assert rows['c_updn/seed0']['alpha_v'] is None and rows['c_lstm/seed0']['alpha_v'] is None       # top-down / none
    assert all(1 <= r['distinct'] <= r['n'] for r in rows.values())
    assert all(set(r['nll']) == {'own', 'other_regions', 'other_words'} and all(v > 0 for v in r['nll'].values()) for r in rows.values())
    win = json.loads((out/'table1'/'c_lstm'/'seed0'/'choice.json').read_text())['chosen']   # one method trained longer, validation only
    p = subprocess.run([sys.executable, str(ROOT/'bench'/'table1_longer_schedule.py'), str(out), 'c_lstm', '--setting', win,
                        '--epochs', '2', '--out', str(tmp_path/'longer'), '--json', str(tmp_path/'l.json')], capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    lr = json.loads((tmp_path/'l.json').read_text())
    assert len(lr['val_CIDEr-D_by_epoch']) == 2 and set(lr['val_nll']) == {'own', 'other_regions'}
    assert json.loads((tmp_path/'longer'/'metrics.json').read_text())['n_test'] == 0   # no test split decoded
    p = subprocess.run([sys.executable, str(ROOT/'bench'/'table1_has_verb_val.py'), str(out), '--n', '24', '--beam', '2',
                        '--out', str(tmp_path/'h.json')], capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    h = json.loads((tmp_path/'h.json').read_text())
    assert h['split'] == 'val' and set(h['rows']) == {'c_lstm/seed0', 'c_updn/seed0', 'sct/seed0', 'ours/seed0'}
    for k, r in h['rows'].items():                          # who says a verb, read on validation
        assert 0 < r['n'] <= 24 and 0 <= r['has_verb'] <= 1 and abs(r['verbless'] - r['n'] * (1 - r['has_verb'])) < 0.01, r
        if k.startswith(('c_lstm', 'c_updn')): assert r['ended_early'] is None    # no sub-roles to end in
        else: assert 0 <= r['ended_early'] <= r['verbless'], r
    p = subprocess.run([sys.executable, str(ROOT/'bench'/'real_language_oracle_check.py'), str(out)], capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    s = json.loads(p.stdout.splitlines()[0])
    assert s['n'] > 0 and s['oracle_loses_verb'] + s['oracle_gains_verb'] <= s['n']


def test_kept_sweep(nb_run, tmp_path):
    "A run keeps its sweep choices (keep_sweep); a later run takes them (sweep_from) and sweeps nothing, and refuses a sweep made on other captions"
    import papermill as pm
    out, m, tmp = nb_run
    kept = tmp/'kept_sweep'
    trained = {k.split('/')[0] for k in m['table1_settings']['protocol']['choices']}
    assert {p.parent.name for p in kept.glob('*/choice.json')} == trained
    for meth in trained:   # each kept file is the run's own choice, its curves with it
        assert (kept/meth/'choice.json').read_text() == (out/'table1'/meth/'seed0'/'choice.json').read_text()
    about = json.loads((kept/'run.json').read_text())
    assert about['seed'] == m['settings']['seed'] and about['corpora'] == m['settings']['corpora']
    later = tmp_path/'later'
    from conftest import ROOT
    params = dict(quick=True, test_captions_json=m['test']['captions_json'], test_instances_json=m['test']['instances_json'],
                  test_image_dir=m['test']['image_dir'], visual_small_dir=str(tmp_path/'none'), device='cpu',
                  results_md=str(tmp_path/'r.md'), figure_path=str(later/'f.png'), table1_methods=['c_lstm', 'ours'],
                  seeds=[1], sweep_from=str(kept))
    run_notebook('experiments/real_captions.ipynb', tmp_path, out_dir=str(later), **params)
    ch = json.loads((later/'table1'/'c_lstm'/'seed1'/'choice.json').read_text())
    want = json.loads((kept/'c_lstm'/'choice.json').read_text())
    assert (ch['chosen'], ch['val_CIDEr-D'], ch['chosen_on']) == (want['chosen'], want['val_CIDEr-D'], str(kept/'c_lstm'))
    assert [p.name for p in (later/'table1'/'c_lstm'/'seed1'/'sweep').iterdir()] == [want['chosen']]   # no other setting trained
    lm = json.loads((later/'metrics.json').read_text())
    assert lm['table1_settings']['protocol']['sweep_from'] == str(kept)
    from vsr_cic.tables import merge_runs, write_merged, read_predictions
    with pytest.raises(ValueError, match='table1_settings differ in methods'):   # the seed-0 run decoded every method, this one two
        merge_runs([out, later])
    lm['table1_settings']['methods'] = m['table1_settings']['methods']          # the same methods: pooled as one run of seeds 0 and 1
    keep = {('c_lstm', 0), ('ours', 0), ('retrieval_blind', None), ('c_lstm', 1), ('ours', 1)}
    (tmp_path/'r0').mkdir()
    for src, dst, mm in ((out, tmp_path/'r0', m), (later, later, lm)):          # both runs cut to the rows the later one has
        mm = {**mm, 'table1_per_seed': [r for r in mm['table1_per_seed'] if (r['method'], r['seed']) in keep]}
        (dst/'metrics.json').write_text(json.dumps(mm))
        if src != dst: (dst/'table1_predictions.json').write_text(json.dumps(read_predictions(src)))
    merged = json.loads(write_merged([tmp_path/'r0', later], tmp_path/'merged').read_text())
    assert merged['table1_settings']['seeds'] == [0, 1] and [x['seeds'] for x in merged['merged_from']] == [[0], [1]]
    pooled = {(r['test_set'], r['method'], r['grounding'], r['preset']): r for r in merged['table1'] if r['verbs'] == 'all'}
    for key in (('photos', 'c_lstm', 'gsrl', 'paper'), ('corpus', 'ours', 'gt', 'paper')):
        per = {r['seed']: r['CIDEr-D'] for src in (m, lm) for r in src['table1_per_seed']
               if (r['test_set'], r['method'], r['grounding'], r['preset'], r['verbs']) == (*key, 'all') and (r['method'], r['seed']) in keep}
        assert pooled[key]['seeds'] == [0, 1] and abs(pooled[key]['CIDEr-D'] - np.mean([per[0], per[1]])) < 1e-12, (key, per)
    iv = next(e for e in merged['table1_intervals'] if (e['baseline'], e['test_set'], e['grounding']) == ('c_lstm', 'photos', 'gsrl'))
    assert iv['seeds'] == [0, 1] and [p['seed'] for p in iv['per_seed']] == [0, 1]   # Ours minus C-LSTM over both runs' captions
    assert pooled[('photos', 'c_lstm', 'gsrl', 'paper')]['vs_ours'] == iv['metrics']
    assert (tmp_path/'merged'/'table1_predictions.json.gz').exists() and len(read_predictions(tmp_path/'merged')) == \
        len({(r['method'], r['seed'], r['preset'], r['test_set'], r['grounding']) for r in read_predictions(tmp_path/'r0') + read_predictions(later)})
    about['seed'] = 7; (kept/'run.json').write_text(json.dumps(about))   # the kept sweep now claims other training captions
    with pytest.raises(pm.PapermillExecutionError, match='seed 7 there, 0 here'):
        run_notebook('experiments/real_captions.ipynb', tmp_path/'bad', out_dir=str(tmp_path/'bad_run'), **params)


def test_notebook(nb_run):
    "metrics.json holds every method and metric"
    out, m, _ = nb_run
    assert 'skipped' not in m, m.get('skipped')
    have = set(m['photos'])                                            # visual_small is left out when its run is missing
    assert have == set(METHODS) | {f'{x}_no_rule' for x in ('ours', 'ours_gt')}, have   # no_repeat (default): each also without the rule
    assert 'not run' in m['visual_small']
    for meth in METHODS:
        s = m['photos'][meth]
        for k in METRICS:
            assert k in s and (s[k] is None or math.isfinite(s[k])), (meth, k, s.get(k))
        assert 0 < s['n_images'] <= 2 and s['n_captions'] >= s['n_images']
        assert 0 <= s['repeat_rate'] <= 1 and 0 <= s['unseen_bigram_rate'] <= 1
    for meth in ('retrieval', 'retrieval_gt'):                       # retrieved captions are training captions
        assert m['photos'][meth]['unseen_bigram_rate'] == 0
    assert m['grounding']['retrieval'] == m['grounding']['ours'] == 'gsrl'          # the paper's protocol: same source
    assert m['grounding']['retrieval_gt'] == m['grounding']['ours_gt'] == 'annotated'
    assert sum(m['training_captions']['sampled'].values()) >= 400 and m['wall_s'] > 0 and m['cpu_s'] > 0
    ts = m['table1_settings']   # the schedule named, and the quick smoke's epochs recorded as overrides of it
    assert ts['schedule'] == 'quick' and ts['protocol']['schedule']['name'] == 'quick'
    assert ts['protocol']['overrides'].get('epochs_xe') == 1 and ts['protocol']['epochs_xe'] == 1
    assert m['settings']['no_repeat'] and len(m['load_average']) == 3
    assert m['settings']['region_words'] and m['settings']['precompute']
    assert m['settings']['gsrl_loss'] == 'listwise'                    # the default GSRL loss, recorded and used
    assert json.loads((out/'gsrl'/'gsrl'/'history.json').read_text()) and m['components']['gsrl']['loss'] == 'listwise'
    assert m['components']['gsrl']['corpora'] == m['settings']['gsrl_corpora'] == ['coco']   # GSRL learns from COCO's captions only
    sub = [json.loads(l)['image_id'] for l in (out/'data'/'gsrl_train'/'images.jsonl').read_text().splitlines()]
    assert sub and all(i.startswith('coco:') for i in sub) and m['training_captions']['sampled']['flickr30k'] > 0
    assert m['settings']['max_slot_words'] == 'auto' and m['settings']['slot_word_limits']['ours'] >= 1   # every decoding method
    assert m['photos']['ours']['repeat_rate'] <= m['photos']['ours_no_rule']['repeat_rate']
    assert (out/'real_captions.png').read_bytes()[:4] == b'\x89PNG'


def _explore(tmp, photo_runs):
    "nbs/explore_vsr.ipynb on a tiny world (no world checkpoints: its fallback) with the real-photo section pointed at `photo_runs`"
    from vsr_cic.world import ensure_world
    world = ensure_world(tmp/'world', n_images=12, render=False, n_workers=1)
    none = tmp/'no_ckpt'
    nb = run_notebook('explore_vsr.ipynb', tmp/'nb', data_dir=str(world), gsrl_dir=str(none), planner_dir=str(none), captioner_dir=str(none),
                      out_dir=str(tmp/'explore'), device='cpu', world_images=1, photo='coffee', photo_runs=str(photo_runs),
                      background=False)                                       # papermill ends with its last cell: no threads
    texts = [str(o.get('data', {}).get('text/plain', '')) + str(o.get('data', {}).get('text/html', '')) + str(o.get('text', ''))
             for c in json.loads(nb.read_text())['cells'] for o in c.get('outputs', [])]
    return json.loads((tmp/'explore'/'run_config.json').read_text())['photo'], '\n'.join(texts)


def test_photo_pipeline_decodes_as_the_run(nb_run):
    "coco_photo_pipeline (the explorer's models) decodes as the run did: its sub-role limit and open-phrase words"
    from vsr_cic.photos import coco_photo_pipeline
    from vsr_cic.decoding import SlotWordCap, slot_end_mask
    from vsr_cic.data import load_dataset
    out, m, _ = nb_run
    assert m['settings']['slot_end_rule'] is True
    pipe, why = coco_photo_pipeline(out)
    assert why == '' and isinstance(pipe.captioner, SlotWordCap), why
    assert pipe.captioner.max_words == m['settings']['slot_word_limits']['ours']
    want = slot_end_mask(load_dataset(out/'data'/'train'), pipe.vocabs['captioner'])
    assert want.any() and torch.equal(pipe.captioner.no_end, want)      # 'a', 'of', 'the' … leave a phrase open
    assert pipe.captioner.no_end[pipe.vocabs['captioner'].stoi['a']]


def test_explore_coco_photo(nb_run, tmp_path):
    "explore_vsr.ipynb's real-photo section: a held-out COCO photo and the coffee photo (as a user's JSON) with the run's models"
    pytest.importorskip('skimage', reason="scikit-image is not installed")
    out, *_ = nb_run
    photo, text = _explore(tmp_path, out)
    assert photo['models'] and photo['why'] == '', photo
    assert text.count('VSRExplorer') == 3, text[-2000:]                 # the world's, the COCO photo's and the coffee photo's
    assert 'held-out COCO photos; photo' in text
    assert 'coffee: 4 proposal sets (cup, spoon, dining table, scene), features (4, 82)' in text   # class features: 81 + scene


def test_explore_without_run(tmp_path):
    "Without a real_captions run (a fresh checkout) the section shows a note saying how to train the models"
    pytest.importorskip('skimage', reason="scikit-image is not installed")
    photo, text = _explore(tmp_path, tmp_path/'nowhere')
    assert not photo['models'] and 'no real_captions run' in photo['why']
    assert 'papermill nbs/experiments/real_captions.ipynb' in text and text.count('VSRExplorer') == 1


def test_split_run_decode_here_score_there(nb_run, tmp_path):
    "bench/gpu/gpu_real_language.py on a finished run: pack its shared parts, train and decode several seeds (a GPU box's half; here on the CPU), score and pool"
    import importlib.util
    out, _, _ = nb_run
    spec = importlib.util.spec_from_file_location('gpu_rl', Path(__file__).parents[1]/'bench'/'gpu'/'gpu_real_language.py')
    g = importlib.util.module_from_spec(spec); spec.loader.exec_module(g)
    g.pack(out, tmp_path/'rl.tar.xz')
    grid = {'a': {'lr_xe': 3e-3, 'dropout': 0.3}, 'b': {'lr_xe': 1e-3, 'dropout': 0.3}}   # the protocol's sweep, two settings
    g.decode(tmp_path/'rl.tar.xz', tmp_path/'box', seeds=[0, 1], hidden=16, epochs_xe=1, epochs_rl=1, grid=grid,
             methods=['sct', 'ours', 'ours_oracle_verb'], train_deadline=900, decode_deadline=900, corpus_limit=3,
             workers=2, work=tmp_path/'work')
    log = json.loads((tmp_path/'box'/'gpu_log.json').read_text())
    assert not log.get('decode_errors') and not log['decode_unfinished'], log
    assert set(log['train']) == {'sct/seed0', 'ours/seed0', 'sct/seed1', 'ours/seed1'}
    for t in log['train'].values():   # the sweep's winner went on: one XE epoch, then one self-critical epoch
        assert t['done'] and not t['cut_at_deadline'] and t['chosen'] in grid and t['settings'] == grid[t['chosen']], t
        assert [(e['stage'], e['epoch']) for e in t['val_by_epoch']] == [('xe', 1), ('rl', 1)], t
        assert set(t['sweep_val_CIDEr-D']) == set(grid), t
    m = g.score(out, tmp_path/'box'/'predictions.json.gz', tmp_path/'scored', publish_to=None)
    got = {(r['test_set'], r['method'], r['grounding'], r['verbs']) for r in m['table1']}
    for meth in ('sct', 'ours', 'ours_oracle_verb'):
        for ts in ('photos', 'corpus'):
            assert (ts, meth, 'gsrl', 'all') in got and (ts, meth, 'gt', 'all') in got
    for r in m['table1']:
        assert r['seeds'] == [0, 1] and 'CIDEr-D_sd' in r and math.isfinite(r['CIDEr-D'])   # two seeds pooled: mean ± sd
    assert len(m['table1_per_seed']) == 2 * len(m['table1'])
    assert m['settings']['hidden'] == 16 and m['table1_settings']['seeds'] == [0, 1] and m['settings']['epochs_rl'] == 1


def test_table1_decodes_alike_in_worker_processes(nb_run):
    "table1_predictions in two spawned worker processes (`RowPipes`, as the notebook decodes) gives the records it gives here, in order"
    out, m, _ = nb_run
    from vsr_cic.tables import table1_predictions, table1_runs, run_targets, RowPipes
    runs = table1_runs(out, ['sct', 'ours', 'ours_oracle_verb'], [0], 'paper')
    assert len(runs) == 3, runs
    targets = run_targets(out, 3)
    pipes = RowPipes(out, 'cpu', m['settings']['joint_grounding'], 'paper')
    here = table1_predictions(pipes, runs, targets, beam=2, progress=None)
    there = table1_predictions(pipes, runs, targets, beam=2, progress=None, workers=2)
    assert [(r['method'], r['test_set'], r['grounding']) for r in here] == [(r['method'], r['test_set'], r['grounding']) for r in there]
    assert all(r['predictions'] for r in here) and here == there
