"Shared helpers of the benchmark scripts: timing, memory, machine description, table printing"
from __future__ import annotations
import json, os, platform, resource, sys, time, tracemalloc
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CACHE = ROOT/'runs'/'bench_cache'          # gitignored: tokenised captions, generated worlds
RESULTS = ROOT/'results'/'bench'           # committed: dated results, logs and raw GPU output (YYYY-MM-DD-name)

def dated(name:str, day:str|None=None)->Path:
    "Where a result called `name` measured on `day` (default: today, UTC) is kept: results/bench/YYYY-MM-DD-name"
    return RESULTS/f"{day or time.strftime('%Y-%m-%d', time.gmtime())}-{name}"

def latest(name:str)->Path|None:
    "The most recent results/bench/YYYY-MM-DD-name, or None"
    found = sorted(RESULTS.glob(f'[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9]-{name}'))
    return found[-1] if found else None

def best_time(f, repeat:int=3, min_time:float=0.0):
    "Result of `f()` and the best wall time over `repeat` calls (noise on a shared machine only adds time)"
    best, out, n = float('inf'), None, 0
    while n < repeat or (min_time and sum_t < min_time):
        t0 = time.perf_counter(); out = f(); dt = time.perf_counter() - t0
        best = min(best, dt); n += 1; sum_t = dt if n == 1 else sum_t + dt
        if n >= 50: break
    return out, best

def best_times(f, repeat:int=3):
    "Result of `f()`, its best wall time and its best CPU time of this process (less affected by other jobs) over `repeat` calls"
    best_w = best_c = float('inf'); out = None
    for _ in range(repeat):
        w, c = time.perf_counter(), time.process_time(); out = f()
        best_w, best_c = min(best_w, time.perf_counter() - w), min(best_c, time.process_time() - c)
    return out, best_w, best_c

def peak_rss_mb()->float:
    "Peak resident memory of this process so far (ru_maxrss, MB)"
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024

class traced:
    "Context manager: peak Python-heap allocation (tracemalloc, MB) inside the block (numpy and torch CPU tensors included)"
    def __enter__(self): tracemalloc.start(); tracemalloc.reset_peak(); return self
    def __exit__(self, *a): self.peak_mb = tracemalloc.get_traced_memory()[1] / 2**20; tracemalloc.stop()

def machine()->dict:
    "Where the numbers came from"
    try: load = os.getloadavg()
    except OSError: load = None
    import torch
    return {'cpu_count': os.cpu_count(), 'affinity': len(os.sched_getaffinity(0)) if hasattr(os, 'sched_getaffinity') else None,
            'load_avg_1_5_15': [round(x, 2) for x in load] if load else None, 'platform': platform.platform(),
            'python': sys.version.split()[0], 'torch': torch.__version__, 'torch_threads': torch.get_num_threads(),
            'cuda': torch.cuda.is_available(), 'gpu': torch.cuda.get_device_name(0) if torch.cuda.is_available() else None,
            'time_utc': time.strftime('%Y-%m-%d %H:%M:%S', time.gmtime())}

def table(title:str, rows:list[dict], cols:list[str]|None=None)->str:
    "A plain-text table of `rows` (dicts), columns in `cols` order"
    if not rows: return f"{title}: (no rows)"
    cols = cols or list(dict.fromkeys(k for r in rows for k in r))
    fmt = lambda v: (f"{v:.4g}" if isinstance(v, float) else str(v)) if v is not None else '-'
    cells = [[fmt(r.get(c)) for c in cols] for r in rows]
    w = [max(len(c), *(len(x[i]) for x in cells)) for i, c in enumerate(cols)]
    line = lambda xs: '| ' + ' | '.join(x.ljust(n) for x, n in zip(xs, w)) + ' |'
    return '\n'.join([f"## {title}", line(cols), '|' + '|'.join('-' * (n + 2) for n in w) + '|', *map(line, cells)])

def dump(obj, path):
    p = Path(path); p.parent.mkdir(parents=True, exist_ok=True); p.write_text(json.dumps(obj, indent=1, default=str)); return p

def swapped_nll(net, ds, n:int, swaps=('other_regions', 'other_words'), batch:int=64)->dict:
    """Teacher-forced word NLL (nats per word) of a captioner on the first `n` captions of a `CaptionDataset`, under
    their own control ('own') and with one input taken from the next caption of the batch: 'other_regions' (the
    grounded regions: how much the control is used), 'other_words' (the words fed back, `<unk>` past the other's end:
    how much the caption so far is used). A model that ignores an input loses nothing when it is swapped."""
    import torch
    from vsr_cic.captioning import prepare_batch
    from vsr_cic.captioner import caption_inputs, UNK_ID
    tot = {k: [0., 0] for k in ('own', *swaps)}
    net.eval()
    with torch.no_grad():
        for i in range(0, min(n, len(ds)), batch):
            inp = caption_inputs(prepare_batch(ds.collate([ds[j] for j in range(i, min(i + batch, n, len(ds)))]), 'cpu'))
            B = inp['words'].shape[0]
            if B < 2: continue
            other = torch.roll(torch.arange(B), 1)                                   # each caption gets its neighbour's
            w, tgt = inp['words'], inp['words'][:, 1:]
            live = tgt != net.pad_id
            fed = torch.where(w[other] != net.pad_id, w[other], torch.full_like(w, UNK_ID))
            fed[:, 0] = w[:, 0]
            over = {'own': {}, 'other_words': {'words': fed},
                    'other_regions': {x: inp[x][other] for x in ('regions', 'region_mask', 'global_feat')}}
            for k in tot:
                wl = net(**{**inp, **over[k]})[0]                                    # (B, T-1, V) log-probs
                tot[k][0] -= wl.gather(2, tgt[..., None])[..., 0][live].sum().item(); tot[k][1] += live.sum().item()
    return {k: round(v / c, 3) for k, (v, c) in tot.items() if c}

def finished_run(run_dir)->Path:
    "A finished real_captions run folder (with `table1/` and `data/train/`), or exit with the reason"
    run = Path(run_dir)
    if not (run/'table1').is_dir() or not (run/'data'/'train').is_dir():
        sys.exit(f"{run}: not a finished real_captions run (no table1/ or data/train/)")
    return run

def table1_winners(run:Path, methods, seeds=None):
    """Each Table 1 sweep winner of a finished real_captions run, with the validation data it was trained on:
    yields (method, seed folder, winner folder, captioner, its preset, its decoding options as Table 1 decodes it,
    its `CaptionData`); seeds=None: every seed"""
    from vsr_cic.pipeline import load_captioner
    from vsr_cic.captioning import caption_data, preset_options
    cds = {}
    for m in methods:
        dirs = sorted((run/'table1'/m).glob('seed*')) if seeds is None else [run/'table1'/m/f'seed{s}' for s in seeds]
        for d in dirs:
            if not (d/'choice.json').exists(): print(f"{d}: no choice.json, skipped", flush=True); continue
            win = d/'sweep'/json.loads((d/'choice.json').read_text())['chosen']
            net, voc, info = load_captioner(win)
            cfg = json.loads((win/'metrics.json').read_text())['config']         # the run's min_freq and ungrounded rule
            key = (cfg['min_freq'], cfg['ungrounded'], getattr(net, 'verb_shift', '') == 'one_word')
            if key not in cds: cds[key] = caption_data(run/'data'/'train', splits=('train', 'val'), min_freq=key[0],
                                                       ungrounded=key[1], verb_one_word=key[2])
            if cds[key].vocab['words'].itos != voc['words'].itos: sys.exit(f"{win}: its vocabulary is not the run data's")
            preset = info.get('preset') or 'paper'
            yield m, d, win, net, preset, info.get('options') or preset_options(preset), cds[key]   # as evaluate_table1

def table1_parser(doc:str, n:int):
    "The arguments every Table 1 check of a finished real_captions run takes: RUN_DIR, --methods, --n, --out"
    import argparse
    ap = argparse.ArgumentParser(description=doc, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument('run_dir', help='a finished real_captions run folder (with table1/<method>/seed<k>/choice.json)')
    ap.add_argument('--methods', nargs='+', default=['c_lstm', 'c_updn', 'sct', 'ours'], help="Table 1's trained captioners")
    ap.add_argument('--n', type=int, default=n, help='validation captions')
    ap.add_argument('--out', default=None, help='also write the result here')
    return ap
