"""Trust boundaries, round four (issue #54), the own-photo surface: the photo bundle's JSON files are checked for shape
before use (a fingerprint recomputed over a bad file does not let it through), a boxes file with a UTF-8 byte-order
mark is read as the JSON it is (the CLI and the panel: a documented acceptance, pinned here — `guards.read_json_file`
hands `json` the file's bytes, which it decodes as utf-8-sig), and a phone photo (a real JPEG with EXIF orientation 6) is
read upright wherever boxes drawn on its upright view are used, so they land on their pixels and are said."""
import json, shutil
from pathlib import Path
import numpy as np, pytest
from PIL import Image

from test_trust_files import raises   # the refusal names what it refuses, briefly


@pytest.fixture(scope='module')
def models():
    import torch
    torch.set_num_threads(1)
    from vsr_cic.own_photo import load_photo_models
    return load_photo_models()


# ------------------------------------------------------------------ 1. the bundle's JSON files, checked for shape
@pytest.fixture
def bundle(tmp_path):
    from vsr_cic.own_photo import models_dir
    return Path(shutil.copytree(models_dir(), tmp_path/'bundle'))

def _rewrite(bundle:Path, name:str, text:str):
    "Replace one file of a bundle and recompute its fingerprint, so only the file's shape can refuse it"
    from vsr_cic.guards import bundle_fingerprint
    (bundle/name).write_text(text)
    meta = json.loads((bundle/'meta.json').read_text())
    meta['files'] = bundle_fingerprint(bundle)
    (bundle/'meta.json').write_text(json.dumps(meta))

BAD_JSON = {
    ('decoding.json', '[]'): 'must be a JSON object of decoding settings, not a list',
    ('decoding.json', '{}'): "no 'verb_forms'",
    ('decoding.json', '{"constrain_verbs": true, "verb_forms": {"1": [999999]}, "verb_extra": []}'): 'word ids below',
    ('decoding.json', '{"constrain_verbs": false, "open_words": "a"}'): "'open_words' must be a list",
    ('decoding.json', '{"constrain_verbs": false, "slot_word_limit": "3"}'): "'slot_word_limit' must be",
    ('verb_stats.json', '{}'): "needs an object 'role_sets'",
    ('verb_stats.json', '[]'): 'must be a JSON object of verb statistics, not a list',
    ('verb_stats.json', '{"role_sets": {}, "counts": {}, "lexicon": {}}'): "'role_sets' names no verb",
    ('verb_stats.json', '{"role_sets": {"ride": []}, "counts": {}, "lexicon": {}}'): "'role_sets' of 'ride'",
}

@pytest.mark.parametrize('case', list(BAD_JSON), ids=[f'{n}={t[:40]}' for n, t in BAD_JSON])
def test_bundle_json_of_the_wrong_shape_is_refused_naming_the_file(bundle, case):
    from vsr_cic.own_photo import load_photo_models, check_fingerprint
    name, text = case
    _rewrite(bundle, name, text)
    check_fingerprint(bundle, json.loads((bundle/'meta.json').read_text()))     # the fingerprint passes: the shape refuses
    raises(lambda: load_photo_models(bundle), name, BAD_JSON[case], kind=ValueError)

def test_cli_names_the_bad_bundle_file(bundle, tmp_path, capsys):
    from vsr_cic.own_photo import main
    _rewrite(bundle, 'decoding.json', '[]')
    Image.fromarray(np.full((30, 40, 3), 120, np.uint8)).save(tmp_path/'p.png')
    (tmp_path/'p.json').write_text(json.dumps({'image': 'p.png', 'boxes': [{'class': 'person', 'box': [2, 2, 30, 25]}]}))
    assert main([str(tmp_path/'p.png'), '--vsr', 'stand: ARG1', '--models', str(bundle)]) == 2
    err = capsys.readouterr().err
    assert 'decoding.json' in err and 'Traceback' not in err, err


# ------------------------------------------------------------------ 2. a boxes file with a UTF-8 byte-order mark
BOM = b'\xef\xbb\xbf'

def test_cli_reads_a_boxes_file_with_a_byte_order_mark(tmp_path, capsys):
    from vsr_cic.own_photo import main
    Image.fromarray(np.full((60, 80, 3), 120, np.uint8)).save(tmp_path/'p.png')
    spec = {'image': 'p.png', 'boxes': [{'class': 'person', 'box': [2, 2, 40, 55]}, {'class': 'horse', 'box': [40, 10, 78, 58]}]}
    (tmp_path/'p.json').write_bytes(BOM + json.dumps(spec).encode())
    assert main([str(tmp_path/'p.png'), '--vsr', 'ride: ARG0, ARG1']) == 0, capsys.readouterr().err
    out = capsys.readouterr().out
    assert 'ride: ARG0, ARG1  ->' in out and 'horse' in out, out

def test_panel_shows_the_boxes_of_a_file_with_a_byte_order_mark(tmp_path, models):
    from vsr_cic.widgets import OwnPhotoPanel
    Image.fromarray(np.full((30, 40, 3), 120, np.uint8)).save(tmp_path/'photo.png')
    raw = BOM + b'[{"class": "person", "box": [2, 2, 30, 25]}]'
    (tmp_path/'photo.json').write_bytes(raw)
    panel = OwnPhotoPanel(models, tmp_path/'uploads', picture=tmp_path/'photo.png')
    assert [b['label'] for b in panel.bbox.bboxes] == ['person'] and panel.error.value == '', panel.error.value
    assert (tmp_path/'photo.json').read_bytes() == raw                            # read, never rewritten


# ------------------------------------------------------------------ 3. a phone photo: EXIF orientation 6
def _phone_photo(tmp_path, shared_data):
    "A real coco_mini photo stored as a phone stores a portrait shot (EXIF orientation 6), and its COCO boxes in the upright view"
    coco = shared_data/'coco_mini'
    if not coco.exists(): pytest.skip(f"{coco} not found (the shared real data; see data/README.md)")
    ann = json.loads((coco/'annotations'/'instances_train2017.json').read_text())
    img = next(i for i in ann['images'] if i['file_name'] == '000000084533.jpg')      # a woman riding a motorcycle
    cats = {c['id']: c['name'] for c in ann['categories']}
    boxes = [{'class': cats[a['category_id']], 'box': [a['bbox'][0], a['bbox'][1], a['bbox'][0] + a['bbox'][2],
                                                       a['bbox'][1] + a['bbox'][3]]}
             for a in ann['annotations'] if a['image_id'] == img['id'] and not a.get('iscrowd')
             and cats[a['category_id']] in ('person', 'motorcycle')]
    up = Image.open(coco/'train2017'/img['file_name']).convert('RGB')
    ex = Image.Exif(); ex[0x0112] = 6
    pic = tmp_path/'phone.jpg'
    up.transpose(Image.Transpose.ROTATE_90).save(pic, exif=ex.tobytes(), quality=92)   # stored on its side
    with Image.open(pic) as im: assert im.getexif().get(0x0112) == 6 and im.size == up.size[::-1]
    return pic, boxes, up.size

def test_phone_photo_boxes_land_in_the_explorer_path(tmp_path, shared_data):
    "`photos.own_photo` (the explorer's own photo): the boxes, drawn upright, land on the upright picture and are said"
    import torch
    torch.set_num_threads(1)
    from vsr_cic.own_photo import load_photo_models
    from vsr_cic.photos import own_photo
    from vsr_cic.vsr import as_vsrs
    pic, boxes, (W, H) = _phone_photo(tmp_path, shared_data)
    pipe = load_photo_models(box_words=False).pipe
    (tmp_path/'phone.json').write_text(json.dumps({'image': 'phone.jpg', 'boxes': boxes}))
    pp = own_photo(pipe, tmp_path/'phone.json')
    assert tuple(pp['size']) == (W, H), pp['size']
    np.testing.assert_allclose(np.asarray(pp['boxes'])[:len(boxes)], [b['box'] for b in boxes], atol=0.5)
    cap = pipe('my_photo', as_vsrs('ride: ARG0, ARG1'), n_structures=1, beam=3).captions[0]['caption']
    assert 'motorcycle' in cap.split() and 'riding' in cap.split(), cap

def test_phone_photo_boxes_land_in_caption_photo(tmp_path, shared_data, models):
    from vsr_cic.own_photo import caption_photo
    pic, boxes, (W, H) = _phone_photo(tmp_path, shared_data)
    out = caption_photo(models, pic, [{**b, 'class': 'woman' if b['class'] == 'person' else b['class']} for b in boxes],
                        'ride: ARG0, ARG1')
    assert out['image'].shape[:2] == (H, W) and any('EXIF orientation (6)' in n for n in out['notes']), out['notes']
    cap = out['results'][0]['caption'].split()
    assert 'woman' in cap and 'motorcycle' in cap and 'riding' in cap, cap
