"Shared pytest fixtures: where the real data is, and a clean environment for subprocesses"
import os, sys
from pathlib import Path
import pytest

ROOT = Path(__file__).resolve().parent.parent

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
