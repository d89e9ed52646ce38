"""Papermill smoke run of nbs/experiments/real_photos.ipynb on the real coco_mini images (tiny settings): every component trains,
the full pipeline captions every held-out test image, and metrics.json / the figure are written.
(explore_vsr.ipynb's real-photo section now uses real_captions.ipynb's models: tests/test_real_captions.py tests it.)
Uses data/coco_mini_vsr (built from ../shared/data/coco_mini by the notebook when missing, about a minute)."""
import json, math
from pathlib import Path
import pytest
from conftest import run_notebook

TINY = dict(epochs_gsrl=2, epochs_planner=1, epochs_r=1, epochs_xe=4, epochs_rl=1, epochs_verbs=2, batch_size=32,
            hidden=32, beam=2, n_figure=2, device='cpu')
ACCURACY = ('BLEU-4', 'ROUGE-L', 'CIDEr-D')
CONTROL = ('R_V', 'R_SR1', 'R_SR2')
MAX_FIGURE_BYTES = 300_000


@pytest.fixture(scope='module')
def run(shared_data, tmp_path_factory):
    pytest.importorskip('efficientnet_lite_pytorch', reason="region features need the `cnn` extra (efficientnet-lite-pytorch)")
    pytest.importorskip('skimage', reason="scikit-image is not installed")
    tmp = tmp_path_factory.mktemp('real_photos')
    out = tmp/'run'
    run_notebook('experiments/real_photos.ipynb', tmp, out_dir=str(out), **TINY)
    return out, json.loads((out/'metrics.json').read_text())


def test_metrics(run):
    out, m = run
    assert 'skipped' not in m, m.get('skipped')
    assert m['images']['train'] > m['images']['test'] > 0 and m['captions']['test'] > 0
    assert [r['grounding'] for r in m['rows']] == ['gsrl', 'gt', 'gt']
    for r in m['rows']:
        assert r['n'] == m['captions']['test'], r
        for k in ACCURACY + CONTROL:
            assert isinstance(r[k], float) and math.isfinite(r[k]) and 0 <= r[k] <= (10 if k == 'CIDEr-D' else 1), (k, r)
        assert r['METEOR'] is None or math.isfinite(r['METEOR'])      # None only without Java
    assert m['rows'][0]['failed'] == 0                                # the full pipeline never fails on a test caption
    c = m['components']
    assert 0 <= c['gsrl']['test']['grounding_acc'] <= 1 and c['planner']['s_level']['valid'] == 1.0
    assert 0 <= c['verbs']['model']['mAP'] <= 1
    assert set(m['timings']) >= {'gsrl_s', 'planner_s', 'captioner_s', 'verbs_s', 'evaluate_s'}


def test_every_heldout_image_captioned(run):
    "The full pipeline gave a grounded, planned caption record for every test caption, hence every held-out image"
    out, m = run
    from vsr_cic.data import load_dataset
    from vsr_cic.vsr import VSR
    data = load_dataset(m['dataset'])
    preds = json.loads((out/'predictions.json').read_text())['gsrl/ssp']
    test_ids = set(data.image_ids('test'))
    assert {p['image_id'] for p in preds} == test_ids and len(test_ids) == m['test_images']
    for p in preds:
        assert p['structure'] is not None and isinstance(p['tokens'], list)
        for v, st in zip(p['vsrs'], p['structure']): assert VSR.parse(v).is_structure(st), (v, st)
        sets = data.images[p['image_id']]['sets']
        assert all(j is None or 0 <= j < len(sets) for g in p['grounding'] for _, j in g)
    assert m['test_images_captioned'] <= m['test_images']


def test_figure(run):
    out, m = run
    f = out/'real_photos.png'
    assert f.exists() and f.read_bytes()[:8] == b'\x89PNG\r\n\x1a\n' and 0 < f.stat().st_size <= MAX_FIGURE_BYTES
    assert (out/'results.md').read_text().startswith('| method | grounding |')
