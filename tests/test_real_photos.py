"""Papermill smoke run of nbs/real_photos.ipynb on the real coco_mini images (tiny settings): every component trains,
the full pipeline captions every held-out test image, and metrics.json / the figure are written.
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
    run_notebook('real_photos.ipynb', tmp, out_dir=str(out), **TINY)
    return out, json.loads((out/'metrics.json').read_text())


def test_metrics(run):
    out, m = run
    assert 'skipped' not in m, m.get('skipped')
    assert m['images']['train'] > m['images']['test'] > 0 and m['captions']['test'] > 0
    assert [r['proposals'] for r in m['rows']] == ['GSRL', 'GT', 'GT']
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
    assert (out/'results.md').read_text().startswith('| method | proposals |')


def _explore(tmp, photo_runs):
    "nbs/explore_vsr.ipynb on a tiny world (no world checkpoints: its fallback) with the real-photo section pointed at `photo_runs`"
    from vsr_cic.world import ensure_world
    world = ensure_world(tmp/'world', n_images=12, render=False, n_workers=1)
    none = tmp/'no_ckpt'
    nb = run_notebook('explore_vsr.ipynb', tmp/'nb', data_dir=str(world), gsrl_dir=str(none), planner_dir=str(none), captioner_dir=str(none),
                      out_dir=str(tmp/'explore'), device='cpu', world_images=1, photo='coffee', photo_runs=str(photo_runs))
    texts = [str(o.get('data', {}).get('text/plain', '')) + str(o.get('data', {}).get('text/html', '')) + str(o.get('text', ''))
             for c in json.loads(nb.read_text())['cells'] for o in c.get('outputs', [])]
    return json.loads((tmp/'explore'/'run_config.json').read_text())['photo'], '\n'.join(texts)


def test_explore_real_photo(run, tmp_path):
    "explore_vsr.ipynb's real-photo section: the coffee photo with the models this run trained, in the explorer"
    out, _ = run
    photo, text = _explore(tmp_path, out)
    assert photo['models'] and photo['why'] == '', photo
    assert text.count('VSRExplorer') == 2, text[-2000:]                 # the world's explorer and the photo's
    assert 'coffee: 4 proposal sets, features (4, 1280)' in text       # cup, spoon, dining table, scene


def test_explore_real_photo_without_models(tmp_path):
    "Without a real_photos run (a fresh checkout) the section shows the photo and a note saying how to train the models"
    pytest.importorskip('skimage', reason="scikit-image is not installed")
    photo, text = _explore(tmp_path, tmp_path/'nowhere')
    assert not photo['models'] and 'no models trained on real photos' in photo['why']
    assert 'papermill nbs/real_photos.ipynb' in text and text.count('VSRExplorer') == 1
