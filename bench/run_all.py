"""Run every benchmark, print one table per benchmark plus a summary, and write results.json.

    python bench/run_all.py            # full suite (under 15 minutes on a 2-core CPU once the scale worlds exist)
    python bench/run_all.py --quick    # smoke run (< 60 s): tiny sizes, same code paths, same keys
    python bench/run_all.py --only cider,sinkhorn --out /tmp/results.json
    python bench/run_all.py --paper-scale   # only the paper-scale benchmarks (peer_shape and paperscale, run side by
                                            # side, one thread each; ~40 min on a loaded 2-core CPU, ~6 GB of temporary
                                            # disk); their keys are merged into the existing results.json (others kept)

In full mode each benchmark runs in its own subprocess (its own peak memory, no state shared between them);
--quick runs them in this interpreter. The main
job's end-to-end time is read from bench/main_job.json (written by bench/bench_main_job.py, ~8 minutes);
`--main-job` re-measures it first.
"""
from __future__ import annotations
import argparse, json, os, subprocess, sys, time
from pathlib import Path
HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from common import CACHE, dump, machine, table

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
    f = HERE/'main_job.json'
    if not f.exists(): return {'main_job_seconds': None, 'main_job_reason': 'not measured: run python bench/bench_main_job.py (about 8 minutes)'}
    r = json.loads(f.read_text())
    return {'main_job_seconds': r.get('main_job_seconds'), 'main_job_reason': None,
            'main_job_source': f"bench/main_job.json, measured {r.get('machine_at_start', {}).get('time_utc')} (not re-run by run_all: use --main-job)",
            'main_job_test_cider': r.get('main_job_test_cider')}

def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument('--quick', action='store_true', help='smoke run with tiny sizes (< 60 s)')
    ap.add_argument('--out', default=str(HERE/'results.json'), help='where to write results.json')
    ap.add_argument('--only', default=','.join(BENCHES), help=f'comma-separated subset of {",".join(BENCHES)}')
    ap.add_argument('--main-job', action='store_true', help='re-measure the main job first (~8 minutes)')
    ap.add_argument('--paper-scale', action='store_true', help='run only the paper-scale benchmarks and merge their keys into --out')
    a = ap.parse_args(argv)
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
    print('wrote', dump(res, a.out))
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
    out = Path(a.out)
    if q and out == HERE/'results.json': out = CACHE/'paper_scale_quick.json'   # a smoke run never overwrites the measured figures
    old = json.loads(out.read_text()) if out.exists() and not q else {}
    merged = {**old, **flat, 'paper_scale': {'mode': 'quick' if q else 'full', 'machine_start': res['machine_start'],
              'machine_end': res['machine_end'], 'total_wall_s': res['total_wall_s'], 'benches': res['benches']}}
    print('wrote', dump(merged, out))
    return res

if __name__ == '__main__':
    main()
