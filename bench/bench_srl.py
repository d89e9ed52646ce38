"""Parsing speed of the SRL backends on real captions (captions per second): wall time and CPU time of this process.

    python bench/bench_srl.py                 # default backend and 'spacy', 5,000 COCO val2017 captions
    taskset -c 0 python bench/bench_srl.py    # pinned to one core (less disturbed by other jobs on a shared machine)
    python bench/bench_srl.py --quick         # 500 captions
    python bench/bench_srl.py --n-process 1   # no worker processes (default: one per core for >= 2,000 captions)

Prints the load average before and after: on a shared machine other jobs slow the wall-clock figure.
"""
from __future__ import annotations
import argparse, json, os, sys, time
from pathlib import Path
sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import machine

def captions(n:int)->list[str]:
    "Real COCO val2017 captions from the shared data, else the built-in world's captions"
    from vsr_cic.core import shared_data_dir
    sd = shared_data_dir()
    f = sd/'coco_captions'/'captions_val2017.json' if sd is not None else None
    if f is not None and f.exists(): return [a['caption'] for a in json.loads(f.read_text())['annotations']][:n]
    from vsr_cic.world import ensure_world
    return [json.loads(l)['caption'] for l in open(Path(ensure_world())/'captions.jsonl')][:n]

def timed(f, repeat:int):
    "Result of `f()`, its best wall time and its best CPU time (this process and its finished worker processes)"
    best_w = best_c = float('inf')
    for _ in range(repeat):
        t, w = os.times(), time.perf_counter()
        out = f()
        t2, w2 = os.times(), time.perf_counter()
        best_w, best_c = min(best_w, w2 - w), min(best_c, sum(t2[:4]) - sum(t[:4]))
    return out, best_w, best_c

def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument('--quick', action='store_true'); ap.add_argument('--n', type=int, default=5000)
    ap.add_argument('--backends', default='default,spacy'); ap.add_argument('--repeat', type=int, default=3)
    ap.add_argument('--out', default=None)
    ap.add_argument('--n-process', type=int, default=None, help='worker processes (default: one per core, at most 4)')
    a = ap.parse_args(argv)
    import torch; torch.set_num_threads(1)
    from vsr_cic.srl import get_srl, DEFAULT_BACKEND
    caps = captions(500 if a.quick else a.n)
    print(f"load average before: {os.getloadavg()}", flush=True)
    rows = {}
    for name in a.backends.split(','):
        name = DEFAULT_BACKEND if name == 'default' else name
        if name in rows: continue
        srl = get_srl(name, n_process=a.n_process)
        srl.parse_many(caps[:200])   # warm up: model loading, caches
        parses, wall, cpu = timed(lambda: srl.parse_many(caps), repeat=1 if a.quick else a.repeat)
        rows[name] = {'captions': len(caps), 'n_process': a.n_process, 'wall_s': round(wall, 2), 'cpu_s': round(cpu, 2),
                      'captions_per_s_wall': round(len(caps) / wall),
                      'captions_per_s_cpu': round(len(caps) / cpu), 'no_predicate': round(sum(not p.frames for p in parses) / len(caps), 4)}
        print(f"{name:8s} {len(caps)} captions: {rows[name]['captions_per_s_wall']} captions/s wall, "
              f"{rows[name]['captions_per_s_cpu']} captions per CPU-second (workers included), "
              f"no predicate in {rows[name]['no_predicate']:.1%}", flush=True)
    print(f"load average after: {os.getloadavg()}", flush=True)
    out = {'default_backend': DEFAULT_BACKEND, 'backends': rows, 'machine': machine()}
    if a.out: Path(a.out).write_text(json.dumps(out, indent=1))
    return out

if __name__ == '__main__': main()
