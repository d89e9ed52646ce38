"The installed package works on its own, and every experiment notebook can be driven by papermill"
import json, os, subprocess, sys
from pathlib import Path
import pytest

ROOT = Path(__file__).resolve().parent.parent

def _modules():
    return sorted(p.stem for p in (ROOT/'vsr_cic').glob('*.py') if not p.stem.startswith('_'))

def test_imports_without_notebooks_on_path(tmp_path):
    "Import every module in a subprocess whose cwd and sys.path hold no notebook folder"
    code = ("import sys, importlib; sys.path = [p for p in sys.path if p not in ('', '.')]\n"
            f"mods = {_modules()!r}\n"
            "for m in mods: importlib.import_module('vsr_cic.' + m)\n"
            "import vsr_cic; print(vsr_cic.__version__, len(mods))")
    env = {k: v for k, v in os.environ.items() if k != 'PYTHONPATH'}
    r = subprocess.run([sys.executable, '-c', code], cwd=tmp_path, env=env, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert r.stdout.split()[1] == str(len(_modules()))
    assert len(_modules()) >= 2

def test_version_matches_settings():
    import configparser, vsr_cic
    cfg = configparser.ConfigParser(); cfg.read(ROOT/'settings.ini')
    assert vsr_cic.__version__ == cfg['DEFAULT']['version']

def _experiment_notebooks():
    """Notebooks with code but without a `default_exp` are experiments run by papermill (index.ipynb is the README;
    markdown-only notebooks such as official_code.ipynb are documentation)"""
    out = []
    for p in sorted((ROOT/'nbs').rglob('*.ipynb')):
        nb = json.loads(p.read_text())
        src = ''.join(''.join(c['source']) for c in nb['cells'] if c['cell_type'] == 'code')
        if src.strip() and '#| default_exp' not in src and p.name != 'index.ipynb': out.append((p.name, nb))
    return out

def test_there_are_experiment_notebooks():
    names = [n for n, _ in _experiment_notebooks()]
    assert 'train_captioner.ipynb' in names, names

@pytest.mark.parametrize('name,nb', _experiment_notebooks(), ids=lambda x: x if isinstance(x, str) else '')
def test_experiment_notebook_has_parameters_cell(name, nb):
    "papermill injects parameters after the cell tagged `parameters`; without the tag it silently runs the defaults"
    code = [c for c in nb['cells'] if c['cell_type'] == 'code']
    tagged = [c for c in code if 'parameters' in c.get('metadata', {}).get('tags', [])]
    assert len(tagged) == 1, f"{name}: expected exactly one code cell tagged 'parameters', found {len(tagged)}"
    assert code.index(tagged[0]) <= 1, f"{name}: the parameters cell should be the first (or second, after imports) code cell"
    src = ''.join(tagged[0]['source'])
    assert 'out_dir' in src or 'out' in src, f"{name}: parameters cell has no out_dir"

@pytest.mark.parametrize('name,nb', _experiment_notebooks(), ids=lambda x: x if isinstance(x, str) else '')
def test_experiment_notebooks_are_skipped_by_nbdev_test(name, nb):
    "Experiment notebooks train for minutes with their defaults: nbdev_test must skip them (tests/ runs them with tiny parameters)"
    first_md = next(''.join(c['source']) for c in nb['cells'] if c['cell_type'] == 'markdown')
    assert '- skip_exec: true' in first_md, f"{name}: first markdown cell lacks '- skip_exec: true'"

def test_glossary_points_at_real_code():
    "Every module in the paper-to-code glossary imports, and every plain name in it exists there"
    import importlib, re
    from vsr_cic.core import GLOSSARY
    checked = 0
    for paper, code, where in GLOSSARY:
        mods = [importlib.import_module(m.split('(')[0].strip()) for m in where.split(',')]
        for part in code.split(','):
            name = re.split(r'[.(=]', part.strip())[0].strip()
            if not re.fullmatch(r'[A-Za-z_][A-Za-z0-9_]*', name) or name in ('caption', 'gate_logp'): continue
            assert any(hasattr(m, name) for m in mods), f"glossary entry {paper!r}: {name!r} not found in {where}"
            checked += 1
    assert checked >= 20, checked


def test_experiments_in_their_own_folder():
    "Experiment notebooks live in nbs/experiments/, apart from the library's numbered ones; the user's two entry points stay on top"
    top = {p.name for p in (ROOT/'nbs').glob('*.ipynb')}
    experiments = {n for n, _ in _experiment_notebooks()}
    assert experiments & top == {'train_captioner.ipynb', 'explore_vsr.ipynb'}, experiments & top
    assert len(experiments - top) >= 10 and all((ROOT/'nbs'/'experiments'/n).exists() for n in experiments - top)
