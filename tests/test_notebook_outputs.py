"""The first-read notebooks keep their outputs (issue 42), and the outputs are what the code makes: each notebook is run
again (nbclient, in memory, from nbs/) and every code cell's text outputs (streams and text/plain) must equal the
committed ones; figures are compared by presence (a PNG where one was committed), and each stays small.

A cell whose text output cannot be reproduced exactly carries the comment `# output varies: <why>`: its text is not
compared (its outputs are still kept). Refresh a notebook's outputs with
    jupyter nbconvert --to notebook --execute --inplace nbs/NAME.ipynb && nbdev_clean --fname nbs/NAME.ipynb"""
import base64, copy, json, re
from pathlib import Path
import pytest

NBS = Path(__file__).resolve().parent.parent/'nbs'
FIRST_READ = ['index', '01_vsr', '09_viz', '10_sinkhorn', '11_gsrl', '12_slevel', '13_captioner', '13a_decoding', '21_merge']
VARIES = re.compile(r'^\s*# output varies: \S', re.M)
MAX_PNG = 100_000          # bytes of one figure
MAX_OUTPUTS = 400_000      # bytes of one notebook's outputs, all told

def text_of(outputs:list)->list[tuple[str, str]]:
    "(kind, text) of a cell's outputs, in order: stream name or 'text/plain'; errors as such; 'image/png' by presence"
    out = []
    for o in outputs:
        t = o['output_type']
        if t == 'stream': out.append((o['name'], ''.join(o['text'])))
        elif t == 'error': out.append(('error', o['ename']))
        else:
            d = o.get('data', {})
            if 'image/png' in d: out.append(('image/png', ''))
            elif 'text/plain' in d: out.append(('text/plain', ''.join(d['text/plain'])))
    merged = []                                        # a stream split over several messages is one text
    for k, v in out:
        if merged and k == merged[-1][0] and k in ('stdout', 'stderr'): merged[-1] = (k, merged[-1][1] + v)
        else: merged.append((k, v))
    return merged

def differences(committed:dict, fresh:dict)->list[str]:
    "Cells (by index) whose compared outputs differ between the committed notebook and a fresh run of it"
    bad = []
    code = lambda nb: [c for c in nb['cells'] if c['cell_type'] == 'code']
    for i, (a, b) in enumerate(zip(code(committed), code(fresh))):
        if VARIES.search(''.join(a['source'])): continue
        x, y = text_of(a.get('outputs', [])), text_of(b.get('outputs', []))
        if x != y: bad.append(f"code cell {i} ({''.join(a['source'])[:50]!r}): committed {x!r:.300} vs fresh {y!r:.300}")
    return bad

def png_sizes(nb:dict)->list[int]:
    return [len(base64.b64decode(o['data']['image/png'])) for c in nb['cells'] if c['cell_type'] == 'code'
            for o in c.get('outputs', []) if 'image/png' in o.get('data', {})]

def outputs_bytes(nb:dict)->int:
    return sum(len(json.dumps(c.get('outputs', []))) for c in nb['cells'] if c['cell_type'] == 'code')

def committed(name:str)->dict: return json.loads((NBS/f'{name}.ipynb').read_text())

@pytest.mark.parametrize('name', FIRST_READ)
def test_outputs_are_kept_and_small(name):
    nb = committed(name)
    cells = [c for c in nb['cells'] if c['cell_type'] == 'code']
    assert any(c.get('outputs') for c in cells), f"{name}.ipynb has no outputs: run it (see this module's docstring)"
    assert not [o for c in cells for o in c.get('outputs', []) if o['output_type'] == 'error'], f"{name}.ipynb has an error output"
    assert all(n <= MAX_PNG for n in png_sizes(nb)), f"{name}.ipynb: a figure over {MAX_PNG} bytes: {png_sizes(nb)}"
    assert outputs_bytes(nb) <= MAX_OUTPUTS, f"{name}.ipynb: {outputs_bytes(nb)} bytes of outputs"

@pytest.mark.parametrize('name', FIRST_READ)
def test_outputs_are_reproduced(name):
    "Run the notebook again: the text of every output equals the committed one"
    from nbclient import NotebookClient
    import nbformat
    nb = committed(name)
    fresh = nbformat.reads(json.dumps(nb), as_version=4)
    NotebookClient(fresh, timeout=600, kernel_name='python3', resources={'metadata': {'path': str(NBS)}}).execute()
    bad = differences(nb, json.loads(nbformat.writes(fresh)))
    assert not bad, f"{name}.ipynb's committed outputs are not what it makes now (refresh them; see the docstring):\n" + '\n'.join(bad)

def test_checks_can_fail():
    "A changed number, a lost figure and a missing output are differences; a marked cell is not compared"
    nb = committed('10_sinkhorn')
    assert png_sizes(committed('09_viz')) and outputs_bytes(nb) > 0
    i = next(i for i, c in enumerate(nb['cells']) if c['cell_type'] == 'code' and text_of(c.get('outputs', [])))
    changed = copy.deepcopy(nb); c = changed['cells'][i]
    c['outputs'] = [{'output_type': 'stream', 'name': 'stdout', 'text': ['something else\n']}]
    assert differences(nb, changed) and not differences(nb, copy.deepcopy(nb))
    c['source'] = ['# output varies: for this test\n'] + c['source']
    assert not differences({**nb, 'cells': [*nb['cells'][:i], c, *nb['cells'][i + 1:]]}, changed)
    fig = {'output_type': 'display_data', 'data': {'image/png': '', 'text/plain': ['<Figure>']}, 'metadata': {}}
    cell = {'cell_type': 'code', 'source': ['plot()'], 'outputs': [fig]}
    assert differences({'cells': [cell]}, {'cells': [{**cell, 'outputs': [{**fig, 'data': {'text/plain': ['<Figure>']}}]}]})
    assert differences({'cells': [cell]}, {'cells': [{**cell, 'outputs': []}]})
