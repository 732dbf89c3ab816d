"""The wheel is the product: built from the repository and installed into a clean folder, it carries the sample
traces and runs the README's library example from outside the checkout."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from rredcot_viz.paths import PROJECT_ROOT

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
def installed(tmp_path_factory) -> Path:
    """The wheel built from the repository, installed into a clean folder (the ``--target`` of pip)."""
    folder = tmp_path_factory.mktemp("wheel")
    build = [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q", "-w", str(folder),
             str(PROJECT_ROOT)]  # fmt: skip
    subprocess.run(build, check=True, capture_output=True, timeout=300)
    (wheel,) = folder.glob("rredcot_viz-*.whl")
    target = folder / "site"
    install = [sys.executable, "-m", "pip", "install", "--no-deps", "-q", "--target", str(target), str(wheel)]
    subprocess.run(install, check=True, capture_output=True, timeout=300)
    return target


def outside_checkout(target: Path, tmp_path: Path) -> dict[str, str]:
    """An environment that imports the installed copy, with no store or data folder of the checkout's."""
    env = {k: v for k, v in os.environ.items() if k not in ("RREDCOT_STORE", "RREDCOT_DATA_DIR")}
    return {**env, "PYTHONPATH": str(target), "HF_HUB_OFFLINE": "1", "XDG_DATA_HOME": str(tmp_path / "xdg")}


def test_an_installed_wheel_has_the_samples_and_runs_the_library_example(installed, tmp_path):
    """``sample_traces()`` returned an empty list outside the checkout (the samples were not in the wheel)."""
    target = installed
    code = (
        "import rredcot_viz, rredcot_viz.traces as t\n"
        f"assert rredcot_viz.__file__.startswith({str(target)!r}), rredcot_viz.__file__\n"
        "samples = t.sample_traces()\n"
        "a = rredcot_viz.analyze('Tom has 3 boxes of 4 pens and gives away 1. How many pens?',\n"
        "                        '3 boxes of 4 make 12.\\n12 - 1 = 11.\\nThe answer is 11.', reference_answer='11')\n"
        "print(len(samples), len(a.to_pandas()))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, env=outside_checkout(target, tmp_path),
                         capture_output=True, text=True, timeout=300)  # fmt: skip
    assert out.returncode == 0, out.stderr[-2000:]
    samples, segments = map(int, out.stdout.split())
    assert samples >= 10 and segments >= 2


def test_an_installed_wheel_starts_the_app_on_its_own_store(installed, tmp_path):
    """Nothing started the app from an installed package: the entry script and pages were outside it. The
    installed entry script renders the Inspect page and switches to every other page, its store in the user's
    data folder (an installed package's own folder is no place for data)."""
    env = outside_checkout(installed, tmp_path)
    app_help = [sys.executable, "-m", "rredcot_viz", "app", "--help"]
    help_text = subprocess.run(app_help, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)
    assert help_text.returncode == 0 and "--port" in help_text.stdout, help_text.stderr[-2000:]
    code = (
        "from streamlit.testing.v1 import AppTest\n"
        "import rredcot_viz.app as app\n"
        f"assert app.MAIN_SCRIPT.is_relative_to({str(installed)!r}), app.MAIN_SCRIPT\n"
        "assert app.STREAMLIT_CONFIG.is_file()\n"
        "at = AppTest.from_file(str(app.MAIN_SCRIPT), default_timeout=240).run()\n"
        "titles = [at.title[0].value]\n"
        "for screen in ('compare', 'dataset', 'diagnose', 'learn'):\n"
        "    at.switch_page(app.screen_path(screen)).run()\n"
        "    assert not at.exception, [e.value for e in at.exception]\n"
        "    titles.append(at.title[0].value)\n"
        "print('|'.join(titles))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, env=env, capture_output=True, text=True,
                         timeout=600)  # fmt: skip
    assert out.returncode == 0, out.stderr[-3000:]
    assert out.stdout.strip().splitlines()[-1].split("|")[:4] == ["Inspect", "Compare", "Dataset", "Diagnose"]
    assert (tmp_path / "xdg" / "rredcot_viz" / "rredcot.duckdb").exists()
