"Shared pytest fixtures: where the real data is, a clean environment for subprocesses, and JupyterLab for the browser tests"
import os, socket, subprocess, sys, time, urllib.request
from contextlib import contextmanager
from pathlib import Path
import pytest

ROOT = Path(__file__).resolve().parent.parent
CHROMIUM = '/usr/bin/chromium'
CHROMIUM_ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking',
                 '--disable-component-update', '--disable-sync']
SERVER_START_S = 180     # JupyterLab start-up limit (slow on a loaded machine)

@pytest.fixture(scope='session')
def shared_data():
    "The real development data (../shared/data or $VSR_CIC_SHARED); skips with the reason when absent"
    from vsr_cic.core import shared_data_dir
    d = shared_data_dir()
    if d is None: pytest.skip("real data not found: put it in ../shared/data beside the checkout or set VSR_CIC_SHARED")
    return d

def run_notebook(nb, dest, **params):
    "Run an experiment notebook with papermill (tiny parameters) into folder `dest`; return the executed notebook's path"
    import papermill as pm
    dest = Path(dest); dest.mkdir(parents=True, exist_ok=True)
    out = dest/Path(nb).name
    pm.execute_notebook(str(ROOT/'nbs'/nb), str(out), parameters=params, cwd=str(ROOT/'nbs'), progress_bar=False, kernel_name='python3')
    return out


def tiny_world(tmp_path_factory, name:str, n_images:int=40):
    "A private world of `n_images` images and tiny untrained checkpoints in the trainers' layout: (data folder, dirs)"
    import torch
    from vsr_cic.world import ensure_world
    from vsr_cic.experiments import write_tiny_checkpoints
    torch.set_num_threads(1)
    root = tmp_path_factory.mktemp(name)
    data = ensure_world(root/'data', n_images=n_images, render=False, n_workers=1)
    return data, write_tiny_checkpoints(data, root/'runs')


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


@pytest.fixture(scope='module')
def lab(lab_setup):
    """JupyterLab serving the unmodified nbs/explore_vsr.ipynb prepared with the test module's parameters: the module
    defines the fixture `lab_setup` -> dict(root=its folder, params=the notebook's parameters, env=extra environment).
    Skips without chromium or playwright; yields dict(url=the notebook's page, root=the folder)"""
    if not Path(CHROMIUM).exists(): pytest.skip(f"{CHROMIUM} not found: apt-get install -y chromium (CI's .ci/run does)")
    pytest.importorskip('playwright.sync_api', reason="the `playwright` python package is not installed")
    import papermill as pm
    root = lab_setup['root']
    nbs = root/'nbs'; nbs.mkdir()
    pm.execute_notebook(str(ROOT/'nbs'/'explore_vsr.ipynb'), str(nbs/'explore_vsr.ipynb'), prepare_only=True,
                        parameters=lab_setup['params'])
    news = root/'settings'/'@jupyterlab'/'apputils-extension'                      # no 'Jupyter news?' toast over the widget
    news.mkdir(parents=True); (news/'notification.jupyterlab-settings').write_text('{"fetchNews": "false"}')
    port = _free_port()
    env = dict(os.environ, JUPYTER_RUNTIME_DIR=str(root/'rt'), JUPYTER_CONFIG_DIR=str(root/'cfg'), OMP_NUM_THREADS='1',
               JUPYTERLAB_WORKSPACES_DIR=str(root/'ws'), JUPYTERLAB_SETTINGS_DIR=str(root/'settings'), **lab_setup.get('env', {}))
    log = open(root/'lab.log', 'w')
    proc = subprocess.Popen([sys.executable, '-m', 'jupyter', 'lab', '--no-browser', '--allow-root', "--IdentityProvider.token=",
                             "--ServerApp.password=", '--port', str(port), '--ServerApp.port_retries=0', '--ServerApp.ip=127.0.0.1',
                             f'--ServerApp.root_dir={nbs}', f'--LabApp.workspaces_dir={root/"ws"}'],
                            cwd=str(nbs), env=env, stdout=log, stderr=subprocess.STDOUT)
    try:
        _wait_http(f'http://127.0.0.1:{port}/api', proc, root/'lab.log')
        yield dict(url=f'http://127.0.0.1:{port}/lab/tree/explore_vsr.ipynb', root=root)
    finally:
        proc.terminate()
        try: proc.wait(10)
        except subprocess.TimeoutExpired: proc.kill()
        log.close()


@contextmanager
def chromium_page(viewport:dict, fail_png:Path, show:tuple):
    "A page of headless chromium; when the block fails: a full-page screenshot to `fail_png`, the text of the `show` elements and of the notebook printed"
    from playwright.sync_api import sync_playwright
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        page = browser.new_page(viewport=viewport)
        try: yield page
        except Exception:
            page.screenshot(path=str(fail_png), full_page=True)
            for c in show:
                if page.locator(c).count(): print(c, repr(page.locator(c).first.text_content()))
            print(f"failure screenshot: {fail_png}\npage text: {page.locator('.jp-Notebook').first.inner_text()[-3000:]}")
            raise
        finally:
            browser.close()
