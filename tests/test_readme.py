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


def test_results_blocks_are_generated():
    "Every `<!-- results:NAME -->` block of the README is what vsr_cic.tables makes of the committed results/NAME.json, and so is results/NAME.md"
    import re, json
    from vsr_cic.tables import readme_block, results_page
    readme = (ROOT/'README.md').read_text()
    names = re.findall(r'<!-- results:([\w-]+) -->', readme)
    assert names, "the README has no generated results block"
    for name in names:
        f = ROOT/'results'/f'{name}.json'
        assert f.exists(), f"README block {name!r} has no {f.relative_to(ROOT)}: run vsr_cic.tables.publish on the run's metrics.json"
        m = json.loads(f.read_text())
        block = readme.split(f'<!-- results:{name} -->\n')[1].split(f'<!-- /results:{name} -->')[0]
        assert block.strip('\n') == readme_block(m, f'results/{name}.md').strip('\n'), f"README block {name!r} was edited by hand"
        assert (ROOT/'results'/f'{name}.md').read_text() == results_page(m, m['title']) + '\n', f"results/{name}.md was edited by hand"
