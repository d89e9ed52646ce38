"""Worker of tests/test_ddp.py: a tiny regression trained with `vsr_cic.train.fit`.
Under torchrun (`python -m torch.distributed.run --nproc_per_node 2 tests/ddp_script.py OUT`) it trains three ways
on 2 CPU ranks (gloo): DDP-wrapped, unwrapped with `fit` averaging the gradients, and DDP stopped after a few
steps (to resume elsewhere). Imported, `train()` is the single-process reference."""
import json, os, sys
from pathlib import Path
import torch
torch.set_num_threads(1)
import torch.nn.functional as F
from vsr_cic.train import init_distributed, wrap_ddp, sampler_for, fit, cleanup_distributed, unwrap

N, BATCH, EPOCHS, PART = 48, 8, 2, 3   # examples, GLOBAL batch, epochs, steps of the interrupted run

def make(seed:int=0):
    torch.manual_seed(seed)
    X, y = torch.randn(N, 4), torch.randn(N, 1)
    m = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.Tanh(), torch.nn.Linear(8, 1))
    return X, y, m

def train(ckpt_dir, ddp:bool=True, stop_after=None, device='cpu', bypass:bool=False, nan_at=None, **kw):
    "Train the toy model; `ddp`: wrap in DistributedDataParallel (else `fit` averages the gradients itself)"
    X, y, m = make()
    m = m.to(device); model = wrap_ddp(m, device) if ddp else m
    if not ddp:                                # ranks that initialise differently: fit must start from rank 0's weights
        with torch.no_grad():
            for p in m.parameters(): p.add_(float(os.environ.get('RANK', 0)))
    opt = torch.optim.Adam(model.parameters(), 1e-2)
    smp = sampler_for(N, BATCH, seed=0, drop_last=True)
    loader = lambda s: ((X[i], y[i], torch.tensor(i)) for i in s)
    fwd = model if ddp and not bypass else m   # without DDP the step calls the bare module, like the captioner's model.loss
    calls = [0]
    def step(b):
        calls[0] += 1
        loss = F.mse_loss(fwd(b[0].to(device)), b[1].to(device))
        return {'loss': loss * float('nan') if calls[0] == nan_at else loss, 'first': int(b[2][0])}
    st = fit(model, loader, smp, step, opt, kw.pop('epochs', EPOCHS), ckpt_dir=ckpt_dir, ckpt_every=1, stop_after=stop_after,
             progress=False, **kw)
    return unwrap(model), st, smp

if __name__ == '__main__':
    out = Path(sys.argv[1])
    env = init_distributed(timeout_s=60)       # a hang (a rank left alone in a collective) fails in a minute
    _, st, smp = train(out/'ddp', ddp=True, device=env.device)
    _, st2, _ = train(out/'sync', ddp=False, device=env.device)
    train(out/'part', ddp=True, stop_after=PART, device=env.device)
    try: train(out/'bypass', ddp=True, bypass=True, device=env.device); bypass = None   # DDP, but the step skips forward
    except RuntimeError as e: bypass = str(e)
    try: train(out/'nan', nan_at=3 if env.rank == 1 else None, device=env.device); nan = None   # NaN on rank 1 only
    except FloatingPointError as e: nan = str(e)
    scores = iter([0.5, 0.4, 0.3] if env.rank == 0 else [0.1, 0.2, 0.3])   # ranks disagree: rank 0's metrics decide
    _, st3, _ = train(out/'early', device=env.device, epochs=3, eval_fn=lambda e: {'score': next(scores)}, monitor='score', patience=1)
    (out/f'rank{env.rank}.json').write_text(json.dumps({'world_size': env.world_size, 'backend': env.backend, 'bypass': bypass,
                                                         'nan': nan, 'early': [st3.epoch, st3.best],
                                                         'batches': smp.batches(0), 'steps': [st.step, st2.step]}))
    cleanup_distributed()
