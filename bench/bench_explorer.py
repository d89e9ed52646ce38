"""The explorer after the README's main job: time to the first picture, structure and caption, and the
"train missing parts" button (`vsr_cic.widgets.quick_train`) against its estimate.

On the default world (generated when missing), with the main job's run folder `runs/train_captioner` when it
exists (else no captioner: the views are timed without captions). The quick training writes into a scratch runs
root (not the repository's runs/), so the repository's lookup is untouched. Wall and CPU time of this process
(one torch thread; CPU time is close to the wall time of an idle machine).
Usage: python bench/bench_explorer.py [--runs-root ROOT] [--no-train]
"""
from __future__ import annotations
import argparse, json, shutil, sys, tempfile, time
from pathlib import Path
sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import ROOT, machine

def clock(): return time.perf_counter(), time.process_time()
def since(t): return round(time.perf_counter() - t[0], 1), round(time.process_time() - t[1], 1)

def run(runs_root=None, train:bool=True)->dict:
    import torch
    from vsr_cic.world import ensure_world
    from vsr_cic.data import load_dataset
    from vsr_cic.pipeline import pipeline_from_runs
    from vsr_cic.widgets import explore_vsr, quick_train, quick_estimate
    torch.set_num_threads(1)
    scratch = Path(tempfile.mkdtemp(prefix='bench_explorer_'))
    src = Path(runs_root) if runs_root else ROOT
    if (src/'runs'/'train_captioner'/'model.pt').exists():                    # the main job's folder only
        shutil.copytree(src/'runs'/'train_captioner', scratch/'runs'/'train_captioner', ignore=shutil.ignore_patterns('ckpt', 'world'))
    t = clock(); data = load_dataset(ensure_world()); r = {'load_world_s': since(t)}
    t = clock(); pipe, runs = pipeline_from_runs(data, scratch, 'cpu')
    ids = [i for i, rec in data.images.items() if rec['split'] == 'test']
    ex = explore_vsr(pipe, data, ids, runs=runs, root=scratch)
    r['first_view_s'] = since(t); r['missing'] = sorted(pipe.missing)
    r['first_view'] = {'vsr': str(ex.picker.vsr), 'picture_bytes': len(ex.grounding_img.value), 'status': ex.status.value,
                       'caption': ' '.join(ex.result.captions[0]['tokens']) if ex.result and ex.result.captions else None}
    if train:
        parts = [c for c in ('gsrl', 'planner') if c in pipe.missing]
        r['estimate_s'] = {c: round(quick_estimate(data, c), 1) for c in parts}
        t = clock(); r['quick_train_wall_s'] = quick_train(data, parts, scratch, 'cpu'); r['quick_train_total_s'] = since(t)
        r['quick_train_metrics'] = {c: json.loads((scratch/'runs'/'explore_vsr'/f'train_{c}'/'metrics.json').read_text()) for c in parts}
        t = clock(); ex.reload(); r['reload_s'] = since(t); r['missing_after'] = sorted(ex.pipeline.missing)
    shutil.rmtree(scratch, ignore_errors=True)
    return {'machine': machine(), **r}

if __name__ == '__main__':
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--runs-root', default=None, help='folder holding runs/train_captioner (default: the repository)')
    ap.add_argument('--no-train', action='store_true', help='time the first view only')
    a = ap.parse_args()
    print(json.dumps(run(a.runs_root, not a.no_train), indent=1, default=str))
