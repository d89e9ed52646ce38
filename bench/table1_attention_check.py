"""Where Table 1's trained captioners look, and whether they listen to their control at all. For each sweep winner of a
finished real_captions run, on the first N validation captions of the run's corpus:
- alpha_v: the mean attention weight on the visual sentinel (the adaptive attention's "look at nothing" slot) under
  teacher forcing. 1.0 means the regions are never attended; None: the model has no visual sentinel (C-UpDn's
  top-down attention, C-LSTM's none).
- distinct: how many different captions greedy decoding says for the N controls (1: one caption for every control).
- nll: teacher-forced word NLL (nats per word) of the validation captions under their own control (`own`), with the
  grounded regions of another caption of the batch (`other_regions`: how much the regions are used), and with the
  words fed back taken from another caption (`other_words`: how much the caption so far is used). A model that
  listens to its regions loses under `other_regions`; a positional language model loses nothing.
Nothing is trained; no test split is read.

Usage: python bench/table1_attention_check.py RUN_DIR [--methods c_lstm c_updn sct ours] [--n 256] [--out FILE]"""
import json, sys
from pathlib import Path
sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import swapped_nll, finished_run, table1_parser, table1_winners

ap = table1_parser(__doc__, 256)
a = ap.parse_args()
run = finished_run(a.run_dir)

import torch
from vsr_cic.captioning import prepare_batch, decode_split
from vsr_cic.captioner import caption_inputs

res = {}
for m, d, win, net, preset, opts, cd in table1_winners(run, a.methods):
    ds = cd.splits['val']
    n = min(a.n, len(ds)); tot = cnt = 0.
    net.eval()
    nll = swapped_nll(net, ds, n)
    sentinel = getattr(getattr(net, 'attn', None), 'visual_sentinel', False)
    with torch.no_grad():
        for i in range(0, n, 64) if sentinel else ():                         # no sentinel: nothing to weigh
            inp = caption_inputs(prepare_batch(ds.collate([ds[j] for j in range(i, min(i + 64, n))]), 'cpu'))
            av = net(**inp, return_trace=True)[-1]['alpha_v']                    # (B, T-1)
            live = inp['words'][:, 1:av.shape[1] + 1] != net.pad_id
            tot += av[live].sum().item(); cnt += live.sum().item()
    said = decode_split(net, cd, 'val', beam=1, limit=n, constrain=opts['constrain_verbs'],
                        complete=opts['complete'])                   # greedy, as validation decodes
    res[f'{m}/{d.name}'] = {'chosen': win.name, 'alpha_v': round(tot / cnt, 3) if sentinel else None,
                            'distinct': len({' '.join(p['tokens']) for p in said}), 'n': n,
                            'nll': nll}
    print(m, d.name, res[f'{m}/{d.name}'], flush=True)
out = {'run': str(run), 'what': 'mean attention on the visual sentinel over validation words (teacher forcing; None: no '
       'visual sentinel); distinct greedy captions over the n validation controls; teacher-forced word NLL '
       'under its own control, another caption\'s regions, another caption\'s fed words', 'rows': res}
if a.out: Path(a.out).parent.mkdir(parents=True, exist_ok=True); Path(a.out).write_text(json.dumps(out, indent=1))
