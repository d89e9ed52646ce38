"""Does a Table 1 captioner leave the language-model plateau if it trains longer? Trains one method of a finished
real_captions run with one sweep setting (its seed, data, width and decoding options as the run's sweep folder has them)
for EPOCHS cross-entropy epochs, then prints its validation CIDEr-D after each epoch and how much its teacher-forced
word NLL on validation rises under another caption's regions (how much it listens to its control).

Only the corpus's validation split is read; no test split is decoded (`test_split='none'`). The run resumes in OUT.

Usage: python bench/table1_longer_schedule.py RUN_DIR METHOD [--setting fast] [--seed 0] [--epochs 8] --out OUT [--json FILE]"""
import argparse, json, sys, time
from pathlib import Path

ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
ap.add_argument('run_dir', help='a finished real_captions run folder (with table1/<method>/seed<k>/sweep/<setting>/)')
ap.add_argument('method', help='c_lstm | c_updn | sct | ours')
ap.add_argument('--setting', default='fast', help="the sweep setting to train (vsr_cic.protocol.SWEEP_GRID)")
ap.add_argument('--seed', type=int, default=0)
ap.add_argument('--epochs', type=int, default=8, help='XE epochs (no self-critical stage)')
ap.add_argument('--out', required=True, help='the new run folder (resumed if it exists)')
ap.add_argument('--json', default=None, help='also write the result here')
a = ap.parse_args()
src = Path(a.run_dir)/'table1'/a.method/f'seed{a.seed}'/'sweep'/a.setting
if not (src/'metrics.json').exists(): sys.exit(f"{src}: no finished sweep run there (metrics.json missing)")

from vsr_cic.captioning import train_captioner, caption_data
sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import swapped_nll
from vsr_cic.pipeline import load_captioner

cfg = json.loads((src/'metrics.json').read_text())['config']
rc = json.loads((src/'run_config.json').read_text())
data = Path(rc['data']) if Path(rc['data']).is_absolute() else Path(a.run_dir)/'data'/'train'
keep = ('hidden', 'batch_size', 'lr_xe', 'lr_rl', 'seed', 'dropout', 'preset', 'ungrounded', 'min_freq', 'role_emb',
        'complete', 'constrain_verbs', 'threads', 'region_words', 'verb_shift', 'precompute')
kw = {k: cfg[k] for k in keep if k in cfg}
kw.update(model=json.loads((src/'metrics.json').read_text())['model'], data_dir=str(data), out_dir=a.out,
          epochs_xe=a.epochs, epochs_rl=0, test_split='none', device='cpu', progress=False, resume=True,
          lr_decay=rc['lr_decay'], lr_step=rc['lr_step'])
t = time.time(); train_captioner(**kw); took = round(time.time() - t)
curve = [round(e['CIDEr-D'], 4) for e in json.loads((Path(a.out)/'ckpt'/'xe'/'history.json').read_text()) if e['kind'] == 'eval']

net, voc, _ = load_captioner(a.out)                       # the kept epoch (best validation CIDEr-D)
cd = caption_data(data, splits=('train', 'val'), min_freq=cfg['min_freq'], ungrounded=cfg['ungrounded'],
                  verb_one_word=cfg.get('verb_shift') == 'one_word')
nll = swapped_nll(net, cd.splits['val'], 256, swaps=('other_regions',))
res = {'run': str(a.run_dir), 'method': a.method, 'setting': a.setting, 'seed': a.seed, 'epochs_xe': a.epochs,
       'val_CIDEr-D_by_epoch': curve, 'this_call_seconds': took,
       'train_seconds': json.loads((Path(a.out)/'train_seconds.json').read_text()).get('xe'),   # over resumed calls
       'val_nll': nll}
print(json.dumps(res))
if a.json: Path(a.json).parent.mkdir(parents=True, exist_ok=True); Path(a.json).write_text(json.dumps(res, indent=1))
