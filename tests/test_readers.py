"Readers of the official formats on the real samples in the shared data folder (formats/, coco_mini, Multi30k)"
import json
import numpy as np
import pytest
from vsr_cic.core import shared_data_dir
from vsr_cic.readers import read_coco_entities, read_coco, FormatError, tokenize
from vsr_cic.flickr import read_flickr_entities, read_multi30k, parse_flickr_sentence
from vsr_cic.data import validate_caption

SD = shared_data_dir()
need_shared = pytest.mark.skipif(SD is None, reason="shared data folder not found: set VSR_CIC_SHARED to the shared/data folder")

@need_shared
def test_coco_entities_samples():
    ce = SD/'formats'/'coco_entities'
    demo = read_coco_entities(ce/'sct_demo_264169.json', default_split='train', image_dir=ce)
    im, cap = demo.images[0], demo.captions[0]
    assert (im['width'], im['height']) == (640, 427) and len(demo.boxes['264169']) == 7
    assert [c['class'] for c in cap['chunks']] == ['woman', 'sunglasses', 'horse', 'beach']
    assert all(demo.box_classes['264169'][i] == 'woman' for i in im['sets'][cap['chunks'][0]['set']])
    x = read_coco_entities(ce/'x1aox1a_520208.json', image_dir=ce)
    assert (len(x.captions), sum(len(c['chunks']) for c in x.captions), len(x.boxes['520208'])) == (5, 16, 7)
    for c in x.captions:   # every chunk's words sit where det_sequences puts its class
        assert all(0 <= ch['span'][0] < ch['span'][1] <= len(c['tokens']) for ch in c['chunks'])

@need_shared
def test_coco_entities_errors(tmp_path):
    d = json.loads((SD/'formats'/'coco_entities'/'x1aox1a_520208.json').read_text())
    cap = next(iter(d['520208']))
    del d['520208'][cap]['noun_chunks']
    (tmp_path/'bad.json').write_text(json.dumps(d))
    with pytest.raises(FormatError, match=r"bad.json: image 520208, caption .*missing field 'noun_chunks'"):
        read_coco_entities(tmp_path/'bad.json')

@need_shared
def test_flickr_entities_sentences():
    fe = SD/'formats'/'flickr30k_entities'
    r = read_flickr_entities(fe/'Sentences', image_dir=fe/'images')
    assert (len(r.images), len(r.captions)) == (10, 50)
    assert sum(len(c['chunks']) for c in r.captions) == 171
    assert len({(c['image_id'], ch['chain']) for c in r.captions for ch in c['chunks'] if ch['chain']}) == 77
    types = [t for c in r.captions for ch in c['chunks'] for t in [ch['class']]]
    assert types.count('people') >= 60
    # the sentences equal the Multi30k captions of the same ids once the brackets are stripped
    caps = json.loads((SD/'flickr30k_images'/'captions.json').read_text())
    for iid in ('4945942737', '6338542128'):
        mine = [c['tokens'] for c in r.captions if c['image_id'] == iid]
        assert mine == [tokenize(t) for t in caps[iid]]

def test_flickr_sentence_errors():
    with pytest.raises(FormatError, match=r"s.txt: phrase \[/EN#3 … is never closed"):
        parse_flickr_sentence('[/EN#3/people A man walks', 's.txt')

@need_shared
def test_coco_captions_and_instances():
    a = SD/'coco_mini'/'annotations'
    r = read_coco(a/'captions_train2017.json', a/'instances_train2017.json', image_dir=SD/'coco_mini'/'train2017')
    assert (len(r.images), len(r.captions), sum(len(b) for b in r.boxes.values())) == (80, 400, 739)
    assert r.meta['classes'][0] == '__background__' and len(r.meta['classes']) == 81
    for im in r.images:
        b = r.boxes[im['image_id']]
        assert (b[:, 0] >= 0).all() and (b[:, 2] <= im['width']).all() and (b[:, 3] <= im['height']).all()
    for c in r.captions: validate_caption(c)

@need_shared
def test_coco_box_outside_image(tmp_path):
    a = SD/'coco_mini'/'annotations'
    ij = json.loads((a/'instances_train2017.json').read_text())
    ij['annotations'][0]['bbox'] = [600, 10, 500, 10]
    (tmp_path/'i.json').write_text(json.dumps(ij))
    with pytest.raises(FormatError, match=r"i.json: annotations\[0\] .*is outside image"):
        read_coco(a/'captions_train2017.json', tmp_path/'i.json')

@need_shared
def test_multi30k():
    r = read_multi30k(SD/'flickr30k_captions', splits=['val', 'test_2016'])
    assert (len(r.images), len(r.captions)) == (2014, 10070)
    assert {i['split'] for i in r.images} == {'val', 'test'}
