"SRL on real gold data (small slices) and a papermill smoke run of nbs/eval_srl.ipynb"
import json
from pathlib import Path
import pytest
from vsr_cic.core import shared_data_dir
from vsr_cic.srl import get_srl, load_lexicon, SRLError
from vsr_cic.srl_eval import read_up_conllu, read_propbank_examples, read_dataset_frames, evaluate

SD = shared_data_dir()
NB = Path(__file__).resolve().parent.parent/'nbs'/'eval_srl.ipynb'
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
    run_notebook(NB.name, tmp_path, out_dir=str(out), limit=40, world_dir=str(wdir))
    m = json.loads((out/'metrics.json').read_text())
    for name in ('world', 'up_ewt', 'propbank_examples'):
        assert KEYS <= set(m[name]), (name, m[name])
        assert 0 <= m[name]['f1'] <= 1
    assert m['config']['limit'] == 40
