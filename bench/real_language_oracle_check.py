"""Why Table 1's oracle verb has a lower R_V than Ours on the photos: both decoded again with a real_captions run's
weights (`ours`, GSRL sets, beam 5) and compared caption by caption (verb recalled or not by the SRL of the caption).
Usage: python bench/real_language_oracle_check.py RUN_DIR   (a finished `nbs/experiments/real_captions.ipynb` run folder;
writes RUN_DIR/oracle_check.json; results/real_language_oracle_check.json is its copy for the run of 2026-11-27, `runs/rl3`)"""
import argparse, json, sys
from pathlib import Path
ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
ap.add_argument('run_dir', help='a finished real_captions run folder (data/, photos/, gsrl/, planner/, table1/)')
out = Path(ap.parse_args().run_dir)
if not (out/'table1'/'ours'/'seed0').is_dir(): sys.exit(f"{out}: not a finished real_captions run (no table1/ours/seed0)")
from vsr_cic.data import load_dataset
from vsr_cic.pipeline import Pipeline
from vsr_cic.photos import merge_identical_regions
from vsr_cic.decoding import SlotWordCap, slot_word_limit, slot_end_mask
from vsr_cic.tables import method_predictions
from vsr_cic.scoring import control_counts
import torch
torch.set_num_threads(1)
data = load_dataset(out/'data'/'train'); test = merge_identical_regions(load_dataset(out/'photos'/'scene'))
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
