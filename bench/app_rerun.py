"""How fast the Inspect page re-renders when K changes on an analysed trace (AppTest, embedded model).

Analyses the longest sample trace once (not timed; ``--sample`` names another by the start of its title), then
moves the K slider ten times (``--ks``) and times each rerun; the model must not be called. Last line:
``rerun_ms_median=<x> model_calls=<n>``.
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time

os.environ.setdefault("RREDCOT_STORE", os.path.join(tempfile.mkdtemp(prefix="rredcot-bench-"), "store.duckdb"))

from streamlit.testing.v1 import AppTest

from rredcot_viz.model.loading import ModelConfig
from rredcot_viz.paths import PROJECT_ROOT
from rredcot_viz.ui import resources


def settle(app: AppTest) -> None:
    """Until the page's analysis job is done (AppTest does not fire the progress fragment's timer)."""
    jobs = resources.jobs()
    for _ in range(20):
        active = [job for job in jobs.jobs(limit=20) if job.active]
        if not active:
            return
        for job in active:
            jobs.wait(job, timeout=600)
        app.run()


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sample", default="Planning a school museum trip", help="the sample's title, or its start")
    parser.add_argument("--ks", default="2,4,6,8,10,12,14,16,5,9", help="the K values the slider is moved to")
    args = parser.parse_args(argv)
    app = AppTest.from_file(str(PROJECT_ROOT / "app.py"), default_timeout=600).run()
    app.radio(key="inspect_source").set_value("live").run()  # the page opens on recorded scores (no K slider)
    options = app.sidebar.selectbox(key="trace_Samples").options
    longest = next(i for i, label in enumerate(options) if label.startswith(args.sample))
    started = time.perf_counter()
    app.sidebar.selectbox(key="trace_Samples").select_index(longest).run()
    print(f"first analysis of '{options[longest]}': {time.perf_counter() - started:.1f} s (not timed below)")
    lm = resources.model(ModelConfig())
    settle(app)
    calls = lm.meter.total.calls  # after the analysis's jobs: only the K moves count
    timings = []
    key = next(s.key for s in app.slider if s.label.startswith("K"))  # the settings form names its widgets
    for k in (int(k) for k in args.ks.split(",")):
        started = time.perf_counter()
        app.slider(key=key).set_value(k).run()
        timings.append((time.perf_counter() - started) * 1e3)
        assert not app.exception, [e.value for e in app.exception]
        assert any("no model calls" in caption.value for caption in app.main.caption)
    model_calls = lm.meter.total.calls - calls
    print("rerun ms:", " ".join(f"{t:.0f}" for t in timings))
    print(f"rerun_ms_median={statistics.median(timings):.1f} model_calls={model_calls}")


if __name__ == "__main__":
    main()
