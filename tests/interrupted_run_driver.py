"""The subprocess of tests/test_interrupted_run.py: a tiny real model (`vsr_cic.train.toy_training`: two linear layers with
dropout on 50 random examples) trained under a whole `Schedule` (validation MSE on 40 held-out examples, patience 3,
lr × 0.8 every 3 epochs) with a checkpoint after every step, so that a SIGKILL can land anywhere: in a step, in the
validation, in a checkpoint write. `python interrupted_run_driver.py CKPT_DIR STEP_SLEEP` waits for a line on stdin
(the go), prints `step` after every optimiser step and `eval N` after every validation, and `done {json}` at the end.

VSR_MUTANT=forget_history (the test's negative control only) makes resuming drop the recorded validation history, as a
resume that decided from the checkpoint's counters of this call alone would: the interrupted run then ends elsewhere."""
import json, os, sys, time
import torch

SCHEDULE = dict(epochs=30, patience=3, monitor='val_mse', mode='min', lr_step=3, lr_decay=0.8)
LR = 3e-3   # Adam: the validation MSE falls for 8 epochs, then rises (stop after epoch 11, 77 steps; the cap does not bind)


def train(ckpt_dir, step_sleep:float=0.0, say=lambda *a: None):
    "Train (or resume) the toy in `ckpt_dir` to the end of its schedule; the final `LoopState`"
    from vsr_cic.train import fit, toy_training, Schedule
    m, opt, _, smp, loader, step = toy_training(0)
    for grp in opt.param_groups: grp['lr'] = LR
    g = torch.Generator().manual_seed(1)
    Xv, yv = torch.randn(40, 4, generator=g), torch.randn(40, 1, generator=g)   # validation examples never trained on
    def ev(epoch):
        v = torch.nn.functional.mse_loss(m(Xv), yv).item()
        say(f'eval {epoch}')
        return {'val_mse': v}
    def slow(b):
        out = step(b)
        say('step')
        if step_sleep: time.sleep(step_sleep)
        return out
    return fit(m, loader, smp, slow, opt, Schedule(**SCHEDULE), ckpt_dir=ckpt_dir, eval_fn=ev, ckpt_every=1,
               progress=False)


def _forget_history():
    "The negative control: a resume that ignores the recorded validation history"
    from vsr_cic import train as T
    orig = T._resume
    def resume(*a, **k):
        st = orig(*a, **k)
        st.history = [h for h in st.history if h.get('kind') != 'eval']
        return st
    T._resume = resume


if __name__ == '__main__':
    torch.set_num_threads(1)
    import vsr_cic.train  # noqa: F401  (imported before the go: the kill lands in training, not in imports)
    if os.environ.get('VSR_MUTANT') == 'forget_history': _forget_history()
    sys.stdin.readline()
    say = lambda s: print(s, flush=True)
    st = train(sys.argv[1], float(sys.argv[2]), say)
    print('done ' + json.dumps({k: getattr(st, k) for k in ('epoch', 'step', 'best', 'best_epoch', 'bad_epochs', 'stopped')}),
          flush=True)
