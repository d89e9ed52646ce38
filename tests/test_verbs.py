"Papermill smoke run of train_verbs.ipynb on a tiny private world (1 epoch), and suggest_vsrs on its output"
import json, time
import torch
from conftest import run_notebook

TINY = dict(world_images=40, epochs=1, batch_size=16, seed=0, device='cpu', hidden=16, n_examples=1)


def test_train_verbs_notebook(tmp_path):
    torch.set_num_threads(1)
    t0 = time.time()
    run_notebook('experiments/train_verbs.ipynb', tmp_path, out_dir=str(tmp_path/'run'), **TINY)
    run = tmp_path/'run'
    m = json.loads((run/'metrics.json').read_text())
    assert {'mAP', 'top1', 'top5', 'prior', 'test', 'suggestions', 'epochs'} <= set(m)
    for d in (m, m['prior']):
        assert 0 <= d['mAP'] <= 1 and 0 <= d['top1'] <= d['top5'] <= 1
    assert m['epochs'] == 1 and {'hit_verb', 'hit_roles', 'hit_exact', 'prec_roles'} <= set(m['suggestions']['model']['at1'])
    assert (run/'verbs'/'last.pt').exists() and (run/'curves.png').exists() and (run/'verb_stats.json').exists()
    print(f'train_verbs smoke run: {time.time() - t0:.1f} s')   # timing is reported, not asserted (benchmarks own speed)

    # the run's artefacts are enough to suggest VSRs for an image, outside the notebook
    from vsr_cic.data import load_dataset
    from vsr_cic.verbs import load_verb_predictor
    from vsr_cic.vsr_suggest import VerbStats, suggest_vsrs
    from vsr_cic.pipeline import image_proposals
    from vsr_cic.vsr import VSR
    ds = load_dataset(m['dataset'])
    sug = suggest_vsrs(image_proposals(ds, ds.image_ids('test')[0]), 3, load_verb_predictor(run), VerbStats.load(run/'verb_stats.json'))
    assert len(sug) == 3 and all(isinstance(v, VSR) and 0 <= s <= 1 for v, s in sug)
    assert [s for _, s in sug] == sorted((s for _, s in sug), reverse=True)
