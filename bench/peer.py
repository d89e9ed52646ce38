"""The peer of the speed benchmarks: self-critical.pytorch's own `UpDownModel`, `LossWrapper` and CIDEr-D, imported from a
fetched copy of its repository (nothing of it is copied into this project).

Where the copy is looked for: `$SCST_PYTORCH_DIR` (a checkout of ruotianluo/self-critical.pytorch) and `$SCST_CIDER_DIR`
(a checkout of ruotianluo/cider, the repository's `cider` submodule), else `runs/peer/ruotianluo+self-critical.pytorch`
and `runs/peer/ruotianluo+cider`. To fetch them (a machine with internet):

    git clone https://github.com/ruotianluo/self-critical.pytorch runs/peer/ruotianluo+self-critical.pytorch
    git clone https://github.com/ruotianluo/cider runs/peer/ruotianluo+cider

Only `captioning/models/AttModel.py` (and what it imports), `captioning/modules/loss_wrapper.py`, `captioning/utils/opts.py`
and the cider package are imported; the models package's `__init__` (which imports every model, some needing
`transformers`) is bypassed by registering the package by its path.
"""
from __future__ import annotations
import os, sys, types, importlib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

def peer_dirs()->tuple[Path, Path]:
    "(self-critical.pytorch, cider) checkouts, or exit with how to get them"
    scst = Path(os.environ.get('SCST_PYTORCH_DIR', ROOT/'runs'/'peer'/'ruotianluo+self-critical.pytorch'))
    cider = Path(os.environ.get('SCST_CIDER_DIR', ROOT/'runs'/'peer'/'ruotianluo+cider'))
    for d, f in ((scst, 'captioning/models/AttModel.py'), (cider, 'pyciderevalcap/ciderD/ciderD.py')):
        if not (d/f).exists(): sys.exit(f"{d/f} not found: fetch the peer as bench/peer.py's docstring says")
    return scst, cider

def load_peer()->types.SimpleNamespace:
    "The peer's modules: AttModel (UpDownModel), loss_wrapper (LossWrapper), rewards, opts"
    scst, cider = peer_dirs()
    for p in (str(scst), str(cider)):
        if p not in sys.path: sys.path.insert(0, p)
    if 'captioning.models' not in sys.modules:                   # the package by its path, without its __init__
        importlib.import_module('captioning')
        pkg = types.ModuleType('captioning.models'); pkg.__path__ = [str(scst/'captioning'/'models')]
        sys.modules['captioning.models'] = pkg
    att = importlib.import_module('captioning.models.AttModel')
    lw = importlib.import_module('captioning.modules.loss_wrapper')
    rewards = importlib.import_module('captioning.utils.rewards')
    opts = importlib.import_module('captioning.utils.opts')
    return types.SimpleNamespace(AttModel=att, loss_wrapper=lw, rewards=rewards, opts=opts, dir=scst)

def peer_opt(peer, vocab_size:int, feat_dim:int, width:int, seq_length:int=16, drop:float=0.5, sample_n:int=1):
    "The peer's own option defaults (`parse_opt`), with the sizes of the comparison and one sample per image"
    argv, sys.argv = sys.argv, ['peer', '--caption_model', 'updown', '--rnn_size', str(width),
                                '--input_encoding_size', str(width), '--att_hid_size', str(width),
                                '--fc_feat_size', str(feat_dim), '--att_feat_size', str(feat_dim),
                                '--drop_prob_lm', str(drop), '--train_sample_n', str(sample_n),
                                '--structure_loss_weight', '0', '--max_length', str(seq_length)]
    try: opt = peer.opts.parse_opt()
    finally: sys.argv = argv
    opt.vocab_size, opt.seq_length = vocab_size, seq_length
    opt.vocab = {str(i + 1): f'w{i}' for i in range(vocab_size)}
    return opt

def make_peer(peer, vocab_size:int, feat_dim:int, width:int, seq_length:int=16, seed:int=0):
    "UpDownModel and its LossWrapper (train mode), seeded"
    import torch
    torch.manual_seed(seed)
    opt = peer_opt(peer, vocab_size, feat_dim, width, seq_length)
    model = peer.AttModel.UpDownModel(opt)
    return model, peer.loss_wrapper.LossWrapper(model, opt), opt

def init_reward(peer, train_refs:list):
    """The peer's CIDEr-D scorer with document frequencies of `train_refs` (per image, a list of id sequences, `<eos>`
    excluded), computed by the peer's own `CiderScorer` as its `prepro_ngrams.py` does for `--cached_tokens`"""
    import numpy as np
    from collections import defaultdict
    from pyciderevalcap.ciderD.ciderD import CiderD
    from pyciderevalcap.ciderD.ciderD_scorer import cook_refs
    scorer = CiderD(df='corpus')
    sc = scorer.cider_scorer
    sc.crefs = [cook_refs([' '.join(map(str, r)) for r in refs]) for refs in train_refs]
    sc.document_frequency = defaultdict(float)
    sc.compute_doc_freq()
    sc.ref_len = np.log(float(len(sc.crefs)))
    sc.df_mode, sc.crefs = 'cached', []              # copy_empty() hands these document frequencies to every call
    peer.rewards.CiderD_scorer = scorer
