"Our metric wrappers against pycocoevalcap on real COCO val2017 captions (shared data + Java)"
import json, random
import numpy as np
import pytest
from vsr_cic.metrics import evaluate_captions, ptb_tokenize, java_available
from vsr_cic.cider import CiderD, pycoco_cider, df_as_ngram_dict, human_agreement_split

N_IMAGES = 500   # real images for the CIDEr-D agreement check
N_EVAL = 150     # real images for the evaluate_captions bookkeeping checks

@pytest.fixture(scope='module')
def coco(shared_data):
    if not java_available(): pytest.skip("Java not found: the PTB tokenizer and METEOR need a JRE (apt-get install -y default-jre-headless)")
    p = shared_data/'coco_captions'/'captions_val2017.json'
    if not p.exists(): pytest.skip(f"{p} not found: set VSR_CIC_SHARED to the shared data folder")
    by = {}
    for a in json.loads(p.read_text())['annotations']: by.setdefault(a['image_id'], []).append(a['caption'])
    return by

@pytest.fixture(scope='module')
def tokenized(coco):
    "PTB-tokenised leave-one-out split of the first N_IMAGES images: ({id: [cand]}, {id: [refs]})"
    res, gts = human_agreement_split([{'image_id': k, 'caption': c} for k in sorted(coco)[:N_IMAGES] for c in coco[k]])
    ids = sorted(res)
    flat = ptb_tokenize([res[k][0] for k in ids] + [c for k in ids for c in gts[k]])
    tres = {k: [flat[i]] for i, k in enumerate(ids)}; p = len(ids); tgts = {}
    for k in ids: tgts[k] = flat[p:p + len(gts[k])]; p += len(gts[k])
    return tres, tgts

def test_fast_cider_equals_pycoco_corpus_mode(tokenized):
    res, gts = tokenized
    m_ref, s_ref = pycoco_cider(gts, res)
    m, s = CiderD().compute_score(gts, res)
    assert len(s) == len(res) == N_IMAGES
    assert np.abs(s - s_ref).max() < 1e-6 and abs(m - m_ref) < 1e-6

def test_fast_cider_equals_pycoco_cached_df(tokenized):
    "df cached from one half of the images, scores on the other half, pycocoevalcap given the same df and N"
    res, gts = tokenized; ids = sorted(res)
    train, test = ids[:N_IMAGES // 2], ids[N_IMAGES // 2:]
    c = CiderD([gts[k] + res[k] for k in train])
    g, r = {k: gts[k] for k in test}, {k: res[k] for k in test}
    _, s = c.compute_score(g, r)
    _, s_ref = pycoco_cider(g, r, df=df_as_ngram_dict(c), n_docs=len(train))
    assert np.abs(s - s_ref).max() < 1e-6

def test_fast_cider_on_token_ids(tokenized):
    res, gts = tokenized; ids = sorted(res)
    vocab = {}
    enc = lambda s: [vocab.setdefault(w, len(vocab) + 1) for w in s.split()]
    cw = CiderD([gts[k] for k in ids]); ci = CiderD([[enc(x) for x in gts[k]] for k in ids])
    sw = cw.score([res[k][0] for k in ids], [gts[k] for k in ids])
    si = ci.score([enc(res[k][0]) for k in ids], [[enc(x) for x in gts[k]] for k in ids])
    assert np.abs(sw - si).max() < 1e-9

def _pycoco_direct(gts, res, metric):
    from pycocoevalcap.bleu.bleu import Bleu
    from vsr_cic.metrics import meteor_scorer   # one shared METEOR process (its start takes up to a minute)
    from pycocoevalcap.rouge.rouge import Rouge
    from pycocoevalcap.cider.cider import Cider
    sc = {'BLEU': Bleu(4), 'METEOR': meteor_scorer(), 'ROUGE-L': Rouge(), 'CIDEr-D': Cider()}[metric]
    return sc.compute_score(gts, res, verbose=0) if metric == 'BLEU' else sc.compute_score(gts, res)

@pytest.mark.parametrize('multi', [False, True], ids=['single-ref', 'multi-ref'])
def test_evaluate_captions_matches_pycoco(coco, multi):
    "Same corpus and per-image scores as calling pycocoevalcap directly, with ids shuffled and of mixed types"
    ids = sorted(coco)[:N_EVAL]
    keys = {k: (str(k) if i % 2 else k) for i, k in enumerate(ids)}      # mixed int / str ids
    order = ids[:]; random.Random(0).shuffle(order)
    preds = {keys[k]: coco[k][0] for k in order}
    refs = {keys[k]: (coco[k][1:] if multi else coco[k][1]) for k in reversed(order)}   # another key order
    ours = evaluate_captions(preds, refs, metrics=['BLEU', 'METEOR', 'ROUGE-L', 'CIDEr-D'], per_image=True)
    flat = ptb_tokenize([coco[k][0] for k in ids] + [c for k in ids for c in (coco[k][1:] if multi else coco[k][1:2])])
    res = {k: [flat[i]] for i, k in enumerate(ids)}; gts = {}; p = len(ids)
    for k in ids:
        n = len(coco[k]) - 1 if multi else 1
        gts[k] = flat[p:p + n]; p += n
    for metric in ('BLEU', 'METEOR', 'ROUGE-L', 'CIDEr-D'):
        m, s = _pycoco_direct(gts, res, metric)
        if metric == 'BLEU':
            assert ours['BLEU-4'] == pytest.approx(m[3], abs=1e-9)
            per = {k: s[3][i] for i, k in enumerate(ids)}; name = 'BLEU-4'
        else:
            assert ours[metric] == pytest.approx(m, abs=1e-6), metric
            per = {k: s[i] for i, k in enumerate(ids)}; name = metric
        for k in ids: assert ours['per_image'][name][keys[k]] == pytest.approx(per[k], abs=1e-6), (metric, k)

def test_evaluate_captions_single_ref_string_equals_one_element_list(coco):
    ids = sorted(coco)[:20]
    a = evaluate_captions({k: coco[k][0] for k in ids}, {k: coco[k][1] for k in ids}, metrics=['BLEU', 'CIDEr-D'])
    b = evaluate_captions({k: coco[k][0] for k in ids}, {k: [coco[k][1]] for k in ids}, metrics=['BLEU', 'CIDEr-D'])
    assert a == b

def test_spice_never_downloads(coco):
    from vsr_cic.metrics import spice_missing
    if not spice_missing(): pytest.skip("Stanford CoreNLP jars present: SPICE would run")
    with pytest.warns(UserWarning, match='stanford-corenlp-3.6.0'):
        import vsr_cic.metrics as M; M._warned.discard('spice')
        r = evaluate_captions({1: 'a man'}, {1: 'a man'}, metrics=['SPICE'], tokenizer=None)
    assert r == {'SPICE': None}

def test_controllability_on_real_captions(coco):
    "spaCy SRL on real captions: a caption against its own controls recalls everything; another image's caption does not"
    pytest.importorskip('spacy')
    from vsr_cic.srl import get_srl
    from vsr_cic.control import controllability, controls_from_parse, noun_phrase_spans
    ids = sorted(coco)[:120]
    parses = get_srl('spacy').parse_many([coco[k][0] for k in ids])
    ents = noun_phrase_spans(parses)
    keep = [i for i, p in enumerate(parses) if p.frames]
    assert len(keep) > len(ids) // 2
    ctrl = [controls_from_parse(parses[i], ents[i]) for i in keep]
    own = controllability([parses[i] for i in keep], ctrl, [ents[i] for i in keep])
    assert (own['R_V'], own['R_SR1'], own['R_SR2']) == (1.0, 1.0, 1.0)
    other = [keep[(j + 1) % len(keep)] for j in range(len(keep))]      # each control against the next image's caption
    cross = controllability([parses[i] for i in other], ctrl, [ents[i] for i in other])
    assert max(cross['R_V'], cross['R_SR1'], cross['R_SR2']) < 0.2, cross   # measured ~0.02 on 300 images

def test_best_of_k_on_real_captions(coco):
    "Best-of-3 human captions against a 4th: per-image-mean metrics are at least each slot's score"
    from vsr_cic.diversity import best_of_k
    ids = sorted(coco)[:60]
    sets, refs = {k: coco[k][:3] for k in ids}, {k: coco[k][4] for k in ids}
    best = best_of_k(sets, refs, metrics=['ROUGE-L', 'CIDEr-D'])
    for j in range(3):
        one = evaluate_captions({k: sets[k][j] for k in ids}, refs, metrics=['ROUGE-L', 'CIDEr-D'])
        assert best['ROUGE-L'] >= one['ROUGE-L'] - 1e-12 and best['CIDEr-D'] >= one['CIDEr-D'] - 1e-12
