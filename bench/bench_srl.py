"""Parsing speed of the SRL backends on real captions (captions per second): wall time and CPU time of this process.

    python bench/bench_srl.py                 # default backend and 'spacy', 5,000 COCO val2017 captions
    taskset -c 0 python bench/bench_srl.py    # pinned to one core (less disturbed by other jobs on a shared machine)
    python bench/bench_srl.py --quick         # 500 captions
"""
from __future__ import annotations
import argparse, json, os, sys, time
from pathlib import Path
sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import best_times, machine

def captions(n:int)->list[str]:
    "Real COCO val2017 captions from the shared data, else the built-in world's captions"
    from vsr_cic.core import shared_data_dir
    sd = shared_data_dir()
    f = sd/'coco_captions'/'captions_val2017.json' if sd is not None else None
    if f is not None and f.exists(): return [a['caption'] for a in json.loads(f.read_text())['annotations']][:n]
    from vsr_cic.world import ensure_world
    return [json.loads(l)['caption'] for l in open(Path(ensure_world())/'captions.jsonl')][:n]

def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument('--quick', action='store_true'); ap.add_argument('--n', type=int, default=5000)
    ap.add_argument('--backends', default='default,spacy'); ap.add_argument('--repeat', type=int, default=3)
    ap.add_argument('--out', default=None)
    a = ap.parse_args(argv)
    import torch; torch.set_num_threads(1)
    from vsr_cic.srl import get_srl, DEFAULT_BACKEND
    caps = captions(500 if a.quick else a.n)
    rows = {}
    for name in a.backends.split(','):
        name = DEFAULT_BACKEND if name == 'default' else name
        if name in rows: continue
        srl = get_srl(name)
        srl.parse_many(caps[:200])   # warm up: model loading, caches
        parses, wall, cpu = best_times(lambda: srl.parse_many(caps), repeat=1 if a.quick else a.repeat)
        rows[name] = {'captions': len(caps), 'wall_s': round(wall, 2), 'captions_per_s_wall': round(len(caps) / wall),
                      'captions_per_s_cpu': round(len(caps) / cpu), 'no_predicate': round(sum(not p.frames for p in parses) / len(caps), 4)}
        print(f"{name:8s} {len(caps)} captions: {rows[name]['captions_per_s_wall']} captions/s wall, "
              f"{rows[name]['captions_per_s_cpu']} captions/s CPU time, no predicate in {rows[name]['no_predicate']:.1%}", flush=True)
    out = {'default_backend': DEFAULT_BACKEND, 'backends': rows, 'machine': machine()}
    if a.out: Path(a.out).write_text(json.dumps(out, indent=1))
    return out

if __name__ == '__main__': main()
