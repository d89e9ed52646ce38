"""VSR parsing time on hostile 1 MB inputs (issue 18, finding 6): every case must parse or fail in linear time.

Cases: the issue's backtracking trigger ('ride: LOC' + spaces + 'Z'), a count of a million digits, a million
'x'-count separators, 170,000 repeated roles, a megabyte verb that is not a lemma, a valid VSR padded with a
megabyte of spaces, and 58,000 ';'-separated VSRs for `parse_vsrs`. Each is timed at 1 MB and 4 MB: linear time
means the 4 MB time is about 4x the 1 MB one (quadratic: 16x; the old parser took 32 s on the first case at 64 KB).
Best of 3 calls, one process, wall time. Target: every 1 MB case under 1 s.
Usage: python bench/bench_parse.py [--quick]
"""
from __future__ import annotations
import argparse, sys
from pathlib import Path
sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import best_time, table

TARGET_S = 1.0   # issue 18: a 1 MB VSR string parses or fails in under a second

def cases(n:int)->dict:
    "Hostile texts of about `n` characters"
    return {'spaces then Z (old regex: 32 s at 64 KB)': 'ride: LOC' + ' ' * n + 'Z',
            'million-digit count':                     'ride: LOC*' + '9' * n,
            "'x' count separators":                    'ride: ' + 'ARG0 x' * (n // 6),
            'repeated roles':                          'ride: ' + ', '.join(['ARG0'] * (n // 6)),
            'verb not a lemma':                        'r!' * (n // 2) + ': ARG0',
            'valid VSR padded with spaces':            'ride:' + ' ' * n + 'ARG0, LOC*2',
            'many VSRs (parse_vsrs)':                  '; '.join(['ride: ARG0, ARG1'] * (n // 18))}

def _attempt(text:str):
    from vsr_cic.vsr import VSR, VSRError, parse_vsrs
    try: return len(parse_vsrs(text)) if ';' in text else VSR.parse(text)
    except VSRError as e: return f'error ({len(str(e))} chars)'

def run(quick:bool=False)->dict:
    mb, big = (2**17, 2**19) if quick else (2**20, 2**22)
    rows, worst = [], 0.
    c1, c4 = cases(mb), cases(big)
    for name in c1:
        out, t1 = best_time(lambda: _attempt(c1[name]), 3)
        _, t4 = best_time(lambda: _attempt(c4[name]), 3)
        rows.append(dict(case=name, chars=len(c1[name]), result=str(out)[:28], s_1MB=t1, s_4MB=t4, ratio_4x_input=t4 / max(t1, 1e-9)))
        worst = max(worst, t1)
    return {'rows': rows, 'parse_max_seconds_1mb': None if quick else worst, 'parse_target_seconds': TARGET_S,
            'parse_all_under_target': None if quick else worst < TARGET_S}

if __name__ == '__main__':
    ap = argparse.ArgumentParser(); ap.add_argument('--quick', action='store_true'); a = ap.parse_args()
    r = run(a.quick)
    print(table(f"VSR parsing of hostile inputs ({'128/512 KB' if a.quick else '1 MB and 4 MB'}; seconds, best of 3)", r['rows']))
    if not a.quick: print(f"slowest 1 MB case: {r['parse_max_seconds_1mb']:.3f} s (target < {TARGET_S:g} s)")
