"Mixed precision in `fit`: the default CPU path does not touch autocast; bf16 autocast runs on CPU when asked and on CUDA"
import pytest, torch
import torch.nn.functional as F
from vsr_cic.train import fit, EpochBatchSampler, autocast_for, _toy

EPOCHS = 2


def plain_loop(seed=0):
    "The loop `fit` must reproduce without amp: zero_grad, backward, step over the sampler's batches"
    m, opt, sch, smp, loader, step = _toy(seed)
    for e in range(EPOCHS):
        smp.set_epoch(e)
        rng = torch.get_rng_state(); batches = iter(loader(smp)); torch.set_rng_state(rng)  # as fit: the loader's seed draw stays out of the stream
        for b in batches:
            loss = step(b)['loss']; opt.zero_grad(set_to_none=True); loss.backward(); opt.step()
        sch.step()
    return m


def test_default_cpu_path_is_unchanged(monkeypatch):
    def no_autocast(*a, **k): raise AssertionError("autocast used on the default path")
    monkeypatch.setattr(torch, 'autocast', no_autocast)
    m, opt, sch, smp, loader, step = _toy(0)
    st = fit(m, loader, smp, step, opt, epochs=EPOCHS, sched=sch, progress=False)          # amp=None (default)
    ref = plain_loop(0)
    for a, b in zip(m.parameters(), ref.parameters()): assert torch.equal(a, b)           # bit-identical to a plain loop
    assert st.step == EPOCHS * 7


def test_bf16_on_cpu_runs(tmp_path):
    m, opt, sch, smp, loader, step = _toy(0)
    w0 = [p.detach().clone() for p in m.parameters()]
    dtypes = []
    def step_bf16(b):
        out = m(b[0]); dtypes.append(out.dtype)
        return {'loss': F.mse_loss(out.float(), b[1])}
    st = fit(m, loader, smp, step_bf16, opt, epochs=1, amp='bf16', ckpt_dir=tmp_path, stop_after=5, progress=False)
    assert st.step == 5 and set(dtypes) == {torch.bfloat16}                                # matmuls ran in bf16
    assert all(p.dtype == torch.float32 for p in m.parameters())                          # master weights stay fp32
    assert all(not torch.equal(a, b) for a, b in zip(w0, m.parameters()))                # and they were trained
    assert all(torch.isfinite(torch.tensor(h['loss'])) for h in st.history)


def test_amp_rejects_unknown_modes():
    m, opt, sch, smp, loader, step = _toy(0)
    with pytest.raises(ValueError, match="'fp16'"): fit(m, loader, smp, step, opt, epochs=1, amp='fp16', progress=False)


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")
def test_bf16_on_cuda():
    torch.manual_seed(0)
    X, y = torch.randn(64, 16, device='cuda'), torch.randn(64, 1, device='cuda')
    m = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.ReLU(), torch.nn.Linear(32, 1)).cuda()
    opt = torch.optim.Adam(m.parameters(), 1e-2)
    seen = []
    def step(b):
        out = m(X[b]); seen.append(out.dtype); return {'loss': F.mse_loss(out.float(), y[b])}
    st = fit(m, lambda s: iter(s), EpochBatchSampler(64, 16), step, opt, epochs=2, amp='auto', progress=False)
    assert st.step == 8 and set(seen) == {torch.bfloat16 if torch.cuda.is_bf16_supported() else torch.float32}
    assert next(m.parameters()).dtype == torch.float32
