"Smoke test of the benchmark suite: `bench/run_all.py --quick` runs and writes results.json with every key (no timing assertions)"
import json, subprocess, sys
from conftest import ROOT

KEYS = {'cider_speedup': (float, type(None)), 'cider_max_abs_diff': (float, type(None)), 'beam_speedup': float, 'beam_identical': bool,
        'sinkhorn_speedup': float, 'loader_speedup': float, 'xe_captions_per_s': float, 'scst_captions_per_s': float,
        'main_job_seconds': (float, type(None))}

def test_run_all_quick(tmp_path):
    out = tmp_path/'results.json'
    p = subprocess.run([sys.executable, str(ROOT/'bench'/'run_all.py'), '--quick', '--out', str(out)], capture_output=True, text=True, cwd=ROOT)
    assert p.returncode == 0, p.stderr[-3000:]
    r = json.loads(out.read_text())
    assert r['mode'] == 'quick' and not [k for k in r if k.endswith('_error')], {k: v for k, v in r.items() if k.endswith('_error')}
    for k, t in KEYS.items():
        assert k in r, f"results.json lacks {k!r}"
        assert isinstance(r[k], t) and not (isinstance(r[k], bool) and t is float), f"{k}: {r[k]!r} is not {t}"
    # CIDEr-D is None only without the real captions or Java, and then says why; the main job is never run in quick mode
    assert (r['cider_speedup'] is None) == ('skipped' in r['benches']['cider'])
    assert r['main_job_seconds'] is None and r['main_job_reason']
    if r['cider_max_abs_diff'] is not None: assert r['cider_max_abs_diff'] < 1e-6
    assert 'Summary' in p.stdout
