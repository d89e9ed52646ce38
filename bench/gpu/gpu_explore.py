"""Exploration (issue #17): where a GPU training step of the main job's captioner spends its time, per variant.
Usage: python bench/gpu/gpu_explore.py VARIANT [--world PATH] [--json FILE]
"""
from __future__ import annotations
import argparse, json, sys, time
from pathlib import Path
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))   # bench/: bench_train, common
import torch
import bench_train as bt

N, WARM = (2, 1) if '--quick' in sys.argv else (20, 3)

def pad_to(b:dict, K:int, T:int)->dict:
    "Pad a prepared batch's slot axis to K and caption axis to T (masks keep the padding inert)"
    out = dict(b)
    def padk(x, fill=0):
        k = x.shape[1]
        if k == K: return x
        return torch.cat([x, x.new_full((x.shape[0], K - k, *x.shape[2:]), fill)], 1)
    for key in ('slot_role', 'slot_sub', 'slot_is_verb', 'slot_verb', 'region_mask', 'regions', 'slot_mask'):
        if key in b: out[key] = padk(b[key])
    from vsr_cic.captioner import PAD_ID
    for key, fill in (('words', PAD_ID), ('slot_idx', 0)):
        x = b[key]; t = x.shape[1]
        if t < T: out[key] = torch.cat([x, x.new_full((x.shape[0], T - t), fill if key == 'words' else 0)], 1)
        if key == 'slot_idx' and t < T: out[key][:, t:] = x[:, -1:]
    return out

def main():
    ap = argparse.ArgumentParser(); ap.add_argument('variant'); ap.add_argument('--world'); ap.add_argument('--json'); ap.add_argument('--device', default='cuda'); ap.add_argument('--quick', action='store_true')
    a = ap.parse_args(); v = a.variant
    from vsr_cic.captioning import prepare_batch, caption_inputs, CiderReward, scst_step_fn
    from vsr_cic.fast_captioner import compile_step, with_fast_step
    dev = a.device
    sync = torch.cuda.synchronize if dev == 'cuda' else (lambda: None)
    cd, net, _ = bt.setup(a.world, dev)
    tr = cd.splits['train']
    t0 = time.perf_counter(); cpu = list(bt._batches(tr, N + WARM)); t_coll = (time.perf_counter() - t0) / (N + WARM)
    K = max(b['slot_role'].shape[1] for b in cpu); T = cd.max_len + 2
    pad = 'pad' in v
    if 'pre' in v: net.__class__ = with_fast_step(type(net))   # the same model and weights, `precompute=True`'s step
    if 'cstep' in v: compile_step(net)
    if 'chid' in v:
        net.step_hidden = torch.compile(type(net).step_hidden.__get__(net), mode='reduce-overhead' if 'ro' in v else None)
    opt = torch.optim.Adam(net.parameters(), 5e-4)
    net.train()
    res = dict(variant=v, collate_s=t_coll, K=K, T=T)
    if v.startswith('xe'):
        def lossf(b): return net.loss(**caption_inputs(b))['loss']
        if 'closs' in v: lossf = torch.compile(lossf, mode='reduce-overhead' if 'ro' in v else None, dynamic=False if pad else None)
        tc = time.perf_counter()
        for i, cb in enumerate(cpu):
            if i == WARM: sync(); res['warm_s'] = time.perf_counter() - tc; t0 = time.perf_counter()
            b = prepare_batch(cb, dev)
            if pad: b = pad_to(b, K, T)
            loss = lossf(b); opt.zero_grad(); loss.backward(); opt.step()
        sync(); s = (time.perf_counter() - t0) / N
        res.update(xe_s_per_step=s, xe_captions_per_s=100 / s, loss=float(loss))
    else:
        reward = CiderReward(tr, net.eos_id)
        if pad:
            import vsr_cic.captioning as C
            orig = C.prepare_batch
            C.prepare_batch = lambda batch, device: pad_to(orig(batch, device), K, T)
        step = scst_step_fn(net, reward, dev, cd.max_len, n=1, cd=cd, constrain=True)
        if 'phases' in v:
            from vsr_cic.captioning import controls_of, gt_sequences
            from vsr_cic.decoding import greedy_decode, sample_decode, scst_loss
            from vsr_cic.cider import ids_to_seqs
            import numpy as np
            ph = dict(prep=0., greedy=0., sample=0., reward=0., backward=0.)
            for i, cb in enumerate(cpu):
                if i == WARM: ph = {k: 0. for k in ph}
                sync(); t = time.perf_counter()
                b = prepare_batch(cb, dev); ctl = controls_of(b, net, cd, True); refs = gt_sequences(b['words'], net.eos_id)
                sync(); ph['prep'] += time.perf_counter() - t; t = time.perf_counter()
                net.eval()
                with torch.no_grad(): g = greedy_decode(net, max_len=cd.max_len, **ctl)
                net.train(); sync(); ph['greedy'] += time.perf_counter() - t; t = time.perf_counter()
                s = sample_decode(net, n=1, max_len=cd.max_len, **ctl); sync(); ph['sample'] += time.perf_counter() - t
                t = time.perf_counter()
                hyps = ids_to_seqs(s.words.detach().cpu(), eos=net.eos_id, keep_eos=True) + ids_to_seqs(g.words.cpu(), eos=net.eos_id, keep_eos=True)
                r = reward(hyps, refs + refs); ph['reward'] += time.perf_counter() - t; t = time.perf_counter()
                B = len(refs)
                loss = scst_loss(s.word_logp, s.gate_logp, s.mask, torch.as_tensor(r[:B], device=dev), torch.as_tensor(r[B:], device=dev))
                opt.zero_grad(); loss.backward(); opt.step(); sync(); ph['backward'] += time.perf_counter() - t
            res.update({f'scst_{k}_s': x / N for k, x in ph.items()}); res['scst_s_per_step'] = sum(ph.values()) / N
        else:
            tc = time.perf_counter()
            for i, cb in enumerate(cpu):
                if i == WARM: sync(); res['warm_s'] = time.perf_counter() - tc; t0 = time.perf_counter()
                loss = step(cb)['loss']; opt.zero_grad(); loss.backward(); opt.step()
            sync(); s = (time.perf_counter() - t0) / N
            res.update(scst_s_per_step=s, scst_captions_per_s=100 / s)
    res['peak_gpu_mb'] = (torch.cuda.max_memory_allocated() / 2**20 if dev == 'cuda' else None)
    print(json.dumps(res))
    if a.json:
        with open(a.json, 'a') as f: f.write(json.dumps(res) + '\n')

if __name__ == '__main__': main()
