"README.md is rendered from nbs/index.ipynb and holds the two commands"
import subprocess, sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

def test_readme_is_rendered_from_index(tmp_path):
    r = subprocess.run([sys.executable, '-m', 'jupyter', 'nbconvert', '--to', 'markdown', '--output-dir', str(tmp_path),
                        '--output', 'README', str(ROOT/'nbs'/'index.ipynb')], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert (tmp_path/'README.md').read_text() == (ROOT/'README.md').read_text(), \
        "README.md is out of date: run  jupyter nbconvert --to markdown --output-dir . --output README nbs/index.ipynb"

def test_readme_has_the_two_commands():
    text = (ROOT/'README.md').read_text()
    assert 'papermill nbs/train_captioner.ipynb' in text
    assert 'bash .ci/run' in text and (ROOT/'.ci'/'run').exists()
