"""Paper scale: bottom-up-sized data (2048-d, 10-100 proposals), bounded loader memory, the paper's width.

1. Generate (`bench/paperscale.py`) float32 datasets of about `--sizes-gb` GB of features each (default 1 and 4.2:
   4.2x apart; larger sizes are one argument away, the shared 2-core machine made generation the bottleneck), into runs/bench_cache/paperscale (deleted at the end unless --keep).
2. Loader, per size, in a fresh subprocess: the file's pages are dropped from the OS page cache first
   (posix_fadvise DONTNEED, so reads come from the disk), then `make_loader(path, 'caption', batch_size=100,
   dense=True, cache_bytes=BUDGET)` runs `--batches` shuffled batches with 0 workers, then with 2 workers (each
   its own handle and half the budget). Reported: samples/s, MB/s of features read, RSS after building the
   datasets (caption records: grows with the number of captions), and the peak memory during the pass (PSS of
   this process + its workers, sampled from /proc after every batch, so pages a forked worker shares with the
   main process count once), whose excess over the after-build figure is the feature side and must stay within
   the cache budget + a fixed overhead (the batches in flight); plus ru_maxrss of the main process.
3. The paper's width on the smaller dataset (`caption_data`, batch 100 as supp. D, hidden = embeddings =
   attention = 512, `feat_proj=512`, `precompute=True`, verb_shift 'one_word', Adam, 1 thread): s/step of XE and of SCST (one
   sample + greedy baseline, CIDEr-D reward), beam-5 captions/s (eval, 100 captions), peak RSS; projected
   wall time of one COCO Entities epoch (545,202 training captions / 100 x s/step) for each stage.
Usage: python bench/bench_paperscale.py [--quick] [--sizes-gb 1,4.2] [--batches 30] [--keep]
"""
from __future__ import annotations
import argparse, json, os, shutil, subprocess, sys, time
from pathlib import Path
HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from common import CACHE, peak_rss_mb, table

BUDGET_MB, BATCH, WIDTH = 512, 100, 512
COCO_ENTITIES_TRAIN_CAPTIONS = 545_202           # COCO Entities training captions (issue #17; Cornia et al. 2019)
BYTES_PER_IMAGE_F32 = 52.5 * (2048 + 4 + 81) * 4  # mean proposals x (features + box + cls_prob) x float32
XE_STEPS, SCST_STEPS, BEAM_ITEMS = 4, 3, 100
QUICK = dict(images=(40, 160), batches=3, steps=1, beam_items=8, budget_mb=8)

def _pss_mb(pid:int)->float:
    "Proportional set size of `pid` (MB; pages shared with other processes split among them), 0 if it is gone"
    try:
        for line in Path(f'/proc/{pid}/smaps_rollup').read_text().splitlines():
            if line.startswith('Pss:'): return int(line.split()[1]) / 1024
    except OSError: pass
    return 0.

def _tree_mb()->float:
    "Memory of this process + its children (DataLoader workers), as summed PSS: forked workers' shared pages count once"
    me = os.getpid(); kids = []
    try: kids = [int(p) for p in Path(f'/proc/{me}/task/{me}/children').read_text().split()]
    except OSError: pass
    return _pss_mb(me) + sum(_pss_mb(k) for k in kids)

def drop_page_cache(path)->bool:
    "Ask the OS to forget the file's cached pages (no root needed), so the next reads hit the disk"
    if not hasattr(os, 'posix_fadvise'): return False
    fd = os.open(path, os.O_RDONLY)
    try: os.fsync(fd); os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED); return True
    finally: os.close(fd)

def loader_pass(path:str, batches:int, budget_mb:float, workers:int)->dict:
    "Runs in the subprocess: one shuffled pass of `batches` caption batches through a budgeted loader"
    import torch
    from vsr_cic.loader import make_loader
    torch.set_num_threads(1)
    feat = Path(path)/'features.hdf5'; cold = drop_page_cache(feat)
    t0 = time.perf_counter()
    dl = make_loader(path, task='caption', split='train', batch_size=BATCH, dense=True, num_workers=workers, shuffle=True,
                     cache_bytes=int(budget_mb * 2**20))
    t_build = time.perf_counter() - t0; rss_build = _tree_mb()
    n = nb = 0; peak = rss_build; imgs = 0; t0 = time.perf_counter()
    for b in dl:
        n += len(b['caption_id']); imgs += len(b['image_id']); nb += 1; peak = max(peak, _tree_mb())
        if nb >= batches: break
    dt = time.perf_counter() - t0
    st, ds = dl.dataset.store, dl.dataset
    return dict(examples_kb=ds.examples.nbytes / 2**10 if hasattr(ds.examples, 'nbytes') else None,
                images_kb=ds.data.images._recs.nbytes / 2**10 if hasattr(ds.data.images, '_recs') else None,
                workers=workers, samples=n, samples_per_s=n / dt, feature_mb_per_s=imgs * _image_mb(path) / dt, build_s=t_build,
                mem_after_build_mb=rss_build, peak_mem_mb=peak, feature_side_mb=peak - rss_build, cache_budget_mb=budget_mb,
                peak_rss_main_mb=peak_rss_mb(),
                main_cached_mb=st.cached_bytes / 2**20, cold_start=cold, features_gb=feat.stat().st_size / 1e9,
                train_captions=len(dl.dataset))

def _image_mb(path)->float:
    "Mean float32 MB of one image's arrays (file size / images, as float32)"
    p = Path(path); n = sum(1 for _ in open(p/'images.jsonl'))
    import h5py
    with h5py.File(p/'features.hdf5', 'r') as h: per = h[next(iter(h.keys()))].dtype.itemsize
    return (p/'features.hdf5').stat().st_size / n * 4 / per / 2**20

def width512(path:str, quick:bool=False, steps:int=XE_STEPS, scst_steps:int=SCST_STEPS, beam_items:int=BEAM_ITEMS)->dict:
    "Runs in the subprocess: XE / SCST / beam-5 throughput of the paper-width captioner on the generated data"
    import torch
    from bench_train import time_steps
    from vsr_cic.captioning import caption_data, xe_step_fn, scst_step_fn, CiderReward, controls_of, prepare_batch
    from vsr_cic.baselines import make_captioner
    from vsr_cic.decoding import beam_search
    torch.set_num_threads(1); torch.manual_seed(0)
    cd = caption_data(path, verb_one_word=True); tr = cd.splits['train']
    net = make_captioner('ours', cd.vocab_size, cd.feat_dim, hidden=WIDTH, emb=WIDTH, att=WIDTH, verb_shift='one_word', feat_proj=WIDTH,
                         precompute=True)
    rss0 = peak_rss_mb(); batch = 8 if quick else BATCH
    opt = torch.optim.Adam(net.parameters(), 5e-4); net.train()
    t_xe = time_steps(xe_step_fn(net, 'cpu'), opt, tr, steps, batch=batch); rss_xe = peak_rss_mb()
    reward = CiderReward(tr, net.eos_id); opt = torch.optim.Adam(net.parameters(), 5e-5)
    t_rl = time_steps(scst_step_fn(net, reward, 'cpu', cd.max_len, n=1, cd=cd, constrain=True), opt, tr, scst_steps, batch=batch)
    rss_rl = peak_rss_mb()
    b = prepare_batch(tr.collate([tr[i] for i in range(beam_items)]), 'cpu'); net.eval()
    ctl = controls_of(b, net, cd, True)
    t0 = time.perf_counter(); beam_search(net, beam_size=5, max_len=cd.max_len, **ctl); t_beam = time.perf_counter() - t0
    n_params = sum(p.numel() for p in net.parameters())
    return dict(batch=batch, params_m=n_params / 1e6, vocab=cd.vocab_size, xe_s_per_step=t_xe, xe_captions_per_s=batch / t_xe,
                scst_s_per_step=t_rl, scst_captions_per_s=batch / t_rl, beam5_captions_per_s=beam_items / t_beam,
                beam5_s=t_beam, beam_items=beam_items, rss_before_mb=rss0, peak_rss_xe_mb=rss_xe, peak_rss_mb=max(rss_rl, peak_rss_mb()),
                xe_epoch_coco_entities_s=COCO_ENTITIES_TRAIN_CAPTIONS / batch * t_xe,
                scst_epoch_coco_entities_s=COCO_ENTITIES_TRAIN_CAPTIONS / batch * t_rl)

def _sub(fn:str, *args)->dict:
    "Run bench_paperscale.<fn>(*args) in a fresh interpreter (its own memory); its JSON result"
    code = (f"import sys, json; sys.path.insert(0, {str(HERE)!r}); import bench_paperscale as b; "
            f"print('RESULT', json.dumps(b.{fn}(*{args!r})))")
    p = subprocess.run([sys.executable, '-c', code], capture_output=True, text=True, env={**os.environ, 'PYTHONWARNINGS': 'ignore'})
    line = [l for l in p.stdout.splitlines() if l.startswith('RESULT ')]
    if p.returncode or not line: raise RuntimeError(f"bench_paperscale.{fn}{args} failed (exit {p.returncode}):\n{p.stderr[-2000:]}")
    return json.loads(line[-1][7:])

def _dataset(n_images:int, dtype:str, root:Path, progress:bool)->tuple[Path, dict]:
    "A generated dataset of n_images (reused if complete), and how it was generated"
    from paperscale import generate_paperscale
    p = root/f'n{n_images}_{dtype}'; f = p/'bench_generation.json'
    if f.exists() and (p/'meta.json').exists(): return p, {**json.loads(f.read_text()), 'generated_now': False}
    g = generate_paperscale(p, n_images, dtype, seed=0, progress=progress)
    f.write_text(json.dumps(g)); return p, {**g, 'generated_now': True}

def run(quick:bool=False, sizes_gb=(1.0, 4.2), batches:int=30, keep:bool=False, budget_mb:float=BUDGET_MB,
        root=None, progress:bool=True, workers=(0, 2))->dict:
    root = Path(root) if root else CACHE/'paperscale'
    images = QUICK['images'] if quick else tuple(max(1000, round(g * 1e9 / BYTES_PER_IMAGE_F32)) for g in sizes_gb)
    batches = QUICK['batches'] if quick else batches
    budget_mb = float(QUICK['budget_mb'] if quick else budget_mb)
    call = (lambda fn, *a: globals()[fn](*a)) if quick else _sub
    rows, paths = [], []
    for n in images:
        p, g = _dataset(n, 'float32', root, progress); paths.append(p)
        for w in workers:
            r = call('loader_pass', str(p), batches, budget_mb, w)
            rows.append(dict(images=n, **{k: g[k] for k in ('captions', 'features_gb', 'generate_s', 'write_mb_per_s', 'mean_proposals')},
                             **{k: v for k, v in r.items() if k != 'features_gb'}))
    w5 = call('width512', str(paths[0]), quick, *((QUICK['steps'], QUICK['steps'], QUICK['beam_items']) if quick else ()))
    out = _summary(rows, w5, budget_mb)
    if not keep:
        for p in paths: shutil.rmtree(p, ignore_errors=True)
    out['generated_files_deleted'] = not keep
    return out

def _summary(rows:list, w5:dict, budget_mb:float)->dict:
    "Headline keys: the 0-worker pass of the largest size, slopes between the smallest and the largest size"
    w0 = [r for r in rows if r['workers'] == 0]; small, big = w0[0], w0[-1]
    dgb = big['features_gb'] - small['features_gb']
    slope = lambda k: (big[k] - small[k]) / dgb if dgb else None
    dcap = big['captions'] - small['captions']
    per_cap = lambda k: (big[k] - small[k]) * 2**20 / dcap if dcap else None      # bytes per caption of the dataset
    return {'rows': rows, 'width512': w5,
            'paper_scale_loader_samples_per_s': big['samples_per_s'], 'paper_scale_peak_rss_mb': max(r['peak_rss_main_mb'] for r in w0),
            'paper_scale_peak_mem_workers_mb': max(r['peak_mem_mb'] for r in rows),
            'paper_scale_cache_budget_mb': budget_mb, 'paper_scale_feature_side_mb_max': max(r['feature_side_mb'] for r in rows),
            'paper_scale_sizes_gb': [r['features_gb'] for r in w0], 'paper_scale_peak_rss_slope_mb_per_gb': slope('peak_rss_main_mb'),
            'paper_scale_feature_side_slope_mb_per_gb': slope('feature_side_mb'),
            'paper_scale_after_build_slope_mb_per_gb': slope('mem_after_build_mb'),
            'paper_scale_after_build_bytes_per_caption': per_cap('mem_after_build_mb'),
            'paper_scale_peak_rss_bytes_per_caption': per_cap('peak_rss_main_mb'),
            'paper_scale_captions': [r['captions'] for r in w0], 'paper_scale_size_ratio': big['features_gb'] / small['features_gb'],
            'w512_xe_captions_per_s': w5['xe_captions_per_s'], 'w512_scst_captions_per_s': w5['scst_captions_per_s'],
            'w512_beam5_captions_per_s': w5['beam5_captions_per_s'], 'w512_peak_rss_mb': w5['peak_rss_mb'],
            'coco_entities_epoch_projection_s': w5['xe_epoch_coco_entities_s'],
            'coco_entities_scst_epoch_projection_s': w5['scst_epoch_coco_entities_s']}

def report(r:dict)->str:
    w5 = r['width512']
    cols = ['images', 'captions', 'features_gb', 'generate_s', 'workers', 'samples', 'samples_per_s', 'feature_mb_per_s',
            'examples_kb', 'images_kb', 'mem_after_build_mb', 'peak_mem_mb', 'feature_side_mb', 'cache_budget_mb', 'peak_rss_main_mb']
    h = lambda s: float("nan") if s is None else s / 3600
    return '\n'.join([table('Paper-scale loader (float32 2048-d bottom-up layout, cold page cache, batch 100, dense)', r['rows'], cols), '',
        table('Paper width (hidden = emb = att = 512, feat_proj 512, batch %d, 1 thread)' % w5['batch'], [w5]), '',
        f"feature-side memory (peak - after build): max {r['paper_scale_feature_side_mb_max']:.0f} MB vs cache budget "
        f"{r['paper_scale_cache_budget_mb']:.0f} MB; slopes per GB of features: peak RSS {r['paper_scale_peak_rss_slope_mb_per_gb']}, "
        f"feature side {r['paper_scale_feature_side_slope_mb_per_gb']}, after build {r['paper_scale_after_build_slope_mb_per_gb']} MB/GB; "
        f"per caption: after build {r['paper_scale_after_build_bytes_per_caption']} B, peak RSS {r['paper_scale_peak_rss_bytes_per_caption']} B "
        f"(sizes {r['paper_scale_size_ratio']:.1f}x apart)",
        f"COCO Entities epoch ({COCO_ENTITIES_TRAIN_CAPTIONS:,} captions) projected: XE {h(r['coco_entities_epoch_projection_s']):.1f} h, "
        f"SCST {h(r['coco_entities_scst_epoch_projection_s']):.1f} h (1 CPU thread)"])

if __name__ == '__main__':
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument('--quick', action='store_true'); ap.add_argument('--sizes-gb', default='1,4.2')
    ap.add_argument('--batches', type=int, default=30); ap.add_argument('--keep', action='store_true')
    ap.add_argument('--budget-mb', type=float, default=BUDGET_MB); ap.add_argument('--json')
    a = ap.parse_args()
    r = run(a.quick, tuple(float(x) for x in a.sizes_gb.split(',')), a.batches, a.keep, a.budget_mb)
    print(report(r))
    if a.json:
        from common import dump, machine
        dump({**r, 'machine': machine()}, a.json)
