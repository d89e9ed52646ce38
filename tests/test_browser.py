"""Real-browser test of the VSR explorer: JupyterLab + headless Debian chromium (Playwright, never `playwright install`)
open nbs/explore_vsr.ipynb on a tiny world with tiny untrained checkpoints, run all cells, change the verb in the
rendered widget and check that the caption changes; a screenshot goes to the test's tmp folder"""
import os, socket, subprocess, sys, time, urllib.request
from pathlib import Path
import pytest
from conftest import ROOT

CHROMIUM = '/usr/bin/chromium'
CHROMIUM_ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking',
                 '--disable-component-update', '--disable-sync']
N_IMAGES = 20            # tiny world: generated (and rendered) in seconds
SERVER_START_S = 60      # JupyterLab start-up limit
WIDGET_S = 60_000        # ms to wait for the kernel to run all cells and the widget to render
RUN_ALL_TRIES = 3        # the menu click is retried when no cell started (kernel still connecting)
SPECIAL_BIAS = -30.      # output bias of <pad>/<unk>/<bos>/<eos> in the tiny captioner (see _no_early_stop)
CHANGE_S = 30_000        # ms to wait for the caption to follow a change


def _free_port()->int:
    with socket.socket() as s:
        s.bind(('127.0.0.1', 0)); return s.getsockname()[1]


def _wait_http(url:str, proc, log, limit:float=SERVER_START_S):
    t = time.time()
    while time.time() - t < limit:
        if proc.poll() is not None: raise RuntimeError(f"jupyter lab exited with code {proc.returncode}; see its log {log}")
        try:
            urllib.request.urlopen(url, timeout=2); return
        except Exception: time.sleep(0.5)
    raise TimeoutError(f"jupyter lab did not answer {url} within {limit}s")


def _no_early_stop(model_pt:Path):
    "An untrained captioner often says <eos> first (an empty caption): bias its specials away so it writes words"
    import torch
    from vsr_cic.captioner import PAD_ID, UNK_ID, BOS_ID, EOS_ID
    ck = torch.load(model_pt, weights_only=False)
    ck['model']['out.bias'][[PAD_ID, UNK_ID, BOS_ID, EOS_ID]] = SPECIAL_BIAS
    torch.save(ck, model_pt)


@pytest.fixture(scope='module')
def tiny_runs(tmp_path_factory):
    "A tiny rendered world, tiny checkpoints (the captioner biased to write words) and the explorer's parameters for them"
    import torch
    torch.set_num_threads(1)
    from vsr_cic.world import ensure_world
    from vsr_cic.experiments import write_tiny_checkpoints
    from vsr_cic.data import load_dataset
    from vsr_cic.widgets import verb_frames
    root = tmp_path_factory.mktemp('browser')
    data = ensure_world(root/'data', n_images=N_IMAGES, render=True, n_workers=1)
    dirs = write_tiny_checkpoints(data, root/'runs', methods=('ours',))
    cap_dir = Path(dirs['ours'][0] if isinstance(dirs['ours'], (list, tuple)) else dirs['ours'])
    _no_early_stop(cap_dir/'model.pt')
    frames = verb_frames(load_dataset(data))
    verbs = [v for v, rs in frames.items() if 'ARG0' in rs]
    assert len(verbs) >= 2, f"tiny world has too few verbs with ARG0: {frames}"
    params = dict(data_dir=str(data), gsrl_dir=str(dirs['gsrl']), planner_dir=str(dirs['planner']), captioner_dir=str(cap_dir),
                  out_dir=str(root/'runs'/'explore_vsr'), device='cpu', world_images=3, vsr=f'{verbs[0]}: ARG0')
    return dict(root=root, verbs=verbs, params=params)


def test_explore_notebook_papermill(tiny_runs, tmp_path):
    "Headless smoke run of nbs/explore_vsr.ipynb (runs without chromium too)"
    import json
    from conftest import run_notebook
    out = run_notebook('explore_vsr.ipynb', tmp_path, **{**tiny_runs['params'], 'out_dir': str(tmp_path/'run')})
    nb = json.loads(out.read_text())
    texts = [str(o.get('data', {}).get('text/plain', '')) for c in nb['cells'] for o in c.get('outputs', [])]
    assert any('VSRExplorer' in t for t in texts), texts
    missing = json.loads((tmp_path/'run'/'run_config.json').read_text())['missing']
    assert missing == {}, missing


@pytest.fixture(scope='module')
def lab(tiny_runs):
    "JupyterLab serving the explorer notebook parameterised for the tiny runs"
    if not Path(CHROMIUM).exists(): pytest.skip(f"{CHROMIUM} not found: apt-get install -y chromium (CI's .ci/run does)")
    pytest.importorskip('playwright.sync_api', reason="the `playwright` python package is not installed")
    import papermill as pm
    root, verbs = tiny_runs['root'], tiny_runs['verbs']
    nbs = root/'nbs'; nbs.mkdir()
    pm.execute_notebook(str(ROOT/'nbs'/'explore_vsr.ipynb'), str(nbs/'explore_vsr.ipynb'), prepare_only=True,
                        parameters=tiny_runs['params'])
    news = root/'settings'/'@jupyterlab'/'apputils-extension'                      # no 'Jupyter news?' toast over the widget
    news.mkdir(parents=True); (news/'notification.jupyterlab-settings').write_text('{"fetchNews": "false"}')
    port = _free_port()
    env = dict(os.environ, JUPYTER_RUNTIME_DIR=str(root/'rt'), JUPYTER_CONFIG_DIR=str(root/'cfg'), OMP_NUM_THREADS='1',
               JUPYTERLAB_WORKSPACES_DIR=str(root/'ws'),
               JUPYTERLAB_SETTINGS_DIR=str(root/'settings'))
    log = open(root/'lab.log', 'w')
    proc = subprocess.Popen([sys.executable, '-m', 'jupyter', 'lab', '--no-browser', '--allow-root', "--IdentityProvider.token=", "--ServerApp.password=",
                             '--port', str(port), '--ServerApp.port_retries=0', '--ServerApp.ip=127.0.0.1',
                             f'--ServerApp.root_dir={nbs}', f'--LabApp.workspaces_dir={root/"ws"}'],
                            cwd=str(nbs), env=env, stdout=log, stderr=subprocess.STDOUT)
    try:
        _wait_http(f'http://127.0.0.1:{port}/api', proc, root/'lab.log')
        yield dict(url=f'http://127.0.0.1:{port}/lab/tree/explore_vsr.ipynb', root=root, verbs=verbs)
    finally:
        proc.terminate()
        try: proc.wait(10)
        except subprocess.TimeoutExpired: proc.kill()
        log.close()


def test_explorer_in_browser(lab):
    from playwright.sync_api import sync_playwright
    shot = lab['root']/'explore_vsr.png'
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            page = browser.new_page(viewport={'width': 1400, 'height': 1000})
            page.goto(lab['url'])
            page.wait_for_selector('.jp-Notebook', timeout=WIDGET_S)
            page.locator('.jp-StatusBar-TextItem', has_text='Idle').first.wait_for(timeout=WIDGET_S)   # kernel connected
            cap = page.locator('.vsr-caption').first
            for attempt in range(RUN_ALL_TRIES):                                          # Run ▸ Run All Cells
                page.locator('.lm-MenuBar-itemLabel', has_text='Run').first.click()
                page.locator('.lm-Menu-itemLabel', has_text='Run All Cells').first.click()
                try: cap.wait_for(state='attached', timeout=WIDGET_S // RUN_ALL_TRIES); break
                except Exception:
                    if attempt == RUN_ALL_TRIES - 1: raise
            page.wait_for_function("() => { const e = document.querySelector('.vsr-caption'); return e && e.textContent.trim().length > 0 }",
                                   timeout=WIDGET_S)
            page.locator('.jp-Cell').last.scroll_into_view_if_needed(); cap.scroll_into_view_if_needed()
            before, before_html = cap.text_content(), cap.inner_html()
            img = page.locator('img.vsr-grounding').first                                   # the grounding picture
            img.wait_for(state='attached', timeout=CHANGE_S)
            assert img.get_attribute('src'), "the grounding image has no picture"
            assert page.locator('.vsr-text input').first.input_value() == f"{lab['verbs'][0]}: ARG0"
            page.locator('.vsr-verb select').first.select_option(lab['verbs'][1])        # change the verb in the page
            page.wait_for_function("(old) => { const e = document.querySelector('.vsr-caption'); return e && e.innerHTML !== old }",
                                   arg=before_html, timeout=CHANGE_S)
            assert page.locator('.vsr-text input').first.input_value().startswith(f"{lab['verbs'][1]}:")
            after = cap.text_content()
            assert after != before, f"caption text did not change with the verb: {after!r}"
            page.locator('.vsr-text input').first.fill('not a vsr: ARG0')                 # bad text: message, no traceback
            page.locator('.vsr-text input').first.press('Enter')
            page.wait_for_function("() => document.querySelector('.vsr-error').textContent.trim().length > 0", timeout=CHANGE_S)
            no = page.get_by_role('button', name='No')                                  # the 'Jupyter news?' toast
            if no.count(): no.first.click()
            page.locator('.vsr-verb').first.scroll_into_view_if_needed()
            page.screenshot(path=str(shot), full_page=True)
            print(f"screenshot: {shot}\ncaption before: {before!r}\ncaption after:  {after!r}")
        except Exception:
            fail = lab['root']/'explore_vsr_failed.png'
            page.screenshot(path=str(fail), full_page=True)
            for c in ('.vsr-status', '.vsr-caption', '.vsr-error', '.vsr-note'):
                if page.locator(c).count(): print(c, repr(page.locator(c).first.text_content()))
            print(f"failure screenshot: {fail}\npage text: {page.locator('.jp-Notebook').first.inner_text()[-3000:]}")
            raise
        finally:
            browser.close()
    assert shot.exists() and shot.stat().st_size > 0
