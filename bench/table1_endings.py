"""Where captions end: the share of test captions that reach the decoding cap (never say `<eos>`), per method and decoder,
and what one XE and one self-critical epoch of Table 1's Ours cost.

The models are bench/real_models.py's (the real-language corpus, a few XE epochs each: Table 1's `paper` rows with the
sweep's `fast` setting, and the `ours`-preset captioner). Each decodes the corpus test split under its annotated
controls, greedy and beam 5, as Table 1 decodes its row (`paper`: the preset's end rule and verb slots; the `ours`
preset: `SlotWordCap` with its open-phrase rule, `no_repeat`, `no_unk`), with the decoding cap of `caption_cap` (99 %
of the training captions fit). `--epochs-cost`: Ours (`paper`) trained from scratch one XE and one self-critical epoch by
`train_captioner` on the same corpus, with the options the runs use (stage seconds from its metrics.json).

Usage: python bench/table1_endings.py [--models c_lstm c_updn sct ours ours_preset] [--limit 1000] [--epochs-cost] [--json PATH]
"""
from __future__ import annotations
import argparse, json, shutil, sys, time
from pathlib import Path
sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import table

def endings(models, limit:int|None=1000)->list[dict]:
    import torch
    import real_models as rm
    from vsr_cic.pipeline import load_captioner
    from vsr_cic.captioning import caption_data, decode_split, TRAIN_UNGROUNDED
    from vsr_cic.decoding import SlotWordCap, slot_word_limit, slot_end_mask
    torch.set_num_threads(1)
    cd = caption_data(rm.corpus(), splits=('train', 'test'), min_freq=5, verb_one_word=True, ungrounded=TRAIN_UNGROUNDED)
    rows = []
    for name in models:
        net, voc, info = load_captioner(rm.trained(name))
        opts, preset = info['options'], info.get('preset') or 'paper'
        dec = SlotWordCap(net, slot_word_limit(cd.data), slot_end_mask(cd.data, cd.vocab['words'])) if preset == 'ours' else net
        for beam in (1, 5):
            t = time.time()
            preds = decode_split(dec, cd, 'test', beam=beam, batch_size=64, constrain=opts['constrain_verbs'],
                                 complete=opts['complete'], limit=limit)
            n = len(preds)
            rows.append(dict(model=name, preset=preset, decoder='greedy' if beam == 1 else f'beam {beam}', captions=n,
                             hit_cap=sum(not p['ended'] for p in preds) / n, mean_words=sum(len(p['tokens']) for p in preds) / n,
                             cap=cd.max_len, seconds=round(time.time() - t, 1)))
            print(table('endings', rows[-1:]), flush=True)
    return rows

def epoch_costs(name:str='ours')->dict:
    "One XE and one self-critical epoch of `name`, on the corpus, with the options the runs use: stage seconds"
    import real_models as rm
    from vsr_cic.captioning import train_captioner
    from vsr_cic.protocol import PRESET_TRAINING
    model, preset, extra = rm.MODELS[name]
    out = rm.HOME/f'{name}_epoch_costs_v{rm.VERSION}'
    shutil.rmtree(out, ignore_errors=True)
    m = train_captioner(data_dir=str(rm.corpus()), out_dir=str(out), model=model, preset=preset, epochs_xe=1, epochs_rl=1,
                        batch_size=64, lr_decay=0.8, hidden=128, min_freq=5, beam=1, bucket=True, precompute=True, seed=0,
                        threads=1, progress=False, metrics=False, control=False, test_split='val',
                        **PRESET_TRAINING[preset], **extra)
    s = m['stage_seconds']
    return {'model': name, 'preset': preset, 'xe_epoch_s': s['xe'], 'rl_epoch_s': s['rl'], 'rl_over_xe': s['rl'] / s['xe']}

if __name__ == '__main__':
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--models', nargs='+', default=['c_lstm', 'c_updn', 'sct', 'ours', 'ours_preset'])
    ap.add_argument('--limit', type=int, default=1000, help='the first N test captions (0: all)')
    ap.add_argument('--epochs-cost', action='store_true')
    ap.add_argument('--json', default=None)
    a = ap.parse_args()
    res = {'endings': endings(a.models, a.limit or None)}
    print(table('Test captions that reach the decoding cap', res['endings']))
    if a.epochs_cost:
        res['epoch_costs'] = epoch_costs()
        print(table('One epoch of each stage (stage seconds, validation decoding included)', [res['epoch_costs']]))
    if a.json:
        from common import dump, machine
        dump({**res, 'machine': machine(), 'command': ' '.join(sys.argv)}, a.json)
