"Every captioner (ours and the baselines) on real 'caption' batches of the loader: loss, gradients, decoding"
import pytest, torch
from vsr_cic.captioner import caption_inputs, gate_targets
from vsr_cic.baselines import CAPTIONERS, make_captioner
from vsr_cic.decoding import greedy_decode, beam_search, sample_decode, scst_loss
from vsr_cic.loader import GATE_PAD, make_loader, make_toy_dataset, densify

TINY = dict(hidden=16, emb=8, att=8, dropout=0.)


@pytest.fixture(scope='module')
def batch(tmp_path_factory):
    path = make_toy_dataset(tmp_path_factory.mktemp('toy')/'toy')
    dl = make_loader(path, task='caption', split='train', batch_size=4, shuffle=False)
    return densify(next(iter(dl))), len(dl.dataset.vocab['words'])


def test_gate_targets_match_loader(batch):
    b, _ = batch
    ours, theirs = gate_targets(b['slot_idx']), b['gate']
    keep = theirs != GATE_PAD
    assert keep.any() and torch.equal(ours[keep], theirs[keep])


@pytest.mark.parametrize('name', list(CAPTIONERS))
def test_captioner_on_loader_batch(batch, name):
    b, V = batch
    torch.manual_seed(0)
    m = make_captioner(name, V, b['regions'].shape[-1], **TINY)
    out = m.loss(**caption_inputs(b))
    out['loss'].backward()
    assert torch.isfinite(out['loss']) and all(p.grad is None or torch.isfinite(p.grad).all() for p in m.parameters())
    wl, gl = m(**caption_inputs(b))
    B, T = b['words'].shape
    assert wl.shape == (B, T - 1, V) and gl.shape == (B, T - 1, 2)
    ctl = caption_inputs(b, with_caption=False)
    s = sample_decode(m, max_len=T, **ctl)
    loss = scst_loss(s.word_logp, s.gate_logp, s.mask, torch.rand(B), torch.rand(B))
    loss.backward()
    m.eval()
    g, b1, b3 = greedy_decode(m, max_len=T, **ctl), beam_search(m, beam_size=1, max_len=T, **ctl), beam_search(m, beam_size=3, max_len=T, **ctl)
    assert torch.equal(g.words, b1.words)
    assert (g.slots < b['n_slots'][:, None]).all() and (b3.slots < b['n_slots'][:, None]).all()


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")
@pytest.mark.parametrize('name', list(CAPTIONERS))
def test_captioner_on_cuda(batch, name):
    "Device-agnostic: everything the models and decoders create lands on the inputs' device"
    b, V = batch
    dev = torch.device('cuda')
    inp = {k: v.to(dev) for k, v in caption_inputs(b).items()}
    m = make_captioner(name, V, inp['regions'].shape[-1], **TINY).to(dev)
    m.loss(**inp)['loss'].backward()
    ctl = {k: v for k, v in inp.items() if k not in ('words', 'slot_idx')}
    T = inp['words'].shape[1]
    s = sample_decode(m, n=2, max_len=T, **ctl)
    scst_loss(s.word_logp, s.gate_logp, s.mask, torch.rand(len(s.score), device=dev), torch.rand(len(s.score), device=dev)).backward()
    m.eval()
    g, bs = greedy_decode(m, max_len=T, **ctl), beam_search(m, beam_size=3, max_len=T, **ctl)
    assert g.words.device.type == bs.words.device.type == 'cuda'
    assert torch.equal(g.words.cpu(), beam_search(m, beam_size=1, max_len=T, **ctl).words.cpu())
