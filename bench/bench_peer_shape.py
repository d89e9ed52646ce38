"""Our captioner against a reference-shaped model at the reference trainer's size: XE step, greedy / beam decoding.

The shape of issue #17's side-by-side with self-critical.pytorch's UpDownModel: width 512 (hidden, embeddings,
attention), 36 regions x 2048-d per image, vocabulary 10,000, 16 generated tokens, batch 50, one CPU thread.
Our captioner sees the 36 regions as K=4 slots x R=9 regions (slot 1 is the verb, grounded to f-bar). Inputs are
random tensors of exactly that shape (no data set needed: the cost of a step does not depend on the values).
Configurations, timed in interleaved rounds (ref, proj512, ours, ref, ...) so load from other jobs hits all alike:

* `ref`: `updown_ref.UpDownRef`, the reference's layout (regions embedded once per image; per step: embedding,
  attention LSTM, additive attention over 36 regions, language LSTM, logits, log-softmax), 20.2 M parameters;
* `proj512`: `make_captioner('ours', ..., verb_shift='one_word', feat_proj=512)` (one learned linear map
  2048 -> 512 in front of the regions and f-bar, once per batch);
* `ours`: the same with `precompute=True` (x_t's terms of f-bar and of the slot embedding once per batch, the
  teacher-forced words' terms and the readout FC_b + log-softmax over all steps at once: the same equations);
* `raw` (`--with-raw`): no projection, the 2048-d features enter the LSTMs and attentions (slow).

Reported figures are medians over rounds, wall and CPU time of this process (the robust figure on a shared,
loaded machine). XE step = loss + backward + Adam step. Decoding: eval mode, no grad, `greedy_decode` and
`beam_search(beam_size=3, 5)` with max_len 16; the reference: greedy only.
Usage: python bench/bench_peer_shape.py [--quick] [--rounds 2] [--threads 1] [--with-raw]
"""
from __future__ import annotations
import argparse, statistics, sys, time
from pathlib import Path
sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import peak_rss_mb, table

WIDTH, FEAT_D, REGIONS, VOCAB, WORDS, BATCH = 512, 2048, 36, 10_000, 16, 50
SLOTS = 4                      # K; REGIONS // SLOTS regions per slot
XE_PER_ROUND, ROUNDS, QUICK = 2, 2, dict(batch=4, rounds=1, steps=1)

def peer_controls(batch:int=BATCH, seed:int=0)->dict:
    "Random control tensors and a caption of the peer shape: (B, K, R, D) regions, slot 1 the verb, WORDS tokens + <eos>"
    import torch
    from vsr_cic.captioner import BOS_ID, EOS_ID, ROLE_VOCAB
    g = torch.Generator().manual_seed(seed)
    K, R = SLOTS, REGIONS // SLOTS
    regions = torch.randn(batch, K, R, FEAT_D, generator=g)
    mask = torch.ones(batch, K, R, dtype=torch.bool)
    gf = regions.mean((1, 2))                                                   # (B, D) f-bar
    verb = torch.zeros(batch, K, dtype=torch.bool); verb[:, 1] = True
    regions[:, 1] = 0.; regions[:, 1, 0] = gf; mask[:, 1] = False; mask[:, 1, 0] = True
    role = torch.randint(1, len(ROLE_VOCAB) - 1, (batch, K), generator=g).masked_fill(verb, ROLE_VOCAB['V'])
    words = torch.randint(4, VOCAB, (batch, WORDS + 1), generator=g)
    words[:, 0], words[:, -1] = BOS_ID, EOS_ID                                  # <bos> w1..w15 <eos>: 16 outputs
    per = [3, 1, 6, WORDS + 1 - 10]                                             # tokens per slot (verb: one word)
    slot_idx = torch.cat([torch.full((n,), k) for k, n in enumerate(per)])[None].expand(batch, -1).contiguous()
    return dict(words=words, slot_idx=slot_idx, regions=regions, region_mask=mask, slot_role=role,
                slot_is_verb=verb, global_feat=gf, n_slots=torch.full((batch,), K))

CONFIGS = {'raw': dict(feat_proj=None), 'proj512': dict(feat_proj=WIDTH), 'ours': dict(feat_proj=WIDTH, precompute=True)}

def make_model(feat_proj, precompute:bool=False):
    import torch
    from vsr_cic.baselines import make_captioner
    torch.manual_seed(0)
    return make_captioner('ours', VOCAB, FEAT_D, hidden=WIDTH, emb=WIDTH, att=WIDTH, verb_shift='one_word', feat_proj=feat_proj,
                          precompute=precompute)

def make_ref():
    import torch
    from updown_ref import UpDownRef
    torch.manual_seed(0)
    return UpDownRef(VOCAB, FEAT_D, WIDTH)

def ref_inputs(ctl:dict, seed:int=1)->dict:
    "The reference's inputs: 36 regions x 2048 per image (all real), the same captions"
    import torch
    B = ctl['words'].shape[0]
    att = torch.randn(B, REGIONS, FEAT_D, generator=torch.Generator().manual_seed(seed))
    return dict(att_feats=att, att_mask=torch.ones(B, REGIONS, dtype=torch.bool), words=ctl['words'])

def xe_times(net, opt, ctl, n:int)->list[tuple]:
    "(wall, CPU) seconds of `n` XE steps; CPU time of this process is less inflated by other jobs on a loaded machine"
    out = []
    net.train()
    for _ in range(n):
        t0, c0 = time.perf_counter(), time.process_time()
        loss = net.loss(**ctl) if 'att_feats' in ctl else net.loss(**ctl)['loss']
        opt.zero_grad(); loss.backward(); opt.step(); out.append((time.perf_counter() - t0, time.process_time() - c0))
    return out

def _timed(f)->tuple:
    t0, c0 = time.perf_counter(), time.process_time(); f(); return time.perf_counter() - t0, time.process_time() - c0

def _greedy(net, ctl):
    "A no-argument call of greedy decoding of the batch: the reference's own loop, or `greedy_decode` for ours"
    from vsr_cic.decoding import greedy_decode
    from vsr_cic.captioner import BOS_ID
    if 'att_feats' in ctl: return lambda: net.greedy(ctl['att_feats'], ctl['att_mask'], BOS_ID, WORDS)
    c = {k: v for k, v in ctl.items() if k not in ('words', 'slot_idx')}
    return lambda: greedy_decode(net, max_len=WORDS, **c)

def decode_times(net, ctl)->dict:
    import torch
    from vsr_cic.decoding import beam_search
    net.eval(); out = {}
    with torch.no_grad():
        out['greedy'] = _timed(_greedy(net, ctl))
        if 'att_feats' in ctl: return out                                       # the reference: greedy only
        c = {k: v for k, v in ctl.items() if k not in ('words', 'slot_idx')}
        for k in (3, 5): out[f'beam{k}'] = _timed(lambda: beam_search(net, beam_size=k, max_len=WORDS, **c))
    return out                                                                  # name -> (wall s, CPU s)

def _row(name, net, xe, dec, batch)->dict:
    med = lambda k, j=0: statistics.median(d[k][j] for d in dec) if k in dec[0] else None
    per_s = lambda k: batch / med(k) if k in dec[0] else None
    s, c = statistics.median(w for w, _ in xe), statistics.median(c for _, c in xe)
    return dict(config=name, params_m=sum(p.numel() for p in net.parameters()) / 1e6, xe_s_per_step=s, xe_cpu_s_per_step=c,
                xe_captions_per_s=batch / s, xe_captions_per_cpu_s=batch / c, xe_steps=len(xe), greedy_s=med('greedy'),
                greedy_cpu_s=med('greedy', 1), greedy_captions_per_s=per_s('greedy'), greedy_captions_per_cpu_s=batch / med('greedy', 1),
                beam3_s=med('beam3'), beam3_cpu_s=med('beam3', 1), beam3_captions_per_s=per_s('beam3'),
                beam5_s=med('beam5'), beam5_cpu_s=med('beam5', 1), beam5_captions_per_s=per_s('beam5'))

def run(quick:bool=False, rounds:int|None=None, threads:int=1, batch:int|None=None, with_raw:bool=False)->dict:
    import torch
    torch.set_num_threads(threads)
    batch = batch or (QUICK['batch'] if quick else BATCH)
    rounds = rounds or (QUICK['rounds'] if quick else ROUNDS)
    steps = QUICK['steps'] if quick else XE_PER_ROUND
    ctl = peer_controls(batch)
    nets = {'ref': make_ref(), **{n: make_model(**kw) for n, kw in CONFIGS.items() if with_raw or n != 'raw'}}
    inputs = {n: ref_inputs(ctl) if n == 'ref' else ctl for n in nets}
    opts = {n: torch.optim.Adam(m.parameters(), 5e-4) for n, m in nets.items()}
    for n in nets: xe_times(nets[n], opts[n], inputs[n], 1)                     # warm-up (allocator, Adam state)
    xe, dec = {n: [] for n in nets}, {n: [] for n in nets}
    for _ in range(rounds):                                                     # interleaved: ref, proj512, ours, ref, ...
        for n in nets:
            xe[n].extend(xe_times(nets[n], opts[n], inputs[n], steps)); dec[n].append(decode_times(nets[n], inputs[n]))
    rows = [_row(n, nets[n], xe[n], dec[n], batch) for n in nets]
    r = {x['config']: x for x in rows}; ours, ref = r['ours'], r['ref']
    # headline: CPU seconds of the process per step (one thread): on a shared, oversubscribed machine wall time
    # mostly measures the run queue (2026-11-26: load 20-27 on 2 cores, wall 10-15x the CPU time)
    out = {'rows': rows, 'w512_b50_xe_s_per_step': ours['xe_cpu_s_per_step'], 'w512_b50_xe_s_per_step_ref': ref['xe_cpu_s_per_step'],
           'w512_b50_xe_s_per_step_proj512': r['proj512']['xe_cpu_s_per_step'],
           'w512_b50_xe_wall_s_per_step': ours['xe_s_per_step'], 'w512_b50_xe_wall_s_per_step_ref': ref['xe_s_per_step'],
           'peer_xe_vs_ref': ref['xe_cpu_s_per_step'] / ours['xe_cpu_s_per_step'],
           'peer_greedy_vs_ref': ref['greedy_cpu_s'] / ours['greedy_cpu_s'],
           'peer_xe_precompute_speedup': r['proj512']['xe_cpu_s_per_step'] / ours['xe_cpu_s_per_step'],
           'peer_batch': batch, 'peer_rounds': rounds, 'peer_xe_all_s': xe, 'peer_peak_rss_mb': peak_rss_mb(), 'peer_threads': threads}
    if 'raw' in r: out['w512_b50_xe_s_per_step_raw'] = r['raw']['xe_cpu_s_per_step']
    return out

def greedy_only(rounds:int=15, threads:int=1, batch:int=BATCH)->dict:
    "Greedy decoding only, `ref` and `ours` interleaved for `rounds` rounds: medians of CPU time and their ratio"
    import torch
    torch.set_num_threads(threads)
    ctl = peer_controls(batch)
    nets = {'ref': make_ref(), 'ours': make_model(**CONFIGS['ours'])}
    inputs = {'ref': ref_inputs(ctl), 'ours': ctl}
    cpu = {n: [] for n in nets}
    for _ in range(rounds):
        for n in nets: cpu[n].append(decode_times_greedy(nets[n], inputs[n]))
    med = {n: statistics.median(v) for n, v in cpu.items()}
    from torch.utils.flop_counter import FlopCounterMode
    flops = {}
    for n in nets:                                                              # matmul FLOPs of one decoding
        with FlopCounterMode(display=False) as fc: decode_times_greedy(nets[n], inputs[n])
        flops[n] = fc.get_total_flops()
    return {'peer_greedy_vs_ref': med['ref'] / med['ours'], 'greedy_gflop_ours': flops['ours'] / 1e9,
            'greedy_gflop_ref': flops['ref'] / 1e9, 'greedy_cpu_s_ours': med['ours'], 'greedy_cpu_s_ref': med['ref'],
            'greedy_rounds': rounds, 'greedy_round_ratios': sorted(r / o for r, o in zip(cpu['ref'], cpu['ours'])), 'peer_batch': batch}

def decode_times_greedy(net, ctl)->float:
    "CPU seconds of one greedy decoding of the batch (eval, no grad)"
    import torch
    net.eval()
    with torch.no_grad(): return _timed(_greedy(net, ctl))[1]

if __name__ == '__main__':
    ap = argparse.ArgumentParser(); ap.add_argument('--quick', action='store_true'); ap.add_argument('--rounds', type=int)
    ap.add_argument('--threads', type=int, default=1); ap.add_argument('--batch', type=int); ap.add_argument('--json')
    ap.add_argument('--with-raw', action='store_true', help='also time the raw 2048-d configuration (slow)')
    ap.add_argument('--greedy-only', action='store_true', help='only greedy decoding, ours vs ref, --rounds interleaved rounds (default 15)')
    a = ap.parse_args()
    if a.greedy_only:
        g = greedy_only(a.rounds or 15, a.threads, a.batch or BATCH)
        print(f"greedy, CPU s per {g['peer_batch']} captions (medians of {g['greedy_rounds']} rounds): ours {g['greedy_cpu_s_ours']:.3f}, "
              f"ref {g['greedy_cpu_s_ref']:.3f}; ref/ours {g['peer_greedy_vs_ref']:.3f} (>1 = ours faster); "
              f"per-round ratios {[round(x, 3) for x in g['greedy_round_ratios']]}; matmul GFLOP ours {g['greedy_gflop_ours']:.2f}, "
              f"ref {g['greedy_gflop_ref']:.2f} (ours/ref {g['greedy_gflop_ours'] / g['greedy_gflop_ref']:.3f})")
        if a.json:
            from common import dump, machine
            dump({**g, 'machine': machine()}, a.json)
        sys.exit()
    r = run(a.quick, a.rounds, a.threads, a.batch, a.with_raw)
    print(table(f"Peer shape: width {WIDTH}, {REGIONS} regions x {FEAT_D}-d, vocab {VOCAB}, {WORDS} tokens, batch {r['peer_batch']}, "
                f"{a.threads} thread(s); medians of {r['peer_rounds']} interleaved rounds", r['rows']))
    print(f"ours vs the reference (CPU time, >1 = ours faster): XE {r['peer_xe_vs_ref']:.2f}x, greedy {r['peer_greedy_vs_ref']:.2f}x; "
          f"precompute vs proj512 alone: {r['peer_xe_precompute_speedup']:.2f}x; peak RSS {r['peer_peak_rss_mb']:.0f} MB")
    if a.json:
        from common import dump, machine
        dump({**r, 'machine': machine()}, a.json)
