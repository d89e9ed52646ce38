"""End-to-end wall time of the main job: `papermill nbs/train_captioner.ipynb` with its default parameters.

Runs the notebook once (output notebook and run folder under runs/bench_main_job) and records the wall time
in results/bench/YYYY-MM-DD-main_job.json (the day it ran), the latest of which `run_all.py` reports (it does not re-run the job: about 8 minutes on the
development machine, more than its budget allows). The built-in world must exist or is generated first
(counted in the time, as in the notebook).
Usage: python bench/bench_main_job.py
"""
from __future__ import annotations
import json, os, shutil, subprocess, sys, time
from pathlib import Path
sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import ROOT, dated, dump, machine

def run()->dict:
    out = ROOT/'runs'/'bench_main_job'
    if out.exists(): shutil.rmtree(out)                  # a fresh run: no resume from an earlier one
    out.mkdir(parents=True)
    m0 = machine(); t0 = time.perf_counter()
    p = subprocess.run([sys.executable, '-m', 'papermill', str(ROOT/'nbs'/'train_captioner.ipynb'), str(out/'train_captioner.ipynb'),
                        '-p', 'out_dir', str(out/'run')], capture_output=True, text=True, cwd=ROOT)
    dt = time.perf_counter() - t0
    if p.returncode: return {'main_job_seconds': None, 'main_job_reason': f'papermill failed: {p.stderr[-500:]}'}
    met = json.loads((out/'run'/'metrics.json').read_text())
    rec = {'main_job_seconds': dt, 'main_job_total_seconds_in_metrics': met.get('total_seconds'), 'main_job_train_seconds': met.get('train_seconds'),
           'main_job_test_cider': met.get('test', {}).get('CIDEr-D'), 'machine_at_start': m0, 'machine_at_end': machine()}
    dump(rec, dated('main_job.json'))
    return rec

if __name__ == '__main__':
    print(json.dumps(run(), indent=1))
