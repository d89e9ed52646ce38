"""A reference-shaped captioner for timing: the top-down captioner of Anderson et al. (2018) with the module layout of
self-critical.pytorch's `UpDownModel` (the usual controllable-captioning backbone), written here from that
description (no code copied). Only for `bench_peer_shape.py`: it is never trained.

Per image, once: regions and their mean embedded to the width (Linear + ReLU + dropout), the attention keys
(`ctx2att`). Per time step, as the reference does: the word embedding (Embedding + ReLU + dropout), the attention
LSTM on [h_lang; fc; x_t], additive attention over the regions, the language LSTM on [attended; h_att], dropout,
the logit layer and a log-softmax. XE loss: masked token mean of the NLL. At width 512, 2048-d features and a
10k vocabulary it has 20.2 M parameters (the issue's figure for the reference).
"""
from __future__ import annotations
import torch
import torch.nn as nn
import torch.nn.functional as F

class UpDownRef(nn.Module):
    "Attention LSTM + language LSTM with additive attention over regions (Anderson et al. 2018), reference layout"
    def __init__(self, vocab:int, feat_dim:int=2048, width:int=512, drop:float=0.5):
        super().__init__()
        emb = lambda m: nn.Sequential(m, nn.ReLU(), nn.Dropout(drop))
        self.embed = emb(nn.Embedding(vocab + 1, width))                  # + the reference's extra token
        self.fc_embed, self.att_embed = emb(nn.Linear(feat_dim, width)), emb(nn.Linear(feat_dim, width))
        self.ctx2att, self.h2att, self.alpha_net = nn.Linear(width, width), nn.Linear(width, width), nn.Linear(width, 1)
        self.att_lstm, self.lang_lstm = nn.LSTMCell(3 * width, width), nn.LSTMCell(2 * width, width)
        self.drop, self.logit, self.width = nn.Dropout(drop), nn.Linear(width, vocab + 1), width

    def encode(self, att_feats:torch.Tensor, att_mask:torch.Tensor)->tuple:
        "(B, R, D) regions, (B, R) bool -> embedded fc (B, W), regions (B, R, W), keys (B, R, W), mask"
        fc = (att_feats * att_mask[..., None]).sum(1) / att_mask.sum(1, keepdim=True)
        att = self.att_embed(att_feats)
        return self.fc_embed(fc), att, self.ctx2att(att), att_mask

    def init_state(self, B:int)->tuple:
        z = self.logit.weight.new_zeros(B, self.width)
        return (z, z), (z, z)

    def step(self, it:torch.Tensor, state:tuple, enc:tuple)->tuple:
        "Log-probs (B, V+1) of the next word after `it` (B,), and the new state"
        fc, att, keys, mask = enc
        (h_att, c_att), (h_lang, c_lang) = state
        h_att, c_att = self.att_lstm(torch.cat([h_lang, fc, self.embed(it)], 1), (h_att, c_att))
        score = self.alpha_net(torch.tanh(keys + self.h2att(h_att)[:, None]))[..., 0].masked_fill(~mask, float('-inf'))
        ctx = torch.bmm(torch.softmax(score, 1)[:, None], att)[:, 0]                         # (B, W)
        h_lang, c_lang = self.lang_lstm(torch.cat([ctx, h_att], 1), (h_lang, c_lang))
        return F.log_softmax(self.logit(self.drop(h_lang)), 1), ((h_att, c_att), (h_lang, c_lang))

    def loss(self, att_feats, att_mask, words:torch.Tensor, pad_id:int=0)->torch.Tensor:
        "XE loss of `words` (B, T) = <bos> ... <eos> <pad>: one step per output, as the reference trains"
        enc, state, nll = self.encode(att_feats, att_mask), self.init_state(len(words)), []
        for t in range(words.shape[1] - 1):
            lp, state = self.step(words[:, t], state, enc)
            nll.append(-lp.gather(1, words[:, t + 1, None])[:, 0])
        mask = (words[:, 1:] != pad_id).float()
        return (torch.stack(nll, 1) * mask).sum() / mask.sum()

    @torch.no_grad()
    def greedy(self, att_feats, att_mask, bos:int, max_len:int)->torch.Tensor:
        "Greedy decoding, (B, max_len) word ids"
        enc, state = self.encode(att_feats, att_mask), self.init_state(len(att_feats))
        it, out = torch.full((len(att_feats),), bos, dtype=torch.long, device=att_feats.device), []
        for _ in range(max_len):
            lp, state = self.step(it, state, enc); it = lp.argmax(1); out.append(it)
        return torch.stack(out, 1)
