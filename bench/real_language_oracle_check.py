"""Why Table 1's oracle verb can recall fewer verbs (R_V) than Ours: the two rows of a finished real_captions run,
caption by caption, read from the run's own Table 1 predictions (`table1_predictions.json`: decoded under the
protocol, `vsr_cic.protocol.TABLE1_DECODING` of the row's preset, nothing decoded again). For each caption: the verb
hits of each row by the SRL of the caption (`vsr_cic.scoring.control_counts`), lengths, and the reference.

The built-in world's Table 1 is read the same way: RUN_DIR is then an `evaluate.ipynb` out_dir (e.g.
runs/world_full/evaluate), whose table1_predictions.json holds {row/grounding: predictions} of one seed and preset.

Usage: python bench/real_language_oracle_check.py RUN_DIR [--seed 0] [--preset paper] [--test-set photos]
       [--grounding gsrl] [--out FILE]
writes RUN_DIR/oracle_check.json (and FILE when given, e.g. results/bench/<date>-real_language_oracle_check.json)."""
import argparse, json, sys
from pathlib import Path

ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
ap.add_argument('run_dir', help='a finished real_captions run folder, or an evaluate.ipynb out_dir (with table1_predictions.json)')
ap.add_argument('--seed', type=int, default=0)
ap.add_argument('--preset', default='paper')
ap.add_argument('--test-set', default='photos')
ap.add_argument('--grounding', default='gsrl', choices=['gsrl', 'gt'])
ap.add_argument('--out', default=None, help='also write the result here')
a = ap.parse_args()
run = Path(a.run_dir)
f = run/'table1_predictions.json'
if not f.is_file(): sys.exit(f"{run}: not a finished real_captions run or evaluate out_dir (no table1_predictions.json)")

from vsr_cic.scoring import control_counts

recs = json.loads(f.read_text())
world = isinstance(recs, dict)   # an evaluate.ipynb out_dir: {row/grounding: predictions}
def row(method):
    if world:
        if f'{method}/{a.grounding}' not in recs: sys.exit(f"{f}: no {method}/{a.grounding} (has {sorted(recs)})")
        return recs[f'{method}/{a.grounding}']
    hit = [r for r in recs if r['method'] == method and r.get('seed') == a.seed and r.get('preset') == a.preset
           and r['test_set'] == a.test_set and r['grounding'] == a.grounding]
    if len(hit) != 1: sys.exit(f"{f}: {len(hit)} records of {method} seed {a.seed} {a.preset} {a.test_set} {a.grounding} (want 1)")
    return hit[0]['predictions']

ours, orc = row('ours'), row('ours_oracle_verb')
if [p['caption_id'] for p in ours] != [p['caption_id'] for p in orc]: sys.exit("the two rows caption different references")
c_ours, c_orc = control_counts(ours, 'spacy'), control_counts(orc, 'spacy')
rows = [{'vsrs': p.get('vsrs', p.get('controls')), 'ours': p['caption'], 'oracle': q['caption'], 'gt': ' '.join(p['gt']),
         'v_ours': co['v_hit'], 'v_orc': cq['v_hit'], 'v_total': co['v_total'], 'len_ours': len(p['tokens']),
         'len_orc': len(q['tokens']), 'oracle_says_gt_verb': any(w in q['tokens'] for w in p['gt'])}
        for p, q, co, cq in zip(ours, orc, c_ours, c_orc)]
lost = [r for r in rows if r['v_orc'] < r['v_ours']]
won = [r for r in rows if r['v_orc'] > r['v_ours']]
tot = sum(r['v_total'] for r in rows)
mean = lambda k: sum(r[k] for r in rows) / len(rows)
summary = {'run': str(run), **({'test_set': 'world test split'} if world else
                                  {'seed': a.seed, 'preset': a.preset, 'test_set': a.test_set}), 'grounding': a.grounding,
           'n': len(rows), 'R_V_ours': sum(r['v_ours'] for r in rows) / tot, 'R_V_oracle': sum(r['v_orc'] for r in rows) / tot,
           'oracle_loses_verb': len(lost), 'oracle_gains_verb': len(won),
           'mean_len_ours': mean('len_ours'), 'mean_len_oracle': mean('len_orc')}
res = {'summary': summary, 'lost': lost[:40], 'won': won[:20]}
(run/'oracle_check.json').write_text(json.dumps(res, indent=1))
if a.out: Path(a.out).parent.mkdir(parents=True, exist_ok=True); Path(a.out).write_text(json.dumps(res, indent=1))
print(json.dumps(summary))
for r in lost[:12]: print(r['vsrs'], '| ours:', r['ours'], '| oracle:', r['oracle'], '| gt:', r['gt'])
