"""The real-language Table 1 at the paper's captioner width, several seeds, on a GPU box (issue #31), in three steps.

A GPU box has no Java and no spaCy, and only 64 MiB travel to it, so the work is split where the data is smallest:
  1. here:     `pack` a finished CPU run's shared parts (data build, photo test set, GSRL, planners), compressed;
  2. GPU box:  `decode` trains every Table 1 captioner of every seed at once on the GPU, then decodes every row of
               every seed on the box's CPU cores (`vsr_cic.tables.table1_predictions`: JSON-ready records);
  3. here:     `score` scores them with the project's scorers (pycocoevalcap with Java, the spaCy SRL labeller:
               `vsr_cic.tables.table1_scores`), pools the seeds and publishes `results/<name>.{json,md}` and the
               README block (`vsr_cic.tables.publish`).

  python bench/gpu/gpu_real_language.py pack runs/rl_def .gpu/rl.tar.xz
  python bench/gpu/gpu_real_language.py decode .gpu/rl.tar.xz $OUT --seeds 0 1 2 --hidden 512 --epochs_xe 4 --epochs_rl 1   # GPU box
  python bench/gpu/gpu_real_language.py score runs/rl_def OUT/predictions.json.gz runs/rl_gpu --name real_language_gpu

The same shared parts (one data build, one GSRL, one planner of each kind) serve every captioner, as in
`nbs/experiments/real_captions.ipynb`, and every captioner is trained by the same protocol (`vsr_cic.protocol`: the
validation sweep, the choice on validation CIDEr-D, XE then self-critical; `paper` training and decoding); only the
captioners' width, epochs and seeds differ from the CPU run.
"""
import argparse, gzip, json, os, platform, shutil, sys, tarfile, time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))   # the checkout's root
SHARED = ['data/train/captions.jsonl', 'data/train/features.hdf5', 'data/train/images.jsonl', 'data/train/meta.json',
          'photos/scene/captions.jsonl', 'photos/scene/features.hdf5', 'photos/scene/images.jsonl', 'photos/scene/meta.json']
SHARED_DIRS = ['gsrl', 'planner', 'planner_no_verb']
MAX_PREDICTION_BYTES = 1 << 30   # decompressed predictions.json.gz read at once


def pack(run, dest):
    "The shared parts of `run` that decoding reads (best checkpoints only), as one .tar.xz; a link out of the run is refused"
    from vsr_cic.guards import pack_archive
    run, dest = Path(run), Path(dest)
    rels = list(SHARED) + [str(f.relative_to(run)) for d in SHARED_DIRS for f in sorted((run/d).rglob('*'))
                           if (f.is_file() or f.is_symlink()) and f.name != 'last.pt']
    pack_archive(run, dest, rels, 'run')
    print(f'{dest}: {dest.stat().st_size / 2**20:.1f} MiB')


def _epochs_done(cap_dir)->dict:
    "{'xe': n, 'rl': m}: the epochs a captioner run finished (its validated epochs)"
    from vsr_cic.protocol import val_curve
    c = val_curve(cap_dir)
    return {st: sum(e['stage'] == st for e in c) for st in ('xe', 'rl')}


def _run_jobs(kws, deadline):
    "`train_captioner` on every kwargs at once, each in its own process, until `deadline` seconds: (jobs, those cut)"
    from vsr_cic.captioning import train_captioner
    from vsr_cic.train import Job
    t = time.time()
    jobs = [Job(train_captioner, kw, 1) for kw in kws]
    while any(j.proc.is_alive() for j in jobs) and time.time() - t < deadline: time.sleep(2)
    cut = []
    for j, kw in zip(jobs, kws):                              # past the deadline: stop, keep the finished epochs
        if j.proc.is_alive(): j.proc.terminate(); j.proc.join(); cut.append(kw)
    return jobs, cut


def _write(out, records, log):
    with gzip.open(out/'predictions.json.gz', 'wt') as f: json.dump(records, f)
    (out/'gpu_log.json').write_text(json.dumps(log, indent=1))


def decode(packed, out, seeds=(0, 1, 2), hidden=512, dropout=0.5, epochs_xe=4, lr_xe=3e-3,
           methods=('c_lstm', 'c_updn', 'sct', 'ours_no_verb', 'ours', 'ours_oracle_verb'), train_deadline=330.,
           decode_deadline=150., beam=5, corpus_limit=300, workers=None, work='/tmp/rl_gpu_run',
           epochs_rl=1, grid=None, sweep_epochs=1, sweep_share=0.4, schedule=None):
    """Train every captioner of every seed at once (GPU if there is one) by Table 1's protocol (`vsr_cic.protocol`: the
    validation sweep `grid` (None: `SWEEP_GRID`; a one-setting grid: `lr_xe`/`dropout` as given), the choice on
    validation CIDEr-D, then XE + self-critical), then decode every row on the CPU cores. The sweep gets
    `sweep_share` of `train_deadline`, the winners the rest. `schedule` (a `vsr_cic.protocol.SCHEDULES` name, e.g.
    'converged'): its epochs, patience, step LR and sweep rule for every captioner (None: `epochs_xe`, `epochs_rl`,
    `sweep_epochs` as given, the sweep read after its last epoch)"""
    workers = workers or os.cpu_count()
    import multiprocessing as mp
    import torch
    from vsr_cic.train import Job
    from vsr_cic.captioning import train_captioner
    from vsr_cic.tables import TABLE1_METHODS, table1_runs
    from vsr_cic.protocol import SWEEP_GRID, PRESET_TRAINING, sweep_jobs, choose_all, trained_as, training_seed, val_curve, schedule_named, sweep_sources
    out = Path(out); out.mkdir(parents=True, exist_ok=True)
    seeds, methods = [int(x) for x in seeds], list(methods)
    t0, log = time.time(), {'machine': {'gpu': torch.cuda.get_device_name(0) if torch.cuda.is_available() else None,
                                        'cpus': os.cpu_count(), 'torch': torch.__version__,
                                        'python': platform.python_version()}}
    from vsr_cic.guards import work_folder, extract_archive
    run = work_folder(work)                  # emptied only when it holds our marker: never a user's folder
    extract_archive(packed, run)             # files and folders only, inside `run`, size-capped (`data` filter)
    log['unpack_s'] = round(time.time() - t0, 1)
    trained = list(dict.fromkeys(trained_as(m, 'paper') for m in methods))   # the oracle decodes Ours; w/o verb trains its own
    dev = 'cuda' if torch.cuda.is_available() else 'cpu'
    grid = SWEEP_GRID if grid is None else grid
    if len(grid) <= 1: grid = {'given': {'lr_xe': lr_xe, 'dropout': dropout, **dict(next(iter(grid.values()), {}))}}   # a given setting wins
    sched_kw = schedule_named(schedule).train_kwargs() if schedule else {}   # the schedule's epochs, patience, step LR
    folders = {str(run/'table1'/m/f'seed{s}'): dict(
        data_dir=str(run/'data'/'train'), model=TABLE1_METHODS[m]['model'], preset='paper', **PRESET_TRAINING['paper'],
        seed=training_seed(m, s), **{'epochs_xe': epochs_xe, 'epochs_rl': epochs_rl, 'lr_decay': 0.8, **sched_kw}, batch_size=64, hidden=hidden,
        min_freq=5, beam=3,
        device=dev, precompute=True, threads=1, progress=False, metrics=False, control=False) for s in seeds for m in trained}
    names = {d: f'{Path(d).parent.name}/{Path(d).name}' for d in folders}
    sources = sweep_sources({(m, s): str(run/'table1'/m/f'seed{s}') for s in seeds for m in trained}, schedule)   # later seeds: the first's choice
    t = time.time()
    _, sweep_cut = _run_jobs(sweep_jobs(folders, grid, sweep_epochs, schedule, sources), train_deadline * sweep_share)
    # the choice on validation CIDEr-D, by the protocol's one rule (a setting cut before its first epoch has none)
    choices, finals, no_choice = choose_all(folders, grid, sweep_epochs, schedule, strict=False, sources=sources)
    for d, e in no_choice.items(): print(f'{names[d]}: no choice ({e})', flush=True)
    jobs, cut = _run_jobs(list(finals.values()), train_deadline - (time.time() - t))
    for kw in cut:                    # resume with the epochs it finished: no more steps, the best epoch kept
        try:
            n = _epochs_done(Path(kw['out_dir']))
            if n['xe']:
                f = Job(train_captioner, {**kw, 'epochs_xe': n['xe'], 'epochs_rl': n['rl']}, 1); f.proc.join(120)
                if f.proc.is_alive(): f.proc.terminate()
        except Exception as e: print(f"{kw['out_dir']}: not finalised ({e!r})", flush=True)
    train = {}
    for d, kw in finals.items():
        f = Path(kw['out_dir'])
        m = json.loads((f/'metrics.json').read_text()) if (f/'metrics.json').exists() else None
        train[names[d]] = {'done': (f/'model.pt').exists(), 'chosen': choices[d]['chosen'],
                           'settings': choices[d]['settings'], 'sweep_val_CIDEr-D': choices[d]['val_CIDEr-D'],
                           'cut_at_deadline': kw in cut, 'val_by_epoch': val_curve(f),
                           **{k: (m or {}).get(k) for k in ('val', 'epochs', 'train_seconds')}}
    log['sweep_cut'] = [k['out_dir'] for k in sweep_cut]
    log['train_wall_s'], log['train'] = round(time.time() - t, 1), train
    print(json.dumps(log, indent=1), flush=True)
    log['settings'] = {'seeds': seeds, 'hidden': hidden, 'epochs_xe': epochs_xe, 'epochs_rl': epochs_rl, 'grid': grid,
                       'schedule': schedule_named(schedule).record() if schedule else None,
                       'sweep_epochs': sweep_epochs, 'methods': methods, 'beam': beam, 'corpus_test_limit': corpus_limit,
                       'device': dev, 'preset': 'paper'}
    units = [(str(run), m, s, str(d), beam, corpus_limit) for m, s, d, _ in table1_runs(run, methods, seeds)
             if (Path(d)/'model.pt').exists()]
    t, records, took = time.time(), [], {}
    log['decode_s'] = took
    from vsr_cic.tables import run_row_predictions
    with mp.get_context('spawn').Pool(min(workers, len(units) or 1), initializer=torch.set_num_threads, initargs=(1,)) as pool:
        pending = [(u, pool.apply_async(run_row_predictions, u)) for u in units]
        while pending and time.time() - t < decode_deadline:   # each (method, seed) as it finishes, until the deadline
            time.sleep(1)
            for u, r in [x for x in pending if x[1].ready()]:
                pending.remove((u, r))
                try: recs, sec = r.get()
                except Exception as e:
                    print(f'{u[1]} seed {u[2]}: decoding failed: {e!r}', flush=True)
                    log.setdefault('decode_errors', []).append(f'{u[1]}/seed{u[2]}: {e!r}'); continue
                records += recs; took[f'{u[1]}/seed{u[2]}'] = sec
                print(f'decoded {u[1]} seed {u[2]} in {sec} s', flush=True)
                _write(out, records, log)                 # kept as it goes: a run cut short still returns what it decoded
        log['decode_unfinished'] = [f'{u[1]}/seed{u[2]}' for u, _ in pending]
        pool.terminate()
    log['decode_wall_s'], log['decode_s'], log['wall_s'] = round(time.time() - t, 1), took, round(time.time() - t0, 1)
    _write(out, records, log)
    print(f"{len(records)} decodings written; wall {log['wall_s']} s", flush=True)


def score(run, predictions, out, name='real_language_gpu', title='', command='', publish_to='.'):
    "Score the box's predictions here, pool the seeds, write out/metrics.json and publish results/<name>.*"
    from vsr_cic.data import load_dataset
    from vsr_cic.photos import photo_refs
    from vsr_cic.tables import table1_scores, pool_seeds, orderings, run_info, publish, training_bigrams, table1_references
    run, out = Path(run), Path(out); out.mkdir(parents=True, exist_ok=True)
    from vsr_cic.guards import read_json_file
    records = read_json_file(predictions, 'predictions', max_bytes=MAX_PREDICTION_BYTES)   # decompressed size capped
    log = read_json_file(Path(predictions).parent/'gpu_log.json', 'GPU log')
    cpu = read_json_file(run/'metrics.json', 'CPU run metrics')
    data, photos = load_dataset(run/'data'/'train'), load_dataset(run/'photos'/'scene')
    refs, n_frames = table1_references(data, photos, photo_refs(cpu['test']['captions_json']))
    corpus_bigrams = training_bigrams(data)
    t = time.time()
    rows, examples = table1_scores(records, refs, n_frames, corpus_bigrams)
    table1 = pool_seeds(rows)
    st = log['settings']
    info = run_info(command)
    machine = log['machine']
    metrics = {
        'run': {**info, 'machine': f"{machine['gpu']} ({machine['cpus']} CPU cores) for training and decoding; "
                                   f"scored on {info['machine']}",
                'gpu_run': {k: log.get(k) for k in ('train_wall_s', 'decode_wall_s', 'wall_s')}},
        'settings': {**{k: cpu['settings'][k] for k in ('corpora', 'n_captions', 'min_freq', 'region_words')},
                     'epochs_xe': st['epochs_xe'], 'epochs_rl': st['epochs_rl'], 'hidden': st['hidden'],
                     'sweep_grid': st['grid'], 'sweep_epochs': st['sweep_epochs'], 'beam': st['beam'], 'seed': st['seeds'],
                     'chosen': {n: t.get('settings') for n, t in log['train'].items()}},
        'test': cpu['test'], 'training_captions': cpu.get('training_captions'),
        'shared_from': {'run': str(run), 'commit': (cpu.get('run') or {}).get('commit'),
                        'components': cpu.get('components')},
        'table1': table1, 'table1_per_seed': rows, 'table1_examples': examples,
        'orderings': {w: orderings(table1, test_set=w) for w in dict.fromkeys(r['test_set'] for r in rows)},
        'table1_settings': {'preset': 'paper', 'methods': st['methods'], 'seeds': st['seeds'], 'beam': st['beam'],
                            'corpus_test_limit': st['corpus_test_limit'],
                            'shared': 'the CPU run\'s data build, GSRL and S-level planners (with / without verb)'},
        'captioners': log['train'], 'timings': {'score_s': round(time.time() - t, 1), 'decode_s': log.get('decode_s')},
    }
    (out/'metrics.json').write_text(json.dumps(metrics, indent=1, default=str))
    if publish_to is not None: publish(out/'metrics.json', name, title, root=publish_to)
    print(json.dumps(metrics['orderings'], indent=1))
    return metrics


if __name__ == '__main__':
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest='cmd', required=True)
    p = sub.add_parser('pack'); p.add_argument('run'); p.add_argument('dest')
    p = sub.add_parser('decode'); p.add_argument('packed'); p.add_argument('out')
    p.add_argument('--seeds', type=int, nargs='+', default=[0, 1, 2]); p.add_argument('--hidden', type=int, default=512)
    p.add_argument('--dropout', type=float, default=0.5); p.add_argument('--epochs_xe', type=int, default=4)
    p.add_argument('--lr_xe', type=float, default=3e-3, help='with --no_sweep: the one setting (with --dropout)')
    p.add_argument('--epochs_rl', type=int, default=1); p.add_argument('--sweep_epochs', type=int, default=1)
    p.add_argument('--no_sweep', action='store_true', help="no validation sweep: every captioner trains with --lr_xe/--dropout")
    p.add_argument('--schedule', default=None, help="a vsr_cic.protocol.SCHEDULES name (quick | converged): its epochs, patience, step LR and sweep rule (overrides --epochs_xe/--epochs_rl/--sweep_epochs)")
    p.add_argument('--methods', nargs='+', default=['c_lstm', 'c_updn', 'sct', 'ours_no_verb', 'ours', 'ours_oracle_verb'])
    p.add_argument('--train_deadline', type=float, default=330); p.add_argument('--decode_deadline', type=float, default=150)
    p.add_argument('--beam', type=int, default=5); p.add_argument('--corpus_limit', type=int, default=300, help="the corpora's test split: its first N captions too (0: the photos only)")
    p.add_argument('--workers', type=int, default=os.cpu_count()); p.add_argument('--work', default='/tmp/rl_gpu_run')
    p = sub.add_parser('score'); p.add_argument('run'); p.add_argument('predictions'); p.add_argument('out')
    p.add_argument('--name', default='real_language_gpu')
    p.add_argument('--title', default="Real language at the paper's width (512), three seeds, on a GPU: Table 1")
    a = ap.parse_args()
    if a.cmd == 'pack': pack(a.run, a.dest)
    elif a.cmd == 'decode':
        decode(a.packed, a.out, a.seeds, a.hidden, a.dropout, a.epochs_xe, a.lr_xe, a.methods, a.train_deadline,
               a.decode_deadline, a.beam, a.corpus_limit, a.workers, a.work, a.epochs_rl, {} if a.no_sweep else None,
               a.sweep_epochs, schedule=a.schedule)
    else: score(a.run, a.predictions, a.out, a.name, a.title, ' '.join(['python bench/gpu/gpu_real_language.py'] + sys.argv[1:]))
