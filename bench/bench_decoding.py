"""Decoding: batched beam search (beam 5) vs one caption at a time, on test captions of the built-in world.

Model: a RoleShiftCaptioner in the main job's configuration (`make_captioner('ours', hidden=128,
verb_shift='one_word')`), torch seed 0, briefly trained: TRAIN_STEPS XE steps of 100 captions (lr 5e-4), cached in
runs/bench_cache. (Untrained weights are degenerate: every best caption is `<eos>` at once.) Captions come through the loader's 'caption' task (`caption_data`), ground-truth
controls, verb constraint on, max_len from the training split. Checks that both give the same best caption.
Usage: python bench/bench_decoding.py [--quick] [--items N] [--threads 1] [--device cuda] [--batch 100]
(the model is trained on the CPU, then moved to `--device`; `bench/gpu/gpu_check.sh` runs it on a GPU)
"""
from __future__ import annotations
import argparse, sys
from pathlib import Path
sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import best_time, table

N_ITEMS, QUICK_ITEMS, BATCH = 1000, 40, 100
TRAIN_STEPS, QUICK_TRAIN_STEPS = 60, 5

def setup(threads:int=1, train_steps:int=TRAIN_STEPS, world=None):
    import torch
    from vsr_cic.world import ensure_world
    from vsr_cic.captioning import caption_data, xe_step_fn
    from vsr_cic.baselines import make_captioner
    from common import CACHE
    torch.set_num_threads(threads); torch.manual_seed(0)
    path = Path(world) if world else ensure_world()
    cd = caption_data(path, verb_one_word=True)
    net = make_captioner('ours', cd.vocab_size, cd.feat_dim, hidden=128, emb=128, att=128, verb_shift='one_word')
    import json
    wv = json.loads((path/'meta.json').read_text()).get('world_version')
    f = CACHE/f'captioner_xe{train_steps}_{path.name}_v{wv}_V{cd.vocab_size}.pt'   # another world or vocabulary: trained again
    if f.exists(): net.load_state_dict(torch.load(f))
    else:
        tr, opt, step = cd.splits['train'], torch.optim.Adam(net.parameters(), 5e-4), xe_step_fn(net, 'cpu')
        g = torch.Generator().manual_seed(0); net.train()
        for _ in range(train_steps):
            idx = torch.randint(len(tr), (BATCH,), generator=g).tolist()
            loss = step(tr.collate([tr[i] for i in idx]))['loss']; opt.zero_grad(); loss.backward(); opt.step()
        f.parent.mkdir(parents=True, exist_ok=True); torch.save(net.state_dict(), f)
    return cd, net.eval()

def _decode(net, cd, idx, beam, device='cpu'):
    import torch
    from vsr_cic.captioning import prepare_batch, controls_of
    from vsr_cic.decoding import beam_search
    ds = cd.splits['test']
    b = prepare_batch(ds.collate([ds[i] for i in idx]), device); ctl = controls_of(b, net, cd, constrain=True)
    with torch.no_grad(): d = beam_search(net, beam_size=beam, max_len=cd.max_len, **ctl)
    return [[w for w, m in zip(ws, ms) if m] for ws, ms in zip(d.words.tolist(), d.mask.tolist())]

def run(quick:bool=False, items:int|None=None, beam:int=5, world=None, threads:int=1, device='cpu', batch:int=BATCH)->dict:
    cd, net = setup(threads=threads, train_steps=QUICK_TRAIN_STEPS if quick else TRAIN_STEPS, world=world)
    net = net.to(device)
    n = min(items or (QUICK_ITEMS if quick else N_ITEMS), len(cd.splits['test']))
    if str(device) != 'cpu': _decode(net, cd, list(range(min(batch, n))), beam, device)   # warm-up (CUDA context, kernels)
    batched, t_b = best_time(lambda: [c for i in range(0, n, batch) for c in _decode(net, cd, list(range(i, min(i + batch, n))), beam, device)], 1 if quick else 2)
    single, t_s = best_time(lambda: [_decode(net, cd, [i], beam, device)[0] for i in range(n)], 1)
    same = sum(a == b for a, b in zip(batched, single))
    row = dict(device=str(device), items=n, beam=beam, batch=batch, one_at_a_time_s=t_s, batched_s=t_b, speedup=t_s / t_b,
               captions_per_s_batched=n / t_b, identical=f'{same}/{n}')
    return {'rows': [row], 'beam_speedup': t_s / t_b, 'beam_identical': same == n, 'beam_identical_fraction': same / n,
            'beam_items': n, 'beam_device': str(device), 'beam_model': f'RoleShiftCaptioner hidden 128, torch seed 0, {QUICK_TRAIN_STEPS if quick else TRAIN_STEPS} XE steps of {BATCH}, eval mode, {threads} torch thread(s)',
            'beam_mean_len': sum(map(len, batched)) / n}

if __name__ == '__main__':
    ap = argparse.ArgumentParser(); ap.add_argument('--quick', action='store_true'); ap.add_argument('--items', type=int)
    ap.add_argument('--threads', type=int, default=1); ap.add_argument('--device', default='cpu'); ap.add_argument('--batch', type=int, default=BATCH)
    ap.add_argument('--world'); ap.add_argument('--json', default=None, help='also write the result here'); a = ap.parse_args()
    r = run(a.quick, a.items, world=a.world, threads=a.threads, device=a.device, batch=a.batch)
    print(table(f'Beam search (beam 5) on {a.device}: batched vs one at a time (target >= 10x)', r['rows']))
    if a.json:
        from common import dump, machine
        dump({**r, 'machine': machine()}, a.json)
