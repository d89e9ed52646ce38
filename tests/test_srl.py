"SRL on real gold data (small slices) and a papermill smoke run of nbs/experiments/eval_srl.ipynb"
import json, os, subprocess, sys
from pathlib import Path
import pytest
from vsr_cic.core import shared_data_dir
from vsr_cic.srl import get_srl, load_lexicon, format_frame, SRLError
from vsr_cic.srl_eval import read_up_conllu, read_propbank_examples, read_captions_srl, read_dataset_frames, evaluate

SD = shared_data_dir()
NB = Path(__file__).resolve().parent.parent/'nbs'/'experiments'/'eval_srl.ipynb'
needs_data = pytest.mark.skipif(SD is None, reason="shared data folder not found: set VSR_CIC_SHARED to the shared/data folder")
KEYS = {'precision', 'recall', 'f1', 'predicate_f1'}

@pytest.fixture(scope='module')
def srl(): return get_srl('spacy')

@needs_data
def test_up_ewt_slice(srl):
    items = read_up_conllu(SD/'srl_gold'/'en_ewt-up-dev.conllu', limit=150)
    assert len(items) == 150 and sum(len(it['preds']) for it in items) > 100
    sc = evaluate(srl, items)
    assert KEYS <= set(sc) and sc['f1'] > 0.5 and sc['predicate_f1'] > 0.85, sc

@needs_data
def test_propbank_examples_slice(srl):
    items = read_propbank_examples(SD/'srl_gold'/'propbank_frames_examples.jsonl', load_lexicon(), limit=300)
    assert len(items) == 300 and all(len(it['preds']) == 1 for it in items)
    sc = evaluate(srl, items)
    assert sc['f1'] > 0.4 and sc['predicate_precision'] == 1.0, sc   # only the annotated predicate is judged

def test_world_slice(srl, tmp_path):
    world = pytest.importorskip('vsr_cic.world')
    items = read_dataset_frames(world.ensure_world(tmp_path, n_images=40, render=False))
    sc = evaluate(srl, items)
    assert sc['f1'] > 0.9 and sc['predicate_f1'] > 0.95, sc

def test_gold_backend_round_trip(tmp_path):
    world = pytest.importorskip('vsr_cic.world')
    path = world.ensure_world(tmp_path, n_images=10, render=False)
    gold = get_srl('gold', captions=path)
    sc = evaluate(gold, read_dataset_frames(path))
    assert sc['f1'] == 1.0 and sc['predicate_f1'] == 1.0

def test_bad_conllu(tmp_path):
    p = tmp_path/'bad.conllu'
    row = lambda *c: '\t'.join(c) + '\n'
    p.write_text('# sent_id = s1\n' + row('1', 'He', 'he', 'PRON', 'PRP', '_', '2', 'nsubj', '_', '_', '_', 'ARG0', '_')
                 + row('2', 'runs', 'run', 'VERB', 'VBZ', '_', '0', 'root', '_', '_', 'run.01', 'V', '_') + '\n')
    with pytest.raises(SRLError, match="sentence 's1' has 1 predicates but 2 argument columns"): read_up_conllu(p)
    p.write_text('# sent_id = s2\n' + row('1', 'He', 'he', 'PRON', 'PRP', '_', '2', 'nsubj', '_', '_', '_', 'ARG0')
                 + row('2', 'runs', 'run', 'VERB', 'VBZ', '_', '0', 'root', '_', '_', 'run.01', 'V', '_') + '\n')
    with pytest.raises(SRLError, match="sentence 's2' has rows with"): read_up_conllu(p)

@needs_data
def test_eval_notebook_smoke(tmp_path):
    world = pytest.importorskip('vsr_cic.world')
    wdir = world.ensure_world(tmp_path/'data', n_images=10, render=False)
    out = tmp_path/'run'
    from conftest import run_notebook
    run_notebook(f'experiments/{NB.name}', tmp_path, out_dir=str(out), limit=40, world_dir=str(wdir))
    m = json.loads((out/'metrics.json').read_text())
    for name in ('world', 'up_ewt', 'propbank_examples', 'captions_dev'):
        assert KEYS <= set(m[name]), (name, m[name])
        assert 0 <= m[name]['f1'] <= 1
    assert m['config']['limit'] == 40 and m['captions_dev']['sentences'] == 40
    assert set(m['backends']) >= {'learned', 'spacy'} and m['default_backend'] in m['backends']
    assert m['captions_confusion'] and all(' -> ' in k for k in m['captions_confusion'])
    assert set(m['captions_per_cpu_s']) == set(m['backends']) and all(v > 0 for v in m['captions_per_cpu_s'].values())

SAME_EVERYWHERE = ['two dogs are sitting on a couch', 'a woman standing next to a fence', 'a car parked on the street',
                   'a dog looking at the camera', 'two people picking up a frisbee', 'people waiting for a bus',
                   'a man feeds a horse in a field', 'a kite flying over the beach']

def _labels(srl):
    return [[(str(f.roleset), f.verb, repr(p.tokens), format_frame(p.tokens, f)) for f in p.frames]
            for p in srl.parse_many(SAME_EVERYWHERE)]

def test_same_labels_without_shared_data(tmp_path):
    "The default backend reads only what ships in the package: hiding the shared data folder changes no label"
    code = ("import json, vsr_cic.core as core\n"
            "core.shared_data_dir = lambda: None\n"          # every consumer finds its data through this function
            "from vsr_cic.srl import get_srl, load_lexicon, format_frame\n"
            f"items = {SAME_EVERYWHERE!r}\n"
            "srl = get_srl()\n"
            "out = [[(str(f.roleset), f.verb, repr(p.tokens), format_frame(p.tokens, f)) for f in p.frames] for p in srl.parse_many(items)]\n"
            "print(json.dumps({'shared': core.shared_data_dir(), 'lexicon': len(load_lexicon()), 'labels': out}))")
    env = {k: v for k, v in os.environ.items() if k != 'VSR_CIC_SHARED'}
    r = subprocess.run([sys.executable, '-c', code], cwd=tmp_path, env=env, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    hidden = json.loads(r.stdout.strip().splitlines()[-1])
    assert hidden['shared'] is None and hidden['lexicon'] > 8000
    here = [[list(x) for x in fr] for fr in _labels(get_srl())]
    assert hidden['labels'] == here
    assert all(hidden['labels']), hidden['labels']   # every caption has a frame

def test_lexicon_ships_in_package():
    from vsr_cic.srl import asset_path, PACKAGED_LEXICON
    p = asset_path(PACKAGED_LEXICON)
    assert p.exists() and p.parent.name == 'assets' and p.parent.parent.name == 'vsr_cic'
    assert (p.parent/'NOTICE.md').read_text().count('CC BY-SA 4.0') >= 1
    assert load_lexicon().roles('stand.01')['ARG2'] == 'location'
    setup = (Path(__file__).resolve().parent.parent/'setup.py').read_text()
    assert "'assets/*'" in setup   # package_data: `pip install` copies the assets

@needs_data
def test_captions_reader_and_heldout_split():
    items = read_captions_srl(SD/'srl_gold'/'captions_dev_srl.jsonl')
    assert len(items) == 240 and sum(len(it['preds']) for it in items) == 260        # counts of the data README
    assert sum(len(g['args']) for it in items for g in it['preds'].values()) == 623
    lex = load_lexicon()
    pb = SD/'srl_gold'/'propbank_frames_examples.jsonl'
    tr, ho = read_propbank_examples(pb, lex, split='train', limit=2000), read_propbank_examples(pb, lex, split='heldout', limit=500)
    assert not {(it['id'], ' '.join(it['tokens'])) for it in tr} & {(it['id'], ' '.join(it['tokens'])) for it in ho}
    from vsr_cic.srl_eval import example_split
    share = sum(example_split({'roleset': 'x.01', 'example_name': str(i), 'text': 't'}) == 'heldout' for i in range(2000)) / 2000
    assert 0.15 < share < 0.25, share
    with pytest.raises(SRLError, match="split must be one of"): read_propbank_examples(pb, lex, split='test')
