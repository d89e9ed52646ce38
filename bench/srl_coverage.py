"""Predicate coverage of the default SRL backend on real captions: the share of captions without a verbal predicate.

    python bench/srl_coverage.py                   # all COCO val2017 captions and all Flickr30k (Multi30k) captions
    python bench/srl_coverage.py --flickr-n 20000  # a fixed sample of Flickr30k captions (every k-th one)

Columns: `no_predicate` (what the backend returns), `no_predicate_spacy_tags` (spaCy's tags alone, before the repair of
verbs the tagger read as nouns, `verbless_candidate`), `repaired_s` / `repaired_ing` (captions the repair gave a verb,
by the repaired word's form: *drinks* / *standing*), `repaired_participle` (*a clock [set] on …*). The paper reports 3.26 % of COCO captions without a predicate
for AllenNLP. Many COCO captions have no verb at all ("a kitchen with a stove"): those must stay without one.
"""
from __future__ import annotations
import argparse, gzip, json, os, sys, time
from pathlib import Path

def coco(sd)->list[str]:
    anns = json.loads((sd/'coco_captions'/'captions_val2017.json').read_text())['annotations']
    return [a['caption'].strip() for a in anns]

def flickr(sd, n:int|None)->list[str]:
    caps = []
    for f in sorted((sd/'flickr30k_captions'/'multi30k_task2_raw').glob('*.en.gz')):
        with gzip.open(f, 'rt', encoding='utf-8') as fh: caps += [l.strip() for l in fh if l.strip()]
    return caps if n is None or n >= len(caps) else caps[::max(1, len(caps) // n)][:n]

def coverage(srl, caps:list[str], chunk:int=5000)->dict:
    "Shares of captions without a predicate, with and without the repair of misread verbs"
    from tqdm.auto import tqdm
    from vsr_cic.srl_rules import is_predicate, verbless_candidate, _acl_participle
    none = raw_none = rep_s = rep_ing = rep_part = 0
    t0 = time.time()
    for i in tqdm(range(0, len(caps), chunk), desc='captions', unit_scale=chunk):
        part = caps[i:i + chunk]
        raw = list(srl.nlp.pipe(part, batch_size=512))
        raw_none += sum(not any(is_predicate(t) for t in d) for d in raw)
        parses = srl.parse_many(part)
        none += sum(not p.frames for p in parses)
        for d, p in zip(raw, parses):
            c = verbless_candidate(d, srl.lexicon)
            if c is not None and p.frames and not any(is_predicate(t) for t in d):
                if d[c[0]].lower_.endswith('ing'): rep_ing += 1
                elif _acl_participle(d[c[0]]): rep_part += 1
                else: rep_s += 1
    n = len(caps)
    return {'captions': n, 'no_predicate': round(none / n, 4), 'no_predicate_spacy_tags': round(raw_none / n, 4),
            'repaired_s': rep_s, 'repaired_ing': rep_ing, 'repaired_participle': rep_part, 'seconds': round(time.time() - t0, 1)}

def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument('--coco-n', type=int, default=None); ap.add_argument('--flickr-n', type=int, default=None)
    ap.add_argument('--out', default=None)
    a = ap.parse_args(argv)
    from vsr_cic.core import shared_data_dir
    from vsr_cic.srl import get_srl, DEFAULT_BACKEND
    sd = shared_data_dir()
    if sd is None: sys.exit('no shared data folder (COCO / Flickr30k captions) beside the checkout: nothing to measure')
    srl = get_srl()
    print(f'backend {DEFAULT_BACKEND}, load average {os.getloadavg()}', flush=True)
    out = {'backend': DEFAULT_BACKEND}
    for name, caps in (('coco_val2017', coco(sd)[:a.coco_n]), ('flickr30k', flickr(sd, a.flickr_n))):
        out[name] = coverage(srl, caps)
        print(name, out[name], flush=True)
    out['load_avg_after'] = os.getloadavg()
    if a.out: Path(a.out).write_text(json.dumps(out, indent=1))
    return out

if __name__ == '__main__': main()
