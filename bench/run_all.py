"""Run every benchmark, print one table per benchmark plus a summary, write results/bench/YYYY-MM-DD-results.json
(the day of the run, UTC) and the generated table of bench/README.md.

    python bench/run_all.py            # full suite (under 15 minutes on a 2-core CPU once the scale worlds exist)
    python bench/run_all.py --quick    # smoke run (< 60 s): tiny sizes, same code paths, same keys; writes no README table
    python bench/run_all.py --only cider,sinkhorn --out /tmp/results.json
    python bench/run_all.py --paper-scale   # only the paper-scale benchmarks (peer_shape and paperscale, run side by
                                            # side, one thread each; ~40 min on a loaded 2-core CPU, ~6 GB of temporary
                                            # disk); their keys are merged into the latest results (others kept)
    python bench/run_all.py --readme   # only regenerate bench/README.md's table from the latest results file

In full mode each benchmark runs in its own subprocess (its own peak memory, no state shared between them);
--quick runs them in this interpreter. The main job's end-to-end time is read from the latest
results/bench/YYYY-MM-DD-main_job.json (written by bench/bench_main_job.py, ~8 minutes); `--main-job` re-measures it first.
"""
from __future__ import annotations
import argparse, json, os, subprocess, sys, time
from pathlib import Path
HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from common import CACHE, ROOT, dated, dump, latest, machine, table

BENCHES = ('cider', 'decoding', 'sinkhorn', 'loader', 'train', 'scale', 'parse')
PAPER_BENCHES = ('peer_shape', 'paperscale')
PAPER_REQUIRED = ('paper_scale_loader_samples_per_s', 'paper_scale_peak_rss_mb', 'paper_scale_cache_budget_mb',
                  'w512_xe_captions_per_s', 'w512_scst_captions_per_s', 'coco_entities_epoch_projection_s', 'w512_b50_xe_s_per_step')
QUICK_WORLD_IMAGES = 150
REQUIRED = {'cider_speedup': float, 'cider_max_abs_diff': float, 'beam_speedup': float, 'beam_identical': bool,
            'sinkhorn_speedup': float, 'loader_speedup': float, 'xe_captions_per_s': float, 'scst_captions_per_s': float,
            'main_job_seconds': (float, type(None))}
TARGETS = {'cider_speedup': 20, 'beam_speedup': 10}

def _inproc(name:str, kwargs:dict)->dict:
    "Run bench_<name>.run(**kwargs) in this interpreter (quick mode: no interpreter start-ups; memory figures are shared)"
    import importlib, traceback
    t0 = time.perf_counter()
    try: r = importlib.import_module(f'bench_{name}').run(**kwargs)
    except Exception: return {'error': f'bench_{name} failed: {traceback.format_exc()[-1500:]}', 'wall_s': time.perf_counter() - t0}
    return {**json.loads(json.dumps(r, default=str)), 'wall_s': time.perf_counter() - t0}

def _sub(name:str, kwargs:dict)->dict:
    "Run bench_<name>.run(**kwargs) in a fresh interpreter; its JSON result"
    code = (f"import sys, json; sys.path.insert(0, {str(HERE)!r}); import bench_{name} as b; "
            f"print('RESULT', json.dumps(b.run(**{kwargs!r}), default=str))")
    t0 = time.perf_counter()
    p = subprocess.run([sys.executable, '-c', code], capture_output=True, text=True, env={**os.environ, 'PYTHONWARNINGS': 'ignore'})
    line = [l for l in p.stdout.splitlines() if l.startswith('RESULT ')]
    if p.returncode or not line: return {'error': f'bench_{name} failed (exit {p.returncode}): {p.stderr[-1500:]}', 'wall_s': time.perf_counter() - t0}
    return {**json.loads(line[-1][7:]), 'wall_s': time.perf_counter() - t0}

def main_job(quick:bool, rerun:bool)->dict:
    if quick: return {'main_job_seconds': None, 'main_job_reason': 'quick mode: the main job is not run or reported'}
    if rerun:
        import bench_main_job; return bench_main_job.run()
    f = latest('main_job.json')
    if f is None: return {'main_job_seconds': None, 'main_job_reason': 'not measured: run python bench/bench_main_job.py (about 8 minutes)'}
    r = json.loads(f.read_text())
    return {'main_job_seconds': r.get('main_job_seconds'), 'main_job_reason': None,
            'main_job_source': f"{f.relative_to(ROOT)}, measured {r.get('machine_at_start', {}).get('time_utc')} (not re-run by run_all: use --main-job)",
            'main_job_test_cider': r.get('main_job_test_cider')}

def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument('--quick', action='store_true', help='smoke run with tiny sizes (< 60 s)')
    ap.add_argument('--out', default=None, help='where to write the results (default results/bench/YYYY-MM-DD-results.json, today UTC)')
    ap.add_argument('--only', default=','.join(BENCHES), help=f'comma-separated subset of {",".join(BENCHES)}')
    ap.add_argument('--main-job', action='store_true', help='re-measure the main job first (~8 minutes)')
    ap.add_argument('--paper-scale', action='store_true', help='run only the paper-scale benchmarks and merge their keys into --out')
    ap.add_argument('--readme', action='store_true', help="only regenerate bench/README.md's table from the latest results file")
    a = ap.parse_args(argv)
    if a.readme: return write_readme()
    if a.paper_scale: return paper_scale(a)
    t0 = time.perf_counter(); q = a.quick
    world = None
    if q:
        from bench_scale import world as make_world
        world = str(make_world(QUICK_WORLD_IMAGES)[0])
    kw = {'cider': dict(quick=q), 'decoding': dict(quick=q, world=world), 'sinkhorn': dict(quick=q),
          'loader': dict(quick=q, world=world), 'train': dict(quick=q, world=world), 'scale': dict(quick=q, scales=(1, 4) if q else (1, 4, 16)), 'parse': dict(quick=q)}
    res = {'mode': 'quick' if q else 'full', 'machine_start': machine(), 'benches': {}}
    for name in a.only.split(','):
        r = (_inproc if q else _sub)(name, kw[name]); res['benches'][name] = r
        title = f"{name} ({r['wall_s']:.0f} s)"
        print(table(title, r['rows']) if 'rows' in r else f"## {title}\n{r.get('error') or r.get('skipped')}", flush=True); print()
    flat = {k: v for r in res['benches'].values() for k, v in r.items() if k not in ('rows', 'wall_s', 'error')}
    for k in REQUIRED:
        if k != 'main_job_seconds': flat.setdefault(k, None)
    for name, r in res['benches'].items():
        if 'error' in r: flat[f'{name}_error'] = r['error']
    flat.update(main_job(q, a.main_job))
    res.update(flat); res['machine_end'] = machine(); res['total_wall_s'] = time.perf_counter() - t0
    summary = [dict(metric=k, value=res.get(k), target=(f'>= {TARGETS[k]}x' if k in TARGETS else '-'),
                    met=(None if res.get(k) is None else res[k] >= TARGETS[k]) if k in TARGETS else '-') for k in REQUIRED]
    print(table('Summary', summary))
    print(f"\nmachine: {res['machine_end']['cpu_count']} CPUs, load {res['machine_start']['load_avg_1_5_15']} -> {res['machine_end']['load_avg_1_5_15']}, "
          f"CUDA {res['machine_end']['cuda']}; total {res['total_wall_s']:.0f} s")
    out = dump(res, a.out or dated('results.json')); print('wrote', out)
    if not q and a.out is None: write_readme(out)
    return res

def paper_scale(a)->dict:
    "The paper-scale benchmarks (bench_peer_shape, bench_paperscale): print their tables, merge their keys into a.out"
    import bench_paperscale
    t0, q = time.perf_counter(), a.quick
    kw = {'peer_shape': dict(quick=q), 'paperscale': dict(quick=q, progress=False)}
    res = {'machine_start': machine(), 'benches': {}}
    if q: done = {name: _inproc(name, kw[name]) for name in PAPER_BENCHES}
    else:                   # both at once: each uses one torch thread, and a 2-core machine has two
        from concurrent.futures import ThreadPoolExecutor
        with ThreadPoolExecutor(len(PAPER_BENCHES)) as ex: done = dict(zip(PAPER_BENCHES, ex.map(lambda n: _sub(n, kw[n]), PAPER_BENCHES)))
    for name in PAPER_BENCHES:
        r = done[name]; res['benches'][name] = r
        if 'error' in r: print(f"## {name}\n{r['error']}", flush=True); continue
        print(table(f"{name} ({r['wall_s']:.0f} s)", r['rows']) if name == 'peer_shape' else bench_paperscale.report(r), flush=True); print()
    flat = {k: v for r in res['benches'].values() for k, v in r.items() if k not in ('rows', 'wall_s', 'error', 'peer_xe_all_s')}
    for k in PAPER_REQUIRED: flat.setdefault(k, None)
    if flat.get('w512_b50_xe_s_per_step'):   # the epoch from the peer shape's CPU-s per step (batch 50), robust under load
        from bench_paperscale import COCO_ENTITIES_TRAIN_CAPTIONS
        flat['coco_entities_epoch_projection_cpu_s'] = COCO_ENTITIES_TRAIN_CAPTIONS / flat.get('peer_batch', 50) * flat['w512_b50_xe_s_per_step']
    res.update(flat); res['machine_end'] = machine(); res['total_wall_s'] = time.perf_counter() - t0
    print(table('Paper-scale summary', [dict(metric=k, value=res.get(k)) for k in PAPER_REQUIRED]))
    out = Path(a.out) if a.out else CACHE/'paper_scale_quick.json' if q else dated('results.json')   # a smoke run never writes results/
    prev = out if out.exists() else latest('results.json') if a.out is None else None                 # keep the other benchmarks' keys
    old = json.loads(prev.read_text()) if prev and not q else {}
    merged = {**old, **flat, 'paper_scale': {'mode': 'quick' if q else 'full', 'machine_start': res['machine_start'],
              'machine_end': res['machine_end'], 'total_wall_s': res['total_wall_s'], 'benches': res['benches']}}
    print('wrote', dump(merged, out))
    if not q and a.out is None: write_readme(out)
    return res

README = HERE/'README.md'
BLOCK = ('<!-- bench:latest -->', '<!-- /bench:latest -->')
EXTRA = ('cider_cpu_speedup', 'cider_rl_speedup', 'loader_samples_per_s', 'train_peak_rss_mb', 'parse_all_under_target',
         'peer_xe_vs_ref', 'peer_greedy_vs_ref', 'gpu_xe_capture_speedup', 'gpu_scst_capture_speedup')

def _fmt(v)->str:
    if v is None: return '—'
    if isinstance(v, float): return f"{v:,.0f}" if abs(v) >= 100 else f"{v:.4g}" if abs(v) >= 1e-3 or v == 0 else f"{v:.2g}"
    return str(v)

def readme_table(res:dict, source:str)->str:
    "The markdown of bench/README.md's generated block: where the numbers came from and one row per headline key"
    m0, m1 = res.get('machine_start', {}), res.get('machine_end', {})
    load = lambda m: (m.get('load_avg_1_5_15') or ['?'])[0]
    head = (f"Generated by `python bench/run_all.py` from `{source}`: {res.get('mode', '?')} run started {m0.get('time_utc', '?')} UTC, "
            f"{_fmt(res.get('total_wall_s'))} s; {m0.get('cpu_count', '?')} CPUs, Python {m0.get('python', '?')}, torch {m0.get('torch', '?')}, "
            f"CUDA {m0.get('cuda', '?')}; load average {load(m0)} → {load(m1)}.")
    ps = res.get('paper_scale')
    if ps: head += (f" Paper-scale keys: `--paper-scale` {ps.get('mode', '?')} run started "
                    f"{ps.get('machine_start', {}).get('time_utc', '?')} UTC, {_fmt(ps.get('total_wall_s'))} s.")
    rows = ['| key | value | target | met |', '|---|---|---|---|']
    for k in (*REQUIRED, *[k for k in EXTRA if k in res], *[k for k in PAPER_REQUIRED if k in res]):
        v, t = res.get(k), TARGETS.get(k)
        met = '—' if t is None or v is None else 'yes' if v >= t else '**no**'
        rows.append(f"| `{k}` | {_fmt(v)} | {f'≥ {t}' if t else '—'} | {met} |")
    walls = ', '.join(f"{n} {_fmt(r.get('wall_s'))} s" for n, r in res.get('benches', {}).items())
    return '\n'.join([head, '', *rows, '', f"Wall time per benchmark: {walls}."])

def write_readme(path:Path|None=None, readme:Path=README)->str:
    "Replace bench/README.md's generated block with the table of `path` (default: the latest results file)"
    path = Path(path or latest('results.json'))
    body = readme_table(json.loads(path.read_text()), str(path.resolve().relative_to(ROOT)))
    text = readme.read_text(); a, b = BLOCK
    if a not in text or b not in text: raise ValueError(f"{readme} has no {a} … {b} block")
    readme.write_text(text.split(a)[0] + f"{a}\n{body}\n{b}" + text.split(b, 1)[1])
    print('wrote the table of', readme); return body

if __name__ == '__main__':
    main()
