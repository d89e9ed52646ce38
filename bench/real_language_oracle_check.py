"""Why Table 1's oracle verb has a lower R_V than Ours on the photos: both decoded again with a real_captions run's
weights (`ours`, GSRL sets, beam 5) and compared caption by caption (verb recalled or not by the SRL of the caption).
Usage: python bench/real_language_oracle_check.py [run_dir]   (default runs/rl3; writes <run_dir>/oracle_check.json;
results/real_language_oracle_check.json is its copy for runs/rl3)"""
import json, sys, torch
from pathlib import Path
from vsr_cic.data import load_dataset
from vsr_cic.pipeline import Pipeline
from vsr_cic.photos import merge_identical_regions
from vsr_cic.decoding import SlotWordCap, slot_word_limit, slot_end_mask
from vsr_cic.tables import method_predictions
from vsr_cic.experiments import control_counts
torch.set_num_threads(1)
out = Path(sys.argv[1] if len(sys.argv) > 1 else 'runs/rl3'); data = load_dataset(out/'data'/'train'); test = merge_identical_regions(load_dataset(out/'photos'/'scene'))
p = Pipeline.from_dirs(out/'gsrl', out/'planner', out/'table1'/'ours'/'seed0', 'cpu', data_dir=out/'data'/'train')
p.captioner = SlotWordCap(p.captioner, slot_word_limit(data), slot_end_mask(data, p.vocabs['captioner'])); p.data = test
res = {}
for orc in (False, True):
    pr, _ = method_predictions(p, test, None, 'gsrl', 5, oracle=orc, no_repeat=True, no_unk=True)
    res[orc] = (pr, control_counts(pr, 'spacy'))
rows = []
for (a, ca), (b, cb) in zip(zip(*res[False]), zip(*res[True])):
    rows.append({'ours': a['caption'], 'oracle': b['caption'], 'gt': ' '.join(a['gt']), 'vsrs': a['vsrs'], 'v_ours': ca['v_hit'], 'v_orc': cb['v_hit'], 'v_total': ca['v_total'],
                 'len_ours': len(a['tokens']), 'len_orc': len(b['tokens'])})
lost = [r for r in rows if r['v_orc'] < r['v_ours']]; won = [r for r in rows if r['v_orc'] > r['v_ours']]
import numpy as np
summary = {'n': len(rows), 'R_V_ours': sum(r['v_ours'] for r in rows) / sum(r['v_total'] for r in rows),
           'R_V_oracle': sum(r['v_orc'] for r in rows) / sum(r['v_total'] for r in rows),
           'oracle_loses_verb': len(lost), 'oracle_gains_verb': len(won),
           'mean_len_ours': float(np.mean([r['len_ours'] for r in rows])), 'mean_len_oracle': float(np.mean([r['len_orc'] for r in rows]))}
json.dump({'summary': summary, 'lost': lost[:40], 'won': won[:20]}, open(out/'oracle_check.json', 'w'), indent=1)
print(json.dumps(summary)); [print(r['vsrs'], '| ours:', r['ours'], '| oracle:', r['oracle'], '| gt:', r['gt']) for r in lost[:12]]
