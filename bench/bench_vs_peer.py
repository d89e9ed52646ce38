"""Our training and decoding steps side by side with self-critical.pytorch's own `UpDownModel` (bench/peer.py), one thread.

Working shape (`--shape working`): the real-language corpus (bench/real_models.py: COCO + 8k Flickr30k captions, class
features) with **trained** captioners (a few XE epochs: they end their captions as trained models do), width 128,
batch 64, real bucketed batches of epoch 0 (`EpochBatchSampler(lengths=…)`, as the runs draw them), each caption
captioned under its own control. Ours through the project's own paths and the options the runs use:
`xe_step_fn` + backward + Adam; `scst_step_fn` (one sample + greedy baseline + CIDEr-D reward + policy gradient) +
backward + Adam, under the model's preset (`complete`, `constrain_verbs`) and the decoding cap; greedy and beam 5 as
Table 1 decodes the row (`paper`: the preset's end rule and verb slots; the `ours` preset: `SlotWordCap` with its
open-phrase rule, `no_repeat`, `no_unk`). The peer: the same batch as its inputs (f-bar as `fc_feats`, the K×R slot
regions as `att_feats` with their mask, the caption as labels, cut at its 16 words as its preprocessing does) and an
`UpDownModel` of the same width; `LossWrapper` with `sc_flag` for its self-critical step (its greedy baseline, one
sample, its CIDEr-D with document frequencies of the same training captions) + backward + Adam, `_sample` greedy and
beam 5. The peer is trained too, by its own `LossWrapper` and Adam, for as many epochs of the same bucketed batches
as ours had and at the same learning rate (3e-3, the sweep's `fast` setting ours were trained with; cached in
runs/bench_cache/real_models/): an untrained peer ends every caption at its first step (its `<eos>` is token 0),
which would time nothing, and one trained at its default 5e-4 for 3 epochs says 6-word captions where ours say 8-9.

Paper shape (`--shape paper`): width 512, 36 regions x 2048-d (ours: K=4 slots x R=9, slot 1 the verb, `feat_proj=512`,
`precompute=True`), vocabulary 10,000, batch 50, 16 words, random inputs, both untrained and unable to end (their `<eos>`
logit biased by -1e4: an untrained model ends at a random step), so greedy and beam 5 run all 16 steps: the cost of a
step at the paper's size.

Timing: interleaved (for each round and batch, ours and the peer back to back, the order alternating), CPU time of
this process (robust to other jobs on a shared machine) and wall time; per measure the median over rounds of each
batch, summed over batches; ratio ours/peer (< 1: ours faster).

Usage: python bench/bench_vs_peer.py [--shape working paper] [--models ours ours_preset] [--batches 6] [--rounds 3]
                                     [--quick] [--json PATH]
"""
from __future__ import annotations
import argparse, contextlib, io, statistics, sys, time
from pathlib import Path
sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import table

PEER_WORDS = 16
PEER_LR = 3e-3   # the peer's training learning rate: the one ours had (the sweep's `fast`)

def _t(f)->tuple:
    "(wall s, CPU s) of f()"
    w, c = time.perf_counter(), time.process_time(); f(); return time.perf_counter() - w, time.process_time() - c

def peer_inputs(b:dict, words:int=PEER_WORDS)->dict:
    "The peer's inputs of one of our prepared batches: fc (B, D), regions (B, K·R, D) with their mask, labels cut at `words`"
    import torch
    from vsr_cic.captioner import PAD_ID, BOS_ID, EOS_ID
    B, K, R, D = b['regions'].shape
    att, mask = b['regions'].reshape(B, K * R, D), b['region_mask'].reshape(B, K * R)
    order = torch.sort((~mask).int(), dim=1, stable=True).indices                  # the peer reads a prefix of valid regions
    att, mask = att.gather(1, order[..., None].expand(-1, -1, D)), mask.gather(1, order).float()
    w = b['words'].clone()
    w[(w == PAD_ID) | (w == BOS_ID) | (w == EOS_ID)] = 0                        # the peer: 0 is <bos>, <eos> and <pad>
    n = (w[:, 1:] > 0).sum(1).clamp(max=words)                                  # words kept per caption
    labels = torch.zeros(B, 1, words + 2, dtype=torch.long)
    for i in range(B): labels[i, 0, 1:1 + n[i]] = w[i, 1:][w[i, 1:] > 0][:n[i]]
    masks = (torch.arange(words + 2)[None] < (n + 2)[:, None]).float()[:, None]
    gts = [labels[i, :, 1:].numpy() for i in range(B)]
    return dict(fc=b['global_feat'], att=att, att_masks=mask, labels=labels, masks=masks, gts=gts)

class Peer:
    "self-critical.pytorch's UpDownModel, its LossWrapper and Adam, called as its trainer calls them"
    def __init__(self, vocab:int, feat_dim:int, width:int, train_refs:list|None=None, seed:int=0, lr:float=5e-4):
        import torch
        from peer import load_peer, make_peer, init_reward
        self.p = load_peer()
        self.model, self.lw, self.opt_ns = make_peer(self.p, vocab, feat_dim, width, PEER_WORDS, seed)
        self.opt = torch.optim.Adam(self.model.parameters(), lr)
        if train_refs is not None: init_reward(self.p, train_refs)

    def fit(self, batches, path:Path):
        "Train on `batches` (peer inputs) with its own loss and optimiser, once; the weights are cached at `path`"
        import torch
        if path.exists(): self.model.load_state_dict(torch.load(path)); return
        t, n = time.time(), 0
        for x in batches: self.xe(x); n += 1
        torch.save(self.model.state_dict(), path)
        print(f"peer: {n} XE steps in {time.time() - t:.0f} s -> {path}", flush=True)

    def xe(self, x):
        import torch
        self.lw.train()
        out = self.lw(x['fc'], x['att'], x['labels'], x['masks'], x['att_masks'], x['gts'], torch.arange(len(x['gts'])), 0, 0, 0)
        self.opt.zero_grad(); out['loss'].backward(); self.opt.step()

    def scst(self, x):
        import torch
        self.lw.train()
        with contextlib.redirect_stdout(io.StringIO()):                         # (it prints the batch's CIDEr-D)
            out = self.lw(x['fc'], x['att'], x['labels'], x['masks'], x['att_masks'], x['gts'], torch.arange(len(x['gts'])), 1, 0, 0)
        self.opt.zero_grad(); out['loss'].backward(); self.opt.step()

    def decode(self, x, beam:int=1):
        import torch
        self.model.eval()
        with torch.no_grad():
            return self.model(x['fc'], x['att'], x['att_masks'], opt={'sample_method': 'greedy', 'beam_size': beam, 'sample_n': 1}, mode='sample')

def _ours_fns(net, cd, opts:dict, preset:str):
    "Our XE step, self-critical step, greedy and beam 5 of one prepared batch, as the runs call them"
    import torch
    from vsr_cic.captioning import xe_step_fn, scst_step_fn, CiderReward, prepare_batch, controls_of, adam
    from vsr_cic.decoding import greedy_decode, beam_search, SlotWordCap, slot_word_limit, slot_end_mask
    tr = cd.splits['train']
    opt = adam(net, 5e-5)                                                       # the trainer's optimiser
    xe, reward = xe_step_fn(net, 'cpu'), CiderReward(tr, net.eos_id)
    sc = scst_step_fn(net, reward, 'cpu', cd.max_len, n=1, cd=cd, constrain=opts['constrain_verbs'], complete=opts['complete'])
    rules = dict(complete=opts['complete'])
    dec = net
    if preset == 'ours':                                                        # Table 1's `ours` rows' rules
        dec = SlotWordCap(net, slot_word_limit(cd.data), slot_end_mask(cd.data, cd.vocab['words']))
        rules.update(no_repeat=True, no_unk=True)
    def train(step, batch):
        net.train(); out = step(batch); opt.zero_grad(); out['loss'].backward(); opt.step()
    def decode(batch, beam):
        net.eval()
        ctl = controls_of(prepare_batch(batch, 'cpu'), net, cd, opts['constrain_verbs'])
        with torch.no_grad():
            d = (greedy_decode(dec, max_len=cd.max_len, **rules, **ctl) if beam == 1 else
                 beam_search(dec, beam_size=beam, max_len=cd.max_len, **rules, **ctl))
        return d
    return {'xe': lambda b: train(xe, b), 'scst': lambda b: train(sc, b), 'greedy': lambda b: decode(b, 1),
            'beam5': lambda b: decode(b, 5)}

def _interleave(fns_ours:dict, fns_peer:dict, batches:list, rounds:int)->list[dict]:
    "Rows (measure, ours and peer seconds: median over rounds, summed over batches; wall and CPU)"
    import copy
    rows = []
    for k in fns_ours:
        t = {'ours': [[None] * rounds for _ in batches], 'peer': [[None] * rounds for _ in batches]}
        for r in range(rounds):
            for j, (ob, pb) in enumerate(batches):
                order = ('ours', 'peer') if (r + j) % 2 == 0 else ('peer', 'ours')
                for who in order:
                    f, x = (fns_ours[k], ob) if who == 'ours' else (fns_peer[k], pb)
                    t[who][j][r] = _t(lambda: f(x))
        med = lambda who, i: sum(statistics.median(x[i] for x in per) for per in t[who])
        rows.append(dict(measure=k, ours_cpu_s=med('ours', 1), peer_cpu_s=med('peer', 1), ratio_cpu=med('ours', 1) / med('peer', 1),
                         ours_wall_s=med('ours', 0), peer_wall_s=med('peer', 0), ratio_wall=med('ours', 0) / med('peer', 0)))
    return rows

def working(models=('ours', 'ours_preset'), n_batches:int=6, rounds:int=3, epochs:int=3, quick:bool=False)->dict:
    import torch
    import real_models as rm
    from vsr_cic.pipeline import load_captioner
    from vsr_cic.captioning import caption_data, TRAIN_UNGROUNDED, prepare_batch
    from vsr_cic.train import EpochBatchSampler
    torch.set_num_threads(1)
    out = {}
    for name in models:
        run = rm.trained(name, epochs)
        net, voc, info = load_captioner(run)
        cd = caption_data(rm.corpus(), splits=('train', 'val'), min_freq=5, verb_one_word=True, ungrounded=TRAIN_UNGROUNDED)
        if cd.vocab['words'].itos != voc['words'].itos: sys.exit(f"{run}: its vocabulary is not the corpus's")
        tr = cd.splits['train']
        L = [len(ex['words']) for ex in tr.examples]
        every = EpochBatchSampler(len(tr), 64, seed=0, lengths=L, pool=50).batches(0)
        pick = [every[i * len(every) // n_batches] for i in range(n_batches)]  # spread over the epoch's lengths
        obs = [tr.collate([tr[i] for i in b]) for b in pick]
        pbs = [peer_inputs(prepare_batch(b, 'cpu')) for b in obs]
        refs = {}
        for ex in tr.examples: refs.setdefault(ex['image_id'], []).append([w for w in ex['words'][1:-1]])
        peer = Peer(cd.vocab_size, cd.feat_dim, 128, list(refs.values()), lr=PEER_LR)
        train = [b for e in range(epochs) for b in EpochBatchSampler(len(tr), 64, seed=0, lengths=L, pool=50).batches(e)]
        peer.fit((peer_inputs(prepare_batch(tr.collate([tr[i] for i in b]), 'cpu')) for b in train),
                 rm.HOME/f'peer_w128_xe{epochs}_lr{PEER_LR:g}_v{rm.VERSION}.pt')
        peer.opt = torch.optim.Adam(peer.model.parameters(), 5e-5)                # (the timed steps: a fresh optimiser)
        n_words = [int((x != 0).sum()) for x in peer.decode(pbs[0], 1)[0]]
        fo = _ours_fns(net, cd, info['options'], info.get('preset') or 'paper')
        fp = {'xe': peer.xe, 'scst': peer.scst, 'greedy': lambda x: peer.decode(x, 1), 'beam5': lambda x: peer.decode(x, 5)}
        if quick: fo, fp = {k: fo[k] for k in ('xe', 'greedy')}, {k: fp[k] for k in ('xe', 'greedy')}
        for k in fo: fo[k](obs[0]); fp[k](pbs[0])                                # warm-up (allocator, Adam state)
        out[name] = {'rows': _interleave(fo, fp, list(zip(obs, pbs)), rounds), 'run': str(run), 'preset': info.get('preset'),
                     'val_CIDEr-D': info.get('val_cider'), 'cap': cd.max_len, 'batch': 64, 'batches': n_batches, 'rounds': rounds,
                     'mean_caption_words': sum(L) / len(L) - 2, 'peer_greedy_words': sum(n_words) / len(n_words)}
    return out

def paper(n_batches:int=2, rounds:int=3, quick:bool=False)->dict:
    import torch
    from bench_peer_shape import peer_controls, WIDTH, FEAT_D, VOCAB, BATCH
    from vsr_cic.baselines import make_captioner
    from vsr_cic.decoding import greedy_decode, beam_search
    torch.set_num_threads(1)
    B = 4 if quick else BATCH
    torch.manual_seed(0)
    net = make_captioner('ours', VOCAB, FEAT_D, hidden=WIDTH, emb=WIDTH, att=WIDTH, verb_shift='one_word',
                         feat_proj=WIDTH, precompute=True)
    from vsr_cic.captioning import adam
    opt = adam(net, 5e-4)
    peer = Peer(VOCAB, FEAT_D, WIDTH)
    with torch.no_grad():   # untrained models on random inputs: neither may end, so both decode all 16 words
        net.out.bias[net.eos_id] = -1e4; peer.model.logit.bias[0] = -1e4
    obs = [peer_controls(B, seed=s) for s in range(n_batches)]
    pbs = []
    for c in obs:
        x = peer_inputs({**c, 'regions': c['regions'], 'region_mask': c['region_mask'], 'global_feat': c['global_feat']})
        pbs.append(x)
    ctl = lambda c: {k: v for k, v in c.items() if k not in ('words', 'slot_idx')}
    def xe(c):
        net.train(); loss = net.loss(**c)['loss']; opt.zero_grad(); loss.backward(); opt.step()
    def dec(c, beam):
        net.eval()
        with torch.no_grad():
            return (greedy_decode(net, max_len=PEER_WORDS + 1, **ctl(c)) if beam == 1 else
                    beam_search(net, beam_size=beam, max_len=PEER_WORDS + 1, **ctl(c)))
    # The arithmetic floor of greedy at this shape: each side's matrix products of one step (as the profiles show
    # them), bare, for the same 16 steps. Row 'floor_ours' times ours' products against the peer's whole greedy: the
    # best ratio our architecture can reach here with zero overhead; 'floor_peer' the peer's own products against its
    # greedy: the share of the peer's time that is arithmetic. (x, in -> out): one (B, in) x (in, out) product.
    W = WIDTH
    # ours: the readout; [h2, h1] -> LSTM1's gates and both sentinels (6W); LSTM2's input and hidden products; the
    # attention's query, two sentinel keys and the sentinel's feature (the word term is a row of a cached table)
    ours_mm = [(W, VOCAB + 1), (2 * W, 6 * W), (2 * W, 4 * W), (W, 4 * W)] + [(W, W)] * 4
    # the peer (self-critical.pytorch's UpDownCore): the readout; att_lstm's input [h, fc, x] and hidden products;
    # lang_lstm's input [att, h] and hidden products; h2att
    peer_mm = [(W, VOCAB + 1), (3 * W, 4 * W), (W, 4 * W), (2 * W, 4 * W), (W, 4 * W), (W, W)]
    def floor_of(shapes):
        ws = [(torch.randn(B, i), torch.randn(i, o) * .05) for i, o in shapes]
        def f(_):
            with torch.no_grad():
                for _ in range(PEER_WORDS):
                    for x, w in ws: torch.mm(x, w)
        return f
    fo = {'xe': xe, 'greedy': lambda c: dec(c, 1), 'beam5': lambda c: dec(c, 5),
          'floor_ours': floor_of(ours_mm), 'floor_peer': floor_of(peer_mm)}
    fp = {'xe': peer.xe, 'greedy': lambda x: peer.decode(x, 1), 'beam5': lambda x: peer.decode(x, 5),
          'floor_ours': lambda x: peer.decode(x, 1), 'floor_peer': lambda x: peer.decode(x, 1)}
    if quick: fo, fp = {k: fo[k] for k in ('xe', 'greedy')}, {k: fp[k] for k in ('xe', 'greedy')}
    for k in fo: fo[k](obs[0]); fp[k](pbs[0])
    return {'rows': _interleave(fo, fp, list(zip(obs, pbs)), rounds), 'batch': B, 'width': WIDTH, 'vocab': VOCAB,
            'regions': '36 x 2048', 'words': PEER_WORDS}

if __name__ == '__main__':
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--shape', nargs='+', default=['working', 'paper'], choices=['working', 'paper'])
    ap.add_argument('--models', nargs='+', default=['ours', 'ours_preset'])
    ap.add_argument('--batches', type=int, default=6); ap.add_argument('--rounds', type=int, default=3)
    ap.add_argument('--epochs', type=int, default=3, help='XE epochs of the trained models (bench/real_models.py)')
    ap.add_argument('--quick', action='store_true', help='one batch, one round, XE and greedy only (a smoke run)')
    ap.add_argument('--json', default=None)
    a = ap.parse_args()
    nb, nr = (1, 1) if a.quick else (a.batches, a.rounds)
    res = {}
    if 'working' in a.shape:
        res['working'] = working(a.models, nb, nr, a.epochs, a.quick)
        for m, r in res['working'].items():
            print(table(f"working shape, {m} ({r['preset']} preset, val CIDEr-D {r['val_CIDEr-D']:.3f}, cap {r['cap']}, "
                        f"peer's greedy captions {r['peer_greedy_words']:.1f} words): "
                        f"{r['batches']} batches of 64 x {r['rounds']} rounds", r['rows']), flush=True)
    if 'paper' in a.shape:
        res['paper'] = paper(max(nb // 3, 1), nr, a.quick)
        print(table(f"paper shape (width 512, 36 x 2048 regions, 10k words, batch {res['paper']['batch']})", res['paper']['rows']))
    if a.json:
        from common import dump, machine
        dump({**res, 'machine': machine(), 'command': ' '.join(sys.argv)}, a.json)
