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


# The bench wing's layout (issue 42): every path `bench/...` the project names exists, every script is named in
# bench/README.md, and the README's table is what run_all.py makes of the latest results file.
import re
from pathlib import Path

BENCH_PATH = re.compile(r'\bbench/[\w./*-]*[\w*]')
NAMING = ['README.md', 'nbs/**/*.ipynb', 'docs/**/*.md', 'tests/*.py', 'bench/**/*.py', 'bench/**/*.sh', 'bench/README.md', '.ci/run',
          'results/*.md']

def stale_bench_paths(root:Path)->list[str]:
    "`bench/...` paths named in the project's prose, code and tests that do not exist (results/bench/ logs are history, not read)"
    bad = set()
    for pat in NAMING:
        for f in root.glob(pat):
            for m in BENCH_PATH.finditer(f.read_text(errors='replace')):
                p = m.group(0).rstrip('.')
                if 'YYYY' in p or p.startswith('bench/README'): continue
                if not any(list(r.glob(p)) if '*' in p else (r/p).exists() for r in (root, root/'results')): bad.add(f"{f.relative_to(root)}: {p}")
    return sorted(bad)

def test_bench_paths_exist():
    assert not stale_bench_paths(ROOT), "paths under bench/ that do not exist (moved? see bench/README.md, Layout)"

def test_every_bench_script_is_in_the_readme():
    readme = (ROOT/'bench'/'README.md').read_text()
    scripts = [p for p in (*(ROOT/'bench').glob('*.py'), *(ROOT/'bench'/'gpu').glob('*')) if p.is_file()]
    assert len(scripts) > 20 and not [p.name for p in scripts if p.name not in readme]
    assert not list((ROOT/'bench').glob('*.json*')) + list((ROOT/'bench').glob('*.log')), "results go to results/bench/YYYY-MM-DD-*"

def test_readme_table_is_generated():
    sys.path.insert(0, str(ROOT/'bench'))
    try:
        import run_all
        from common import latest
        body = run_all.readme_table(json.loads(latest('results.json').read_text()), str(latest('results.json').relative_to(ROOT)))
    finally: sys.path.remove(str(ROOT/'bench'))
    a, b = run_all.BLOCK
    text = (ROOT/'bench'/'README.md').read_text()
    assert text.split(a + '\n')[1].split('\n' + b)[0] == body, "bench/README.md's table was edited by hand: python bench/run_all.py --readme"
    assert '`cider_speedup`' in body and 'results/bench/' in body

def test_checks_can_fail(tmp_path):
    "A stale path is found; a README without the block is refused; the oracle check wants a run folder"
    (tmp_path/'docs').mkdir(); stale = 'bench/' + 'gpu_check.sh'
    (tmp_path/'docs'/'x.md').write_text(f'see `{stale}` and bench/README.md')
    assert stale_bench_paths(tmp_path) == [f'docs/x.md: {stale}']
    sys.path.insert(0, str(ROOT/'bench'))
    try:
        import run_all, pytest
        (tmp_path/'R.md').write_text('# no block\n')
        with pytest.raises(ValueError, match='no <!-- bench:latest -->'): run_all.write_readme(readme=tmp_path/'R.md')
    finally: sys.path.remove(str(ROOT/'bench'))
    p = subprocess.run([sys.executable, str(ROOT/'bench'/'real_language_oracle_check.py'), str(tmp_path)], capture_output=True, text=True)
    assert p.returncode == 1 and 'not a finished real_captions run' in p.stderr
    p = subprocess.run([sys.executable, str(ROOT/'bench'/'table1_attention_check.py'), str(tmp_path)], capture_output=True, text=True)
    assert p.returncode == 1 and 'not a finished real_captions run' in p.stderr
    p = subprocess.run([sys.executable, str(ROOT/'bench'/'table1_has_verb_val.py'), str(tmp_path)], capture_output=True, text=True)
    assert p.returncode == 1 and 'not a finished real_captions run' in p.stderr

def test_bench_bucket_quick(tmp_path):
    "bench_bucket.py runs on the built-in world, and bucketed batches carry much less padding than a plain shuffle"
    out = tmp_path/'b.json'
    p = subprocess.run([sys.executable, str(ROOT/'bench'/'bench_bucket.py'), '--quick', '--json', str(out)], capture_output=True, text=True, cwd=ROOT)
    assert p.returncode == 0, p.stderr[-3000:]
    r = json.loads(out.read_text())
    assert r['padded_len']['bucket'] < 0.8 * r['padded_len']['plain'], r['padded_len']
    assert {(x['model'], x['stage']) for x in r['rows']} == {('ours', 'XE')}   # (SCST: bench_vs_peer.py, trained models)
    assert all(x['s_per_step_plain'] > 0 and x['s_per_step_bucket'] > 0 for x in r['rows'])
    assert 'Seconds per step' in p.stdout
