"Papermill smoke runs of nbs/experiments/build_dataset.ipynb on real data (coco_mini images + boxes; COCO val captions text-only)"
import json
from pathlib import Path
import pytest
from vsr_cic.core import shared_data_dir
from vsr_cic.data import load_dataset, frame_structure

SD = shared_data_dir()
NB = Path(__file__).resolve().parent.parent/'nbs'/'experiments'/'build_dataset.ipynb'
pytestmark = pytest.mark.skipif(SD is None, reason="shared data folder not found: set VSR_CIC_SHARED to the shared/data folder")

def run(tmp_path, **params):
    from conftest import run_notebook
    run_notebook(f'experiments/{NB.name}', tmp_path, **params)
    return json.loads((Path(params['out_dir'])/'report.json').read_text())

def test_build_coco_mini(tmp_path):
    pytest.importorskip('efficientnet_lite_pytorch')
    out = tmp_path/'ds'
    rep = run(tmp_path, out_dir=str(out), limit=3, device='cpu')
    ds = load_dataset(out)
    assert len(ds.captions) == rep['captions_kept'] > 0
    assert rep['captions_kept'] + sum(rep['captions_dropped'].values()) == rep['captions_read'] == 15
    assert ds.meta['grouping'] == 'class' and ds.meta['classes'][0] == '__background__'
    for c in ds.captions:
        assert c['frames'] and all(frame_structure(c, f) for f in range(len(c['frames'])))
        assert any(s['set'] is not None for s in c['slots'])
    im = next(iter(ds.images.values()))
    f = ds.features(im['image_id'])
    assert f['feats'].shape == (len(f['boxes']), 1280) and f['cls_prob'].shape[1] == 81
    assert (out/im['file']).exists()
    rep2 = run(tmp_path, out_dir=str(out), limit=3, device='cpu')      # rerun resumes: nothing recomputed
    assert rep2['stats']['features skipped'] == rep['images'] and rep2['captions_kept'] == rep['captions_kept']

def test_build_text_only(tmp_path):
    out = tmp_path/'txt'
    rep = run(tmp_path, out_dir=str(out), text_only=True, limit=10,
              captions_json=str(SD/'coco_captions'/'captions_val2017.json'))
    ds = load_dataset(out, validate=False)
    assert ds.meta['text_only'] and len(ds.captions) == rep['captions_kept'] > 0
    assert all(s['set'] is None for c in ds.captions for s in c['slots'])

def test_build_bad_instances(tmp_path):
    pm = pytest.importorskip('papermill')
    a = SD/'coco_mini'/'annotations'
    ij = json.loads((a/'instances_train2017.json').read_text())
    ij['annotations'][0]['category_id'] = 999
    (tmp_path/'inst.json').write_text(json.dumps(ij))
    with pytest.raises(pm.PapermillExecutionError, match=r"inst.json: annotations\[0\] .*unknown category_id 999"):
        run(tmp_path, out_dir=str(tmp_path/'bad'), limit=1, instances_json=str(tmp_path/'inst.json'),
            captions_json=str(a/'captions_train2017.json'), image_dir=str(SD/'coco_mini'/'train2017'))

XML = """<annotation><filename>{id}.jpg</filename><size><width>{w}</width><height>{h}</height><depth>3</depth></size>
{objs}</annotation>"""

def test_build_flickr_entities(tmp_path):
    "Real Flickr30k Entities sentences + a hand-written Annotations xml (no real one is available offline) -> grouping 'single'"
    pytest.importorskip('efficientnet_lite_pytorch')
    from PIL import Image
    from vsr_cic.flickr import read_flickr_entities
    from vsr_cic.build import build
    fe = SD/'formats'/'flickr30k_entities'
    iid = '4945942737'
    w, h = Image.open(fe/'images'/f'{iid}.jpg').size
    r0 = read_flickr_entities(fe/'Sentences', ids=[iid])
    chains = sorted({ch['chain'] for c in r0.captions for ch in c['chunks'] if ch['chain']})
    objs = ''.join(f"<object><name>{c}</name><bndbox><xmin>{1 + 10 * k}</xmin><ymin>1</ymin><xmax>{w // 2 + 10 * k}</xmax><ymax>{h // 2}</ymax></bndbox></object>"
                   for k, c in enumerate(chains))
    (tmp_path/'ann').mkdir(); (tmp_path/'ann'/f'{iid}.xml').write_text(XML.format(id=iid, w=w, h=h, objs=objs))
    r = read_flickr_entities(fe/'Sentences', annotations_dir=tmp_path/'ann', ids=[iid], image_dir=fe/'images')
    rep = build(r, tmp_path/'ds', image_dir=fe/'images', splits=None, device='cpu', progress=False)
    ds = load_dataset(tmp_path/'ds')
    assert ds.meta['grouping'] == 'single' and ds.images[iid]['sets'] == [[i] for i in range(len(chains))]
    assert rep['captions_kept'] == len(ds.captions) > 0 and rep['grounded_slots'] > 0
    assert ds.features(iid)['feats'].shape == (len(chains), 1280)

def test_build_from_vsr_files(tmp_path):
    "COCO Entities sample + hand-written VSR annotation files (no real ones offline): the given frames are kept, not re-parsed"
    pytest.importorskip('efficientnet_lite_pytorch')
    from vsr_cic.readers import read_coco_entities
    from vsr_cic.vsr_files import read_vsr_annotations, apply_vsr_annotations, VSR_FILES
    from vsr_cic.build import build
    ce = SD/'formats'/'coco_entities'
    cap = 'a woman in sunglasses riding a horse on a beach'
    files = dict(verb_idx={'ride': 0}, verbs={'264169': {cap: ['ride']}},
                 classes={'264169': {cap: ['woman', 'verb', 'horse', 'beach']}},
                 vs={'264169': {cap: {'verb': [['ride']] * 4, 'sr': [['ARG0'], ['V'], ['ARG1'], ['ARGM-LOC']]}}})
    for k, v in files.items(): (tmp_path/VSR_FILES[k]).write_text(json.dumps(v))
    recs = apply_vsr_annotations(read_coco_entities(ce/'sct_demo_264169.json', default_split='test', image_dir=ce),
                                 read_vsr_annotations(tmp_path))
    rep = build(recs, tmp_path/'ds', image_dir=ce, splits=None, device='cpu', progress=False)
    assert rep['stats']['captions with given frames'] == 1 and rep['captions_kept'] == 1
    ds = load_dataset(tmp_path/'ds')
    c = ds.captions[0]
    assert frame_structure(c, 0) == ['ARG0', 'V', 'ARG1', 'LOC'] and ds.images['264169']['split'] == 'test'
    assert [s['set'] is not None for s in c['slots']] == [True, False, True, True]
