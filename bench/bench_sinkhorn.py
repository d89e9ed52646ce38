"""Sinkhorn: one batched log-space call over all roles of a batch vs a Python loop over roles.

A batch of 100 captions with 2–6 roles each; each role has 1–MAX_REGIONS_PER_SET regions to order (the R-level
planner's per-role region ordering, paper §3.1.2 / supp. §C.2). Batched: one `sinkhorn` call on the padded
(M, N, N) stack with a mask. Loop: one `sinkhorn` call per role on its own (n, n) block. Both K=20 iterations,
forward only, 1 torch thread. Checks the results agree on the valid blocks.
Usage: python bench/bench_sinkhorn.py [--quick]
"""
from __future__ import annotations
import argparse, sys
from pathlib import Path
sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import best_time, table

def run(quick:bool=False, batch:int|None=None)->dict:
    import torch
    from vsr_cic.sinkhorn import sinkhorn
    from vsr_cic.core import MAX_REGIONS_PER_SET
    torch.set_num_threads(1); batch = batch or (20 if quick else 100)
    g = torch.Generator().manual_seed(0)
    roles = torch.randint(2, 7, (batch,), generator=g)                       # roles per caption
    n = torch.randint(1, MAX_REGIONS_PER_SET + 1, (int(roles.sum()),), generator=g)   # regions per role
    M, N = len(n), int(n.max())
    x = torch.randn(M, N, N, generator=g)
    mask = torch.arange(N)[None] < n[:, None]                                # (M, N)
    with torch.no_grad():
        Pb, t_b = best_time(lambda: sinkhorn(x, mask=mask), 3 if quick else 10)
        blocks = [x[i, :k, :k] for i, k in enumerate(n.tolist())]
        Pl, t_l = best_time(lambda: [sinkhorn(b) for b in blocks], 1 if quick else 3)
    err = max(float((Pb[i, :k, :k] - p).abs().max()) for i, (k, p) in enumerate(zip(n.tolist(), Pl)))
    row = dict(roles=M, max_regions=N, loop_s=t_l, batched_s=t_b, speedup=t_l / t_b, max_abs_diff=err)
    return {'rows': [row], 'sinkhorn_speedup': t_l / t_b, 'sinkhorn_max_abs_diff': err}

if __name__ == '__main__':
    ap = argparse.ArgumentParser(); ap.add_argument('--quick', action='store_true'); a = ap.parse_args()
    print(table('Sinkhorn (20 iterations): batched over all roles vs per-role loop', run(a.quick)['rows']))
