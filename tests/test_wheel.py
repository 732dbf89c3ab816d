"""The wheel is the product: built from the repository and installed into a clean folder, it carries the sample
traces and runs the README's library example from outside the checkout."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from rredcot_viz.paths import PROJECT_ROOT

pytestmark = pytest.mark.integration


def test_an_installed_wheel_has_the_samples_and_runs_the_library_example(tmp_path):
    """``sample_traces()`` returned an empty list outside the checkout (the samples were not in the wheel)."""
    build = [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q", "-w", str(tmp_path),
             str(PROJECT_ROOT)]  # fmt: skip
    subprocess.run(build, check=True, capture_output=True, timeout=300)
    (wheel,) = tmp_path.glob("rredcot_viz-*.whl")
    target = tmp_path / "site"
    install = [sys.executable, "-m", "pip", "install", "--no-deps", "-q", "--target", str(target), str(wheel)]
    subprocess.run(install, check=True, capture_output=True, timeout=300)
    code = (
        "import rredcot_viz, rredcot_viz.traces as t\n"
        f"assert rredcot_viz.__file__.startswith({str(target)!r}), rredcot_viz.__file__\n"
        "samples = t.sample_traces()\n"
        "a = rredcot_viz.analyze('Tom has 3 boxes of 4 pens and gives away 1. How many pens?',\n"
        "                        '3 boxes of 4 make 12.\\n12 - 1 = 11.\\nThe answer is 11.', reference_answer='11')\n"
        "print(len(samples), len(a.to_pandas()))\n"
    )
    env = {**os.environ, "PYTHONPATH": str(target), "HF_HUB_OFFLINE": "1"}
    out = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, env=env, capture_output=True, text=True,
                         timeout=300)  # fmt: skip
    assert out.returncode == 0, out.stderr[-2000:]
    samples, segments = map(int, out.stdout.split())
    assert samples >= 10 and segments >= 2
