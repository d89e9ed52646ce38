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


def test_numbers_only_in_generated_blocks():
    "Outside the generated results blocks and code, the README states no measured number (scores, rates, times): those live once, in results/"
    import re
    text = (ROOT/'README.md').read_text()
    text = re.sub(r'<!-- results:([\w-]+) -->.*?<!-- /results:\1 -->', '', text, flags=re.S)   # generated
    text = re.sub(r'```.*?```', '', text, flags=re.S)                                          # commands
    text = re.sub(r'`[^`\n]*`', '', text)                                                      # code: names, paths, pins
    for allowed in (r'§[\d.,–\- ]+', r'\b\d+\.\d+\.\d+\b', r'\b\d+\.\d+\+', r'\b\d+(?:\.\d+)?k\b',   # sections, versions, sizes
                    r'(?:spaCy|PyTorch|Apache-|BY-SA) ?\d+\.\d+'):
        text = re.sub(allowed, '', text)
    measured = re.findall(r'[^\n]{0,30}(?<![\w.])\d+\.\d+(?![\w.])[^\n]{0,10}|[^\n]{0,30}\d\s?%[^\n]{0,10}', text)
    assert not measured, f"measured numbers outside a generated results block (put them in results/ via vsr_cic.tables.publish): {measured}"


def test_readme_is_a_front_door():
    "The README stays short (issue 35): details live in docs/, results in results/"
    n = len((ROOT/'README.md').read_text().splitlines())
    assert n <= 300, f"README.md has {n} lines (at most 300): move details to docs/ and results to results/"
