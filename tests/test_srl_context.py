"The contextual SRL labeller: a tiny fresh run of nbs/train_srl.ipynb (the committed recipe) against the packaged weights"
import json
from pathlib import Path
import pytest
from vsr_cic.core import shared_data_dir

SD = shared_data_dir()
NB = Path(__file__).resolve().parent.parent/'nbs'/'train_srl.ipynb'
needs_data = pytest.mark.skipif(SD is None, reason="shared data folder not found: set VSR_CIC_SHARED to the shared/data folder")

# plain captions whose frames every reasonable labeller trained on the recipe's data gives alike
CAPTIONS = ['a man riding a horse on a beach', 'a woman standing next to a fence', 'a dog catching a frisbee in a park',
            'two people walking down the street', 'a boy throwing a ball to his dog', 'a man is holding an umbrella']

@needs_data
def test_tiny_fresh_run_agrees_with_packaged(tmp_path):
    pm = pytest.importorskip('papermill')
    from vsr_cic.srl import get_srl
    from vsr_cic.srl_context import ContextSRL, ContextLabeller
    pb = tmp_path/'pb.jsonl'
    with open(SD/'srl_gold'/'propbank_frames_examples.jsonl') as f, open(pb, 'w') as g:
        for k, line in zip(range(4000), f): g.write(line)
    out = tmp_path/'w.npz'
    pm.execute_notebook(str(NB), str(tmp_path/'run.ipynb'), kernel_name='python3', progress_bar=False,
                        parameters=dict(out=str(out), silver=400, world_captions=400, epochs=3, hidden=32,
                                        examples=str(pb), score_limit=0))
    fresh = ContextSRL(model=out, n_process=1)
    assert isinstance(fresh.model, ContextLabeller) and fresh.model.W1.shape[1] == 32
    shipped = get_srl('context', n_process=1)
    a = [str(p) for p in fresh.parse_many(CAPTIONS)]
    b = [str(p) for p in shipped.parse_many(CAPTIONS)]
    same = sum(x == y for x, y in zip(a, b))
    assert same >= len(CAPTIONS) - 1, list(zip(a, b))

def test_bad_dense_input_named():
    np = pytest.importorskip('numpy')
    from vsr_cic.srl_context import ContextLabeller, DENSE
    from vsr_cic.srl import SRLError
    m = ContextLabeller(['bias'], ['NONE', 'ARG0'], np.zeros((1, 2)), np.zeros(2), np.zeros((DENSE, 4)), np.zeros(4),
                        np.zeros((4, 2)))
    with pytest.raises(SRLError, match=r'dense vectors of shape \(3, 5\)'): m.logits([['bias']] * 3, np.zeros((3, 5)))
    with pytest.raises(SRLError, match='MLP shapes'): ContextLabeller(['bias'], ['NONE'], np.zeros((1, 1)), np.zeros(1),
                                                                      np.zeros((DENSE, 4)), np.zeros(4), np.zeros((4, 2)))
