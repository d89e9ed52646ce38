"""Where `<eos>` pays its gate: validation CIDEr-D and caption length of Table 1's `paper` captioners under each end rule
(`eos_gate`: 'free', the decoders' default, or 'paid', the official SCT / VSR joint (word, gate) beam) and length
normalisation (`vsr_cic.protocol.DECODING_MENU`), beam 5, on the corpus' validation captions under their annotated
controls (bench/real_models.py's models: a few XE epochs of the real-language corpus). Validation only: what chose
`TABLE1_DECODING['paper']['eos_gate']` and what the per-row menu chooses from.

Usage: python bench/eos_gate_val.py [--models c_lstm c_updn sct ours] [--limit 500] [--json PATH]
"""
from __future__ import annotations
import argparse, sys
from pathlib import Path
sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import table

def measure(models, limit:int=500)->list[dict]:
    import numpy as np, torch
    import real_models as rm
    from vsr_cic.pipeline import load_captioner
    from vsr_cic.captioning import caption_data, decode_split, TRAIN_UNGROUNDED
    from vsr_cic.cider import CiderD
    torch.set_num_threads(1)
    cd = caption_data(rm.corpus(), splits=('train', 'val'), min_freq=5, verb_one_word=True, ungrounded=TRAIN_UNGROUNDED)
    rows = []
    for name in models:
        net, voc, info = load_captioner(rm.trained(name))
        opts = info['options']
        for eos_gate in ('free', 'paid'):
            for ln in (0., 1.):
                preds = decode_split(net, cd, 'val', beam=5, constrain=opts['constrain_verbs'], complete=opts['complete'],
                                     limit=limit, eos_gate=eos_gate, length_norm=ln)
                hyps, refs = [' '.join(p['tokens']) for p in preds], [[' '.join(p['gt'])] for p in preds]
                cider = float(np.mean(CiderD(refs=refs).score(hyps, refs)))
                rows.append(dict(model=name, eos_gate=eos_gate, length_norm=ln, captions=len(preds), val_cider=round(cider, 4),
                                 mean_words=round(sum(len(p['tokens']) for p in preds) / len(preds), 2),
                                 one_word=round(sum(len(p['tokens']) <= 1 for p in preds) / len(preds), 3)))
                print(table('eos_gate on validation', rows[-1:]), flush=True)
    return rows

if __name__ == '__main__':
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--models', nargs='+', default=['c_lstm', 'c_updn', 'sct', 'ours'])
    ap.add_argument('--limit', type=int, default=500)
    ap.add_argument('--json', default=None)
    a = ap.parse_args()
    rows = measure(a.models, a.limit)
    print(table('Validation CIDEr-D by end rule and length normalisation (beam 5)', rows))
    if a.json:
        from common import dump, machine
        dump({'rows': rows, 'machine': machine(), 'command': ' '.join(sys.argv)}, a.json)
