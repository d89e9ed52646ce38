"""Trust boundaries, round four (issue 54, item 3): results publishing, run archives, VSR text, the dataset builder and
the run lock, each called through the entry point a user reaches (publish, world_results, extract_archive,
pack_archive, the GPU script's pack, VSR.parse / parse_vsrs, build, the `vsr_train_captioner` console script) with the
hostile input the issue names. What every one asserts: the refusal is immediate and names the bad value, file or
field, and nothing is written, unpacked or followed out of its folder."""
import io, json, os, shutil, subprocess, sys, tarfile
from pathlib import Path
import numpy as np, pytest
from conftest import ROOT

from vsr_cic.guards import UnsafeInput
from test_trust_files import raises
from test_trust_round3 import _repo, _row, _metrics, snapshot, _bench


# ------------------------------------------------------------------ 1. publish: bounded work, every cell escaped
class TestPublish:
    def test_twenty_thousand_test_sets_are_refused_before_rendering(self, tmp_path):
        "20,000 rows, each its own test set (20 s of rendering before): refused at once with the count, nothing written"
        from vsr_cic import tables
        from vsr_cic.tables import publish
        MAX_TABLE1_ROWS = getattr(tables, 'MAX_TABLE1_ROWS', 5_000)
        root = _repo(tmp_path)
        f = _metrics(tmp_path, {'table1': [_row(test_set=f'set{i}') for i in range(20_000)]})
        before = snapshot(tmp_path)
        raises(lambda: publish(f, 'demo', 'T', root), 'm.json', '20,000 rows', f'at most {MAX_TABLE1_ROWS:,}', kind=UnsafeInput)
        assert snapshot(tmp_path) == before and not (root/'results').exists()

    def test_many_test_sets_within_the_row_cap_are_refused(self, tmp_path):
        from vsr_cic import tables
        from vsr_cic.tables import publish
        MAX_TEST_SETS = getattr(tables, 'MAX_TEST_SETS', 20)
        root = _repo(tmp_path)
        f = _metrics(tmp_path, {'table1': [_row(test_set=f'set{i}') for i in range(MAX_TEST_SETS + 1)]})
        raises(lambda: publish(f, 'demo', 'T', root), 'm.json', f'{MAX_TEST_SETS + 1:,} test sets', kind=UnsafeInput)
        assert not (root/'results').exists()

    EVIL = 'EVIL | --- | x\nnew line'
    CELLS = {   # where a string reaches a page: the heading of a test set, the captioners' records, Table 2's values
        'test_set': lambda e: {'table1': [_row(test_set=e)]},
        'per_seed seed': lambda e: {'table1': [_row(per_seed=[{'seed': e, 'epochs': {'xe': 1, 'rl': 0}}])]},
        'per_seed epochs': lambda e: {'table1': [_row(per_seed=[{'seed': 0, 'epochs': {'xe': e, 'rl': 0}}])]},
        'per_seed selected': lambda e: {'table1': [_row(per_seed=[{'seed': 0, 'selected': {'stage': e, 'epoch': 1}}])]},
        'table2 value': lambda e: {'table1': [_row()], 'table2': [{'method': 'Ours', 'k': 2, 'n': 5, 'Div-1': e}]},
    }

    @pytest.mark.parametrize('where', list(CELLS))
    def test_markdown_in_a_cell_stays_in_its_cell(self, tmp_path, where):
        from vsr_cic.tables import publish
        root = _repo(tmp_path)
        publish(_metrics(tmp_path, self.CELLS[where](self.EVIL)), 'demo', 'T', root)
        page = (root/'results'/'demo.md').read_text()
        assert 'EVIL \\| --- \\| x new line' in page, page                  # escaped pipes, the newline a space
        assert 'EVIL | ---' not in page and not any(l.startswith('new line') for l in page.splitlines()), page
        for table in page.split('\n\n'):                                     # every row of a table has its header's columns
            rows = [l for l in table.splitlines() if l.startswith('|')]
            assert len({l.replace('\\|', '').count('|') for l in rows}) <= 1, rows

    def test_an_evaluate_file_from_before_the_one_vocabulary_is_refused(self):
        "`world_results` no longer translates `proposals`/`captions`/`no_verb` rows (WORLD_VERBS is gone): it names the file"
        import vsr_cic.tables as tables
        old = {'method': 'no_verb', 'proposals': 'GT', 'captions': 'one-verb', 'n': 3, 'CIDEr-D': 0.1}
        raises(lambda: tables.world_results({'rows': [old]}, {}, 'runs/old/metrics.json'), 'runs/old/metrics.json',
               'Table 1 row 0', 're-run the evaluate step', kind=ValueError)
        assert not hasattr(tables, 'WORLD_VERBS')
        new = {'method': 'ours_no_verb', 'grounding': 'gt', 'verbs': 'one', 'n': 3, 'CIDEr-D': 0.1}
        m, _ = tables.world_results({'rows': [new]}, {}, 'x.json')
        assert [(r['method'], r['grounding'], r['verbs']) for r in m['table1']] == [('ours_no_verb', 'gt', 'one')]


# ------------------------------------------------------------------ 2. run archives: capped before inflating, no link out
@pytest.fixture(scope='module')
def xz_bomb(tmp_path_factory):
    "One 256 MiB member of zeros in a ~40 KB .tar.xz"
    f = tmp_path_factory.mktemp('bomb')/'run.tar.xz'
    with tarfile.open(f, 'w:xz') as t:
        z = tarfile.TarInfo('data/train/features.hdf5'); z.size = 256 << 20
        t.addfile(z, io.BytesIO(bytes(256 << 20)))
    assert f.stat().st_size < 100_000
    return f

class TestArchives:
    def test_a_40kb_archive_declaring_256mib_is_refused_before_inflating(self, xz_bomb, tmp_path):
        from vsr_cic.guards import extract_archive
        raises(lambda: extract_archive(xz_bomb, tmp_path/'w'), 'run.tar.xz', 'features.hdf5', 'compression bomb',
               kind=UnsafeInput)
        assert not (tmp_path/'w').exists()

    def test_the_gpu_decode_refuses_it_too(self, xz_bomb, tmp_path):
        g = _bench()
        raises(lambda: g.decode(xz_bomb, tmp_path/'out', work=tmp_path/'work'), 'run.tar.xz', 'compression bomb',
               kind=UnsafeInput)
        assert sorted(os.listdir(tmp_path/'work')) == ['.vsr_cic_work']    # nothing unpacked

    def _run(self, tmp_path, g):
        run = tmp_path/'run'
        for f in g.SHARED: (run/f).parent.mkdir(parents=True, exist_ok=True); (run/f).write_text(f)
        for d in g.SHARED_DIRS: (run/d/'s').mkdir(parents=True); (run/d/'s'/'best.pt').write_bytes(b'w')
        (tmp_path/'id_rsa').write_text('secret')
        os.symlink(tmp_path/'id_rsa', run/'gsrl'/'s'/'extra.pt')              # a link out of the run
        return run

    def test_pack_archive_refuses_a_link_out_of_the_run(self, tmp_path):
        from vsr_cic.guards import pack_archive
        run = self._run(tmp_path, _bench())
        raises(lambda: pack_archive(run, tmp_path/'p.tar.xz', ['gsrl/s/best.pt', 'gsrl/s/extra.pt']), 'gsrl/s/extra.pt',
               'outside', kind=UnsafeInput)
        assert not (tmp_path/'p.tar.xz').exists() and not list(tmp_path.glob('.p.tar.xz*'))

    def test_the_gpu_pack_refuses_a_link_out_of_the_run(self, tmp_path):
        g = _bench()
        run = self._run(tmp_path, g)
        raises(lambda: g.pack(run, tmp_path/'p.tar.xz'), 'extra.pt', 'outside', kind=UnsafeInput)
        assert not (tmp_path/'p.tar.xz').exists()


# ------------------------------------------------------------------ 3. VSR text: only roles a VSR can ask for
TYPED = {   # text -> the close valid spelling (or the reason) the message gives
    'ride: R-LOC': "write 'LOC'", 'ride: C-ARGM-LOC': "write 'LOC'", 'ride: B-C-ARG0': "write 'ARG0'",
    'ride: I-ARG0': "write 'ARG0'", 'ride: ARG0, NEG*3': "write 'NEG'", 'ride: MOD*2': "write 'MOD'",
    'ride: DIS*9': "write 'DIS'", 'z': 'one letter', 'ｒｉｄｅ: ARG0': "write 'ride'", 'ride: ＡＲＧ0': "write 'ARG0'",
    'ride: ARG0; ride: ARG0': 'given twice',
}

class TestVSRText:
    @pytest.mark.parametrize('text', list(TYPED))
    def test_text_that_names_no_role_is_refused_with_the_valid_spelling(self, text):
        from vsr_cic.vsr import parse_vsrs, VSRError
        raises(lambda: parse_vsrs(text), TYPED[text], kind=VSRError)

    def test_the_pipeline_refuses_it_before_any_model_runs(self):
        from vsr_cic.vsr import as_vsrs, VSRError
        raises(lambda: as_vsrs(['ride: ARG0, ARG1', 'hold: R-ARG1']), "'R-ARG1'", "write 'ARG1'", kind=VSRError)

    def test_valid_text_still_reads(self):
        from vsr_cic.vsr import parse_vsrs, VSR
        assert parse_vsrs('ride: ARG0, LOC*2, NEG; ride: ARG1') == [VSR('ride', ['ARG0', ('LOC', 2), 'NEG']), VSR('ride', ['ARG1'])]


# ------------------------------------------------------------------ 4. the dataset builder: undecodable pictures, absurd captions
SD = None
try:
    from vsr_cic.core import shared_data_dir
    SD = shared_data_dir()
except Exception: pass
needs_data = pytest.mark.skipif(SD is None, reason="shared data folder not found: set VSR_CIC_SHARED to the shared/data folder")

@needs_data
class TestBuilder:
    def _coco(self, tmp_path, n=2):
        "coco_mini's first `n` images, their pictures copied into a folder of the test's own"
        cm = SD/'coco_mini'
        cj = json.loads((cm/'annotations'/'captions_train2017.json').read_text())
        ij = json.loads((cm/'annotations'/'instances_train2017.json').read_text())
        keep = [im['id'] for im in cj['images'][:n]]
        for j in (cj, ij):
            j['images'] = [im for im in j['images'] if im['id'] in keep]
            j['annotations'] = [a for a in j['annotations'] if a['image_id'] in keep]
        pics = tmp_path/'pics'; pics.mkdir()
        for im in cj['images']: shutil.copy(cm/'train2017'/im['file_name'], pics/im['file_name'])
        (tmp_path/'captions.json').write_text(json.dumps(cj)); (tmp_path/'instances.json').write_text(json.dumps(ij))
        return cj, pics

    @pytest.mark.parametrize('damage', ['truncated', 'not a picture'])
    def test_an_undecodable_picture_is_refused_with_the_image_and_field(self, tmp_path, damage):
        from vsr_cic.readers import read_coco
        from vsr_cic.build import build
        cj, pics = self._coco(tmp_path)
        bad = pics/cj['images'][1]['file_name']
        raw = bad.read_bytes()
        bad.write_bytes(raw[:len(raw) // 2] if damage == 'truncated' else b'\xff\xd8\xff' + bytes(2000))
        recs = read_coco(tmp_path/'captions.json', tmp_path/'instances.json', image_dir=pics)
        raises(lambda: build(recs, tmp_path/'ds', image_dir=pics, progress=False, feature_kind='class'),
               bad.name, 'field file', 'cannot be decoded', kind=ValueError)
        assert not (tmp_path/'ds'/'captions.jsonl').exists() and not (tmp_path/'ds'/'images').exists()

    def test_a_twenty_thousand_word_caption_is_refused_with_the_file_and_field(self, tmp_path):
        from vsr_cic.readers import read_coco
        from vsr_cic.build import build
        cj, pics = self._coco(tmp_path)
        cj['annotations'][3]['caption'] = ' '.join(['word'] * 20_000)
        (tmp_path/'captions.json').write_text(json.dumps(cj))
        recs = read_coco(tmp_path/'captions.json')
        raises(lambda: build(recs, tmp_path/'ds', text_only=True, progress=False), 'captions.json',
               f"caption '{cj['annotations'][3]['id']}'", "field 'caption'", '20,000 tokens', kind=ValueError)
        assert not (tmp_path/'ds'/'captions.jsonl').exists()


# ------------------------------------------------------------------ 5. the run lock: a second trainer stops at once
class TestRunLock:
    def test_a_rank_of_a_second_torchrun_job_gets_the_lock_message(self, tmp_path):
        "Job A holds the run folder; rank 1 of job B (torchrun) stops at once with the lock's message, no traceback"
        from vsr_cic.guards import claim_run, JOB_ENV
        run = claim_run(tmp_path/'run', 'train_captioner')
        env = {**os.environ, 'PYTHONPATH': str(ROOT)}
        holder = subprocess.Popen([sys.executable, '-c', f"import os, time; os.environ[{JOB_ENV!r}] = 'job-a'\n"
                                   f"from vsr_cic.guards import run_lock\nwith run_lock({str(run)!r}): print('held', flush=True); time.sleep(300)"],
                                  stdout=subprocess.PIPE, text=True, env=env)
        try:
            assert holder.stdout.readline().strip() == 'held'
            r = subprocess.run([sys.executable, '-c', 'from vsr_cic.captioning import train_captioner_cli; train_captioner_cli()',
                                '--out_dir', str(run), '--epochs_xe', '0', '--epochs_rl', '0'], capture_output=True, text=True,
                               timeout=300, env={**env, 'RANK': '1', 'LOCAL_RANK': '1', JOB_ENV: 'job-b'})
        finally: holder.kill(); holder.wait()
        assert r.returncode == 2 and 'Traceback' not in r.stderr, r.stderr[-2000:]
        assert f'in use by another process (pid {holder.pid}' in r.stderr, r.stderr[-2000:]
