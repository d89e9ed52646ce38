"""Our captioner at the reference trainer's size: XE step and greedy / beam decoding, raw vs projected regions.

The shape of issue #17's side-by-side with self-critical.pytorch's UpDownModel: width 512 (hidden, embeddings,
attention), 36 regions x 2048-d per image, vocabulary 10,000, 16 generated tokens, batch 50, one CPU thread.
Our captioner sees the 36 regions as K=4 slots x R=9 regions (slot 1 is the verb, grounded to f-bar), so each
region is projected once per image. Inputs are random tensors of exactly that shape (no data set needed: the
cost of a step does not depend on the values). Configurations:

* `raw`: `make_captioner('ours', ..., verb_shift='one_word')`, the 2048-d features enter the LSTMs and attentions
  (the code before this benchmark: the issue's "2.54 s per XE step");
* `proj512`: the same with `feat_proj=512` (one learned linear map 2048 -> 512 in front, once per batch).

Rounds alternate the two (raw, proj512, raw, ...) so load from other jobs hits both alike; the reported
figures are medians over rounds. XE step = loss + backward + Adam step. Decoding: eval mode, no grad,
`greedy_decode` and `beam_search(beam_size=3, 5)` with max_len 16.
Usage: python bench/bench_peer_shape.py [--quick] [--rounds 2] [--threads 1]
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

def make_model(feat_proj):
    import torch
    from vsr_cic.baselines import make_captioner
    torch.manual_seed(0)
    return make_captioner('ours', VOCAB, FEAT_D, hidden=WIDTH, emb=WIDTH, att=WIDTH, verb_shift='one_word', feat_proj=feat_proj)

def xe_times(net, opt, ctl, n:int)->list[tuple]:
    "(wall, CPU) seconds of `n` XE steps; CPU time of this process is less inflated by other jobs on a loaded machine"
    out = []
    net.train()
    for _ in range(n):
        t0, c0 = time.perf_counter(), time.process_time(); loss = net.loss(**ctl)['loss']
        opt.zero_grad(); loss.backward(); opt.step(); out.append((time.perf_counter() - t0, time.process_time() - c0))
    return out

def _timed(f)->tuple:
    t0, c0 = time.perf_counter(), time.process_time(); f(); return time.perf_counter() - t0, time.process_time() - c0

def decode_times(net, ctl)->dict:
    import torch
    from vsr_cic.decoding import greedy_decode, beam_search
    c = {k: v for k, v in ctl.items() if k not in ('words', 'slot_idx')}
    net.eval(); out = {}
    with torch.no_grad():
        out['greedy'] = _timed(lambda: greedy_decode(net, max_len=WORDS, **c))
        for k in (3, 5): out[f'beam{k}'] = _timed(lambda: beam_search(net, beam_size=k, max_len=WORDS, **c))
    return out                                                                  # name -> (wall s, CPU s)

def run(quick:bool=False, rounds:int|None=None, threads:int=1, batch:int|None=None)->dict:
    import torch
    torch.set_num_threads(threads)
    batch = batch or (QUICK['batch'] if quick else BATCH)
    rounds = rounds or (QUICK['rounds'] if quick else ROUNDS)
    steps = QUICK['steps'] if quick else XE_PER_ROUND
    ctl = peer_controls(batch)
    cfgs = {'raw': None, 'proj512': WIDTH}
    nets = {n: make_model(p) for n, p in cfgs.items()}
    opts = {n: torch.optim.Adam(m.parameters(), 5e-4) for n, m in nets.items()}
    for n in nets: xe_times(nets[n], opts[n], ctl, 1)                           # warm-up (allocator, Adam state)
    xe, dec = {n: [] for n in nets}, {n: [] for n in nets}
    for _ in range(rounds):                                                     # interleaved: raw, proj512, raw, ...
        for n in nets:
            xe[n].extend(xe_times(nets[n], opts[n], ctl, steps)); dec[n].append(decode_times(nets[n], ctl))
    rows = []
    for n in nets:
        med = lambda k, j=0: statistics.median(d[k][j] for d in dec[n])
        s, c = statistics.median(w for w, _ in xe[n]), statistics.median(c for _, c in xe[n])
        rows.append(dict(config=n, params_m=sum(p.numel() for p in nets[n].parameters()) / 1e6, xe_s_per_step=s, xe_cpu_s_per_step=c,
                         xe_captions_per_s=batch / s, xe_steps=len(xe[n]), greedy_s=med('greedy'), greedy_cpu_s=med('greedy', 1),
                         greedy_captions_per_s=batch / med('greedy'), beam3_s=med('beam3'), beam3_cpu_s=med('beam3', 1),
                         beam3_captions_per_s=batch / med('beam3'), beam5_s=med('beam5'), beam5_cpu_s=med('beam5', 1),
                         beam5_captions_per_s=batch / med('beam5')))
    raw, new = rows
    # headline: CPU seconds of the process per step (one thread): on a shared, oversubscribed machine wall time
    # mostly measures the run queue (2026-11-26: load 20-27 on 2 cores, wall 10-15x the CPU time)
    return {'rows': rows, 'w512_b50_xe_s_per_step': new['xe_cpu_s_per_step'], 'w512_b50_xe_s_per_step_raw': raw['xe_cpu_s_per_step'],
            'w512_b50_xe_wall_s_per_step': new['xe_s_per_step'], 'w512_b50_xe_wall_s_per_step_raw': raw['xe_s_per_step'],
            'peer_xe_speedup': raw['xe_cpu_s_per_step'] / new['xe_cpu_s_per_step'],
            'peer_xe_speedup_wall': raw['xe_s_per_step'] / new['xe_s_per_step'], 'peer_batch': batch, 'peer_rounds': rounds,
            'peer_xe_all_s': xe, 'peer_peak_rss_mb': peak_rss_mb(), 'peer_threads': threads}

if __name__ == '__main__':
    ap = argparse.ArgumentParser(); ap.add_argument('--quick', action='store_true'); ap.add_argument('--rounds', type=int)
    ap.add_argument('--threads', type=int, default=1); ap.add_argument('--batch', type=int); ap.add_argument('--json')
    a = ap.parse_args()
    r = run(a.quick, a.rounds, a.threads, a.batch)
    print(table(f"Peer shape: width {WIDTH}, {REGIONS} regions x {FEAT_D}-d, vocab {VOCAB}, {WORDS} tokens, batch {r['peer_batch']}, "
                f"{a.threads} thread(s); medians of {r['peer_rounds']} interleaved rounds", r['rows']))
    print(f"XE speed-up proj512 vs raw: {r['peer_xe_speedup']:.2f}x CPU time, {r['peer_xe_speedup_wall']:.2f}x wall; peak RSS {r['peer_peak_rss_mb']:.0f} MB")
    if a.json:
        from common import dump, machine
        dump({**r, 'machine': machine()}, a.json)
