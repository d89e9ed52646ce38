"""The fast path (`vsr_cic.fast_captioner`, `make_captioner(..., precompute=True)`) against the reference step
(`RoleShiftCaptioner`): every captioner built on it, and the committed photo captioner (a `precompute=True` checkpoint)"""
from pathlib import Path
import torch
from vsr_cic.captioner import toy_controls, BOS_ID, EOS_ID, PAD_ID
from vsr_cic.fast_captioner import FastStep
from vsr_cic.baselines import make_captioner, CAPTIONERS
from vsr_cic.decoding import greedy_decode, beam_search

PHOTO = Path(__file__).parents[1]/'vsr_cic'/'assets'/'photo_models'/'captioner'

def _agree(ref, fast, words, slots, ctl, max_len=8):
    "Teacher-forced log-probs at every position, greedy and beam captions (eval mode, no gradient)"
    ref.eval(); fast.eval()
    with torch.no_grad():
        (wa, ga), (wb, gb) = ref(words, slots, **ctl), fast(words, slots, **ctl)
        torch.testing.assert_close(wa, wb, rtol=1e-5, atol=1e-5)
        torch.testing.assert_close(ga.clamp(min=-1e4), gb.clamp(min=-1e4), rtol=1e-5, atol=1e-5)
        for dec in (greedy_decode, beam_search):
            da, db = dec(ref, max_len=max_len, **ctl), dec(fast, max_len=max_len, **ctl)
            assert torch.equal(da.words, db.words) and torch.equal(da.slots, db.slots), dec.__name__
            torch.testing.assert_close(da.score, db.score, rtol=1e-5, atol=1e-5)

def _batch(D, seed=0):
    ctl = toy_controls(B=3, K=4, D=D, seed=seed)
    words = torch.tensor([[BOS_ID, 5, 6, 7, 8, EOS_ID], [BOS_ID, 9, 10, EOS_ID, PAD_ID, PAD_ID], [BOS_ID, 5, 5, 6, 7, EOS_ID]])
    slots = torch.tensor([[0, 0, 1, 2, 3, 3], [0, 0, 1, 2, 2, 2], [0, 1, 1, 2, 3, 3]])
    return words, slots, ctl

def test_every_captioner_agrees_with_precompute():
    "make_captioner(name, precompute=True) == precompute=False for every captioner (C-LSTM has no fast path)"
    torch.set_num_threads(1)
    V, D = 11, 8
    words, slots, ctl = _batch(D, seed=2)
    for name in CAPTIONERS:
        cfg = dict(hidden=16, emb=8, att=8, dropout=0., verb_shift='one_word')
        torch.manual_seed(0)
        ref, fast = make_captioner(name, V, D, **cfg), make_captioner(name, V, D, precompute=True, **cfg)
        assert not isinstance(ref, FastStep) and isinstance(fast, type(ref)), name
        assert isinstance(fast, FastStep) == (name != 'c_lstm'), name
        assert list(fast.state_dict()) == list(ref.state_dict()), name         # checkpoints load either way
        fast.load_state_dict(ref.state_dict())
        _agree(ref, fast, words, slots, ctl)

def test_committed_photo_captioner_fast_equals_reference():
    "The committed photo captioner (trained with precompute=True) loads as before, and its reference twin agrees"
    from vsr_cic.pipeline import load_captioner
    torch.set_num_threads(1)
    fast, vocabs, info = load_captioner(PHOTO)
    assert info['config'].get('precompute') and isinstance(fast, FastStep)
    cfg = {k: v for k, v in info['config'].items() if k != 'precompute'}
    ref = make_captioner(info['name'], info['vocab_size'], info['feat_dim'], **cfg)
    assert not isinstance(ref, FastStep)
    ref.load_state_dict(fast.state_dict())                                      # same keys, strict
    words, slots, ctl = _batch(info['feat_dim'])
    words = words + 10 * (words > EOS_ID)                                       # real words of its vocabulary
    _agree(ref, fast, words, slots, ctl, max_len=12)
