"""Which of Table 1's trained captioners say a verb, measured on the corpus's *validation* split (no test split is read).
For each sweep winner of a finished real_captions run, on the first N validation captions, each under its annotated
control (grounding and structure), decoded as Table 1 decodes its preset (beam 5, the captioner's own end rule and verb
restriction; `paper`: repeated words collapsed, as the official evaluation does):
- has_verb: share of captions whose own parse (`vsr_cic.srl`, spaCy) has a verb frame;
- verbless: how many captions have none, and where they ended: `ended_early` = the caption ended before its last
  sub-role had a word (the official decoding, `complete=False`, lets `<eos>` come in any sub-role), by the sub-role it
  ended in, with a few examples.
Nothing is trained.

Usage: python bench/table1_has_verb_val.py RUN_DIR [--methods c_lstm c_updn sct ours] [--seeds 0] [--n 300] [--out FILE]"""
import json, sys
from collections import Counter
from pathlib import Path
sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import finished_run, table1_parser, table1_winners

ap = table1_parser(__doc__, 300)
ap.add_argument('--seeds', nargs='+', type=int, default=[0], help='seeds to measure')
ap.add_argument('--beam', type=int, default=5, help="beam size (Table 1's: 5)")
a = ap.parse_args()
run = finished_run(a.run_dir)

from vsr_cic.captioning import decode_split
from vsr_cic.protocol import collapse_repeats, decoding_for
from vsr_cic.scoring import control_counts, has_verb_share
from vsr_cic.baselines import NoVerbCaptioner
from vsr_cic.vsr import VERB

res = {}
for m, d, win, net, preset, opts, cd in table1_winners(run, a.methods, a.seeds):
    preds = decode_split(net, cd, 'val', beam=a.beam, limit=a.n, constrain=opts['constrain_verbs'], complete=opts['complete'])
    if decoding_for(preset)['collapse_repeats']: preds = [collapse_repeats(p) for p in preds]
    counts = control_counts(preds, 'spacy')
    verbless = [p for p, c in zip(preds, counts) if c['n_frames'] == 0]
    no_verb = isinstance(net, NoVerbCaptioner)   # SCT, w/o verb: their sub-roles are the non-verb ones
    def ended(p):   # (the sub-role the caption ended in, whether it ended before every sub-role had a word)
        subs = [x for x in p['subroles'] if x is not None]
        todo = [x for x in p['structure'] if not (no_verb and x == VERB)] or p['structure']
        return subs[-1] if subs else '<none>', len(set(subs)) < len(set(todo))
    ends = [ended(p) for p in verbless] if net.has_gate else []              # no gate (C-LSTM, C-UpDn): no sub-roles
    res[f'{m}/{d.name}'] = {'chosen': win.name, 'preset': preset, 'n': len(preds),
                            'has_verb': round(has_verb_share(counts), 4), 'verbless': len(verbless),
                            'ended_early': sum(early for _, early in ends) if net.has_gate else None,
                            'ended_in': dict(Counter(sub for sub, _ in ends).most_common(6)),
                            'examples': [{'caption': p['caption'], 'structure': p['structure'],
                                          'gt': ' '.join(p['gt'])} for p in verbless[:4]]}
    print(m, d.name, {k: v for k, v in res[f'{m}/{d.name}'].items() if k != 'examples'}, flush=True)
out = {'run': str(run), 'split': 'val', 'beam': a.beam,
       'what': "has_verb (own parse has a verb frame) of each Table 1 captioner on the corpus validation split under the "
               "annotated control, decoded as Table 1 decodes; verbless captions: how many ended before their last "
               "sub-role had a word, and the sub-role they ended in", 'rows': res}
if a.out: Path(a.out).parent.mkdir(parents=True, exist_ok=True); Path(a.out).write_text(json.dumps(out, indent=1))
