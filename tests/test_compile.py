"`compile_step`: the captured decoder step agrees with the eager one (losses, gradients, greedy and beam captions)"
import copy
import pytest, torch
from vsr_cic.captioner import RoleShiftCaptioner, toy_controls, BOS_ID, EOS_ID, PAD_ID
from vsr_cic.fast_captioner import compile_step
from vsr_cic.decoding import greedy_decode, beam_search

def _case(device, verb_shift):
    torch.manual_seed(0)
    V, D = 12, 8
    ctl = toy_controls(B=3, K=3, D=D, device=device)
    m = RoleShiftCaptioner(V, D, hidden=16, emb=8, att=8, dropout=0., verb_shift=verb_shift, feat_proj=6).to(device)
    words = torch.tensor([[BOS_ID, 5, 6, 7, 8, EOS_ID], [BOS_ID, 9, 10, EOS_ID, PAD_ID, PAD_ID], [BOS_ID, 4, 6, 9, EOS_ID, PAD_ID]], device=device)
    slots = torch.tensor([[0, 0, 1, 2, 2, 2], [0, 0, 1, 1, 1, 1], [0, 0, 1, 2, 2, 2]], device=device)
    return m, ctl, words, slots

def _agree(device, verb_shift, **kw):
    m, ctl, words, slots = _case(device, verb_shift)
    c = compile_step(copy.deepcopy(m), **kw)
    assert c.step is not m.step and 'step' in vars(c)
    outs = []
    for net in (m, c):
        net.zero_grad(); out = net.loss(words, slots, **ctl); out['loss'].backward()
        outs.append((out, [p.grad.clone() for p in net.parameters() if p.grad is not None]))
    (a, ga), (b, gb) = outs
    for k in ('loss', 'word_nll', 'gate_nll'): torch.testing.assert_close(a[k], b[k], rtol=1e-5, atol=1e-6)
    assert len(ga) == len(gb)
    for x, y in zip(ga, gb): torch.testing.assert_close(x, y, rtol=1e-4, atol=1e-6)
    m.eval(); c.eval()
    with torch.no_grad():
        g1, g2 = greedy_decode(m, max_len=8, **ctl), greedy_decode(c, max_len=8, **ctl)
        assert torch.equal(g1.words, g2.words)
        b1, b2 = beam_search(m, beam_size=3, max_len=8, **ctl), beam_search(c, beam_size=3, max_len=8, **ctl)
        assert torch.equal(b1.words, b2.words)
    del c.step                                                     # back to the eager method
    assert 'step' not in vars(c)

def test_compiled_step_agrees_cpu():                               # 'one_word': the forced-gate path too; ~30 s CPU (tracing)
    torch.set_num_threads(1)
    _agree('cpu', 'one_word', backend='aot_eager')

@pytest.mark.skipif(not torch.cuda.is_available(), reason='needs a CUDA GPU (inductor + CUDA graphs)')
def test_compiled_step_agrees_cuda():
    _agree('cuda', 'one_word')                                     # mode 'auto' = 'reduce-overhead' on CUDA

def _loss_agree(device, **kw):
    "`compile_loss` on padded inputs == the eager loss on unpadded inputs: loss, parts and every gradient"
    from vsr_cic.fast_captioner import compile_loss, pad_inputs
    m, ctl, words, slots = _case(device, 'one_word')
    inp = dict(words=words, slot_idx=slots, **ctl)
    K, R = ctl['regions'].shape[1:3]
    big = pad_inputs(inp, K + 1, R + 2, words.shape[1] + 3, B=words.shape[0] + 2)   # every axis padded
    c = compile_loss(copy.deepcopy(m), **kw)
    assert 'loss' in vars(c)
    outs = []
    for net, x in ((m, inp), (c, big)):
        for step in range(2):                                      # twice: the second call replays the captured graphs
            net.zero_grad(); out = net.loss(**x); out['loss'].backward()
        outs.append(({k: v.detach().clone() for k, v in out.items()}, [p.grad.clone() for p in net.parameters() if p.grad is not None]))
    (a, ga), (b, gb) = outs
    for k in ('loss', 'word_nll', 'gate_nll'): torch.testing.assert_close(a[k], b[k], rtol=1e-5, atol=1e-6)
    assert len(ga) == len(gb)
    for x, y in zip(ga, gb): torch.testing.assert_close(x, y, rtol=1e-4, atol=1e-6)
    del c.loss
    assert 'loss' not in vars(c)

def test_compiled_loss_agrees_cpu():
    torch.set_num_threads(1)
    _loss_agree('cpu', backend='aot_eager')

@pytest.mark.skipif(not torch.cuda.is_available(), reason='needs a CUDA GPU (inductor + CUDA graphs)')
def test_compiled_loss_agrees_cuda():
    _loss_agree('cuda')                                            # mode 'auto' = 'reduce-overhead' on CUDA

def test_capture_needs_one_cuda_device(tmp_path):
    "The main job refuses `capture=True` without a CUDA device, naming the device, before any data is made"
    from vsr_cic.captioning import train_captioner
    with pytest.raises(ValueError, match='capture=True needs one CUDA device, got cpu'):
        train_captioner(out_dir=tmp_path/'run', device='cpu', capture=True, world_images=12, progress=False)
    assert not (tmp_path/'run'/'world').exists()

def _scst_parts(m, ctl, noise, r, b, n, L, ro=None):
    "Sampled words, SCST loss and every parameter's gradient (None = zeros), eagerly or from `CapturedRollouts`"
    from vsr_cic.decoding import sample_decode, scst_loss
    m.zero_grad()
    if ro is None:
        d = sample_decode(m, n=n, max_len=L, noise=noise, drop_finished=False, **ctl)
        s = dict(words=d.words, word_logp=d.word_logp, gate_logp=d.gate_logp, mask=d.mask)
    else: s = ro.sample(noise=noise, **ctl)
    loss = scst_loss(s['word_logp'], s['gate_logp'], s['mask'], r, b)
    loss.backward()
    return s['words'].clone(), loss.detach().clone(), [
        torch.zeros_like(p) if p.grad is None else p.grad.clone() for p in m.parameters()]

@pytest.mark.skipif(not torch.cuda.is_available(), reason='needs a CUDA GPU (CUDA graphs)')
def test_captured_rollouts_agree_cuda():
    "`CapturedRollouts` (greedy graph; sample + backward graphs) == eager decoding: words, SCST loss, gradients"
    from vsr_cic.decoding import CapturedRollouts, gumbel_noise
    m, ctl, _, _ = _case('cuda', 'one_word')                       # dropout 0: eager and graphs see the same model
    L, n, N, V = 8, 2, 3 * 2, 12
    ro = CapturedRollouts(m, max_len=L, n=n)
    assert ro.graphs
    m.train()
    for _ in range(3):                                             # the first call captures, the others replay
        m.eval()
        with torch.no_grad(): g = greedy_decode(m, max_len=L, **ctl)
        m.train()
        gw = ro.greedy(**ctl)
        assert torch.equal(gw[:, :g.words.shape[1]], g.words) and (gw[:, g.words.shape[1]:] == PAD_ID).all()
        noise = (gumbel_noise(L, N, V, device='cuda'), gumbel_noise(L, N, 2, device='cuda'))
        r, b = torch.rand(N, device='cuda'), torch.rand(N, device='cuda')
        w1, l1, g1 = _scst_parts(m, ctl, noise, r, b, n, L)
        w2, l2, g2 = _scst_parts(m, ctl, noise, r, b, n, L, ro)
        assert torch.equal(w1, w2)
        torch.testing.assert_close(l1, l2, rtol=1e-5, atol=1e-6)
        for x, y in zip(g1, g2): torch.testing.assert_close(x, y, rtol=1e-4, atol=1e-6)
        assert sum(float(x.abs().sum()) for x in g2) > 0

@pytest.mark.skipif(not torch.cuda.is_available(), reason='needs a CUDA GPU (CUDA graphs)')
def test_captured_sample_draws_fresh_dropout_cuda():
    "With dropout, each replay of the captured sample draws new dropout masks (same noise, other log-probs)"
    from vsr_cic.decoding import CapturedRollouts, gumbel_noise
    m, ctl, _, _ = _case('cuda', 'one_word')
    m.drop.p = 0.5
    m.train()
    ro = CapturedRollouts(m, max_len=8, n=1)
    noise = (gumbel_noise(8, 3, 12, device='cuda'), gumbel_noise(8, 3, 2, device='cuda'))
    a = ro.sample(noise=noise, **ctl)['word_logp'].detach().clone()
    b = ro.sample(noise=noise, **ctl)['word_logp'].detach().clone()
    assert torch.isfinite(a).all() and not torch.equal(a, b)
