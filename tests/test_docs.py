"""The notebooks' prose stands on its own in a fresh clone: links between notebooks resolve (the file exists and, for
`official_code.ipynb#anchor`, the anchor is a heading there), and no markdown cell points at ../shared/REFERENCE.md,
which only the development machine has"""
import json, re
from pathlib import Path
import pytest

NBS = Path(__file__).resolve().parent.parent/'nbs'
DOC = 'official_code.ipynb'
LINK = re.compile(r'\]\(([^)\s]+)\)')                                   # markdown link targets
HEADING = re.compile(r'^#{1,6}\s+(.*)$', re.M)
ANCHOR = re.compile(r'<a\s+(?:id|name)="([^"]+)"')
REFERENCE = re.compile(r'\.\./shared/REFERENCE|REFERENCE\.md|REFERENCE\s*§')

def markdown_cells(path:Path)->list[str]:
    return [''.join(c['source']) for c in json.loads(path.read_text())['cells'] if c['cell_type'] == 'markdown']

def slug(text:str)->str:
    "GitHub/Quarto-style heading id: lower case, punctuation dropped, spaces to hyphens"
    text = re.sub(r'<[^>]+>', '', text).strip().lower()
    return re.sub(r'\s+', '-', re.sub(r'[^\w\s-]', '', text))

def heading_anchors(path:Path)->set[str]:
    "Ids a link may target: explicit `<a id=...>` inside a heading, and the heading's own slug"
    out = set()
    for md in markdown_cells(path):
        for h in HEADING.findall(md):
            out.update(ANCHOR.findall(h))
            out.add(slug(h))
    return out

def links(path:Path)->list[tuple[str, str]]:
    "(file, anchor) of every relative link in the notebook's markdown; file '' = the same notebook"
    out = []
    for md in markdown_cells(path):
        for target in LINK.findall(md):
            if re.match(r'[a-z]+:', target): continue                   # http:, https:, mailto:
            file, _, anchor = target.partition('#')
            out.append((file, anchor))
    return out

NOTEBOOKS = sorted(NBS.rglob('*.ipynb'))

def test_doc_exists_and_has_anchors():
    anchors = heading_anchors(NBS/DOC)
    assert {'data-formats', 'gsrl', 's-level', 'r-level', 'captioner', 'training', 'beam-search', 'verb-forms', 'merge',
            'metrics', 'controllability', 'srl', 'quirks', 'paper-vs-code', 'speed', 'where-we-differ'} <= anchors, anchors

def test_doc_has_no_code():
    "A documentation page: markdown only, nothing exported"
    cells = json.loads((NBS/DOC).read_text())['cells']
    assert [c['cell_type'] for c in cells if c['cell_type'] != 'markdown'] == []

@pytest.mark.parametrize('nb', NOTEBOOKS, ids=lambda p: str(p.relative_to(NBS)))
def test_links_resolve(nb):
    base = NBS.parent if nb.name == 'index.ipynb' else nb.parent      # index.ipynb is rendered to ../README.md
    bad = []
    for file, anchor in links(nb):
        target = nb if file == '' else base/file
        if not target.exists():
            bad.append(f"{file}: no such file")
        elif anchor and target.suffix == '.ipynb' and anchor not in heading_anchors(target):
            bad.append(f"{file}#{anchor}: no heading with that anchor in {target.name}")
    assert not bad, f"{nb.name}: " + '; '.join(bad)

@pytest.mark.parametrize('nb', NOTEBOOKS, ids=lambda p: str(p.relative_to(NBS)))
def test_no_shared_reference_citation(nb):
    hits = [m.group(0) for md in markdown_cells(nb) for m in REFERENCE.finditer(md)]
    assert not hits, f"{nb.name} cites the development-only REFERENCE.md ({hits}); link {DOC}#<section> instead"

def test_checks_can_fail(tmp_path):
    "The checks see a broken anchor, a missing file and a REFERENCE citation"
    nb = {'cells': [{'cell_type': 'markdown', 'metadata': {}, 'source': [
        '## <a id="here"></a>Here\n', f'[a]({DOC}#no-such-anchor) [b](missing.ipynb) [c](#here) see ../shared/REFERENCE.md §1.3']}],
          'metadata': {}, 'nbformat': 4, 'nbformat_minor': 5}
    p = tmp_path/'x.ipynb'
    p.write_text(json.dumps(nb))
    found = links(p)
    assert found == [(DOC, 'no-such-anchor'), ('missing.ipynb', ''), ('', 'here')]
    assert 'no-such-anchor' not in heading_anchors(NBS/DOC) and 'here' in heading_anchors(p)
    assert REFERENCE.search(markdown_cells(p)[0])


MARKDOWN_PAGES = [NBS.parent/'README.md', *sorted((NBS.parent/'docs').rglob('*.md')), *sorted((NBS.parent/'results').glob('*.md'))]

@pytest.mark.parametrize('page', MARKDOWN_PAGES, ids=lambda p: str(p.relative_to(NBS.parent)))
def test_page_links_resolve(page):
    "Relative links of the README, the docs pages and the results pages point at files that exist"
    bad = [t for t in LINK.findall(page.read_text())
           if not re.match(r'[a-z]+:', t) and t.partition('#')[0] and not (page.parent/t.partition('#')[0]).exists()]
    assert not bad, f"{page.name}: links to missing files {bad}"
