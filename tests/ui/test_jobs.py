"""What the app says about a job (ui/jobs.py): a queued job names what it waits for, a running bar is never full."""

from __future__ import annotations

from rredcot_viz.jobs import Job, job_from_row, job_row
from rredcot_viz.ui.jobs import job_line, shown_fraction


def test_a_queued_job_says_what_it_waits_for_or_that_it_is_starting():
    """It said "queued (starts when it ends)", naming nothing."""
    waiting = Job("Evaluation", status="queued", behind="MC on the tank trace")
    assert job_line(waiting) == "Evaluation: queued behind MC on the tank trace"
    assert job_line(job_from_row(job_row(waiting))) == "Evaluation: queued behind MC on the tank trace"  # other tabs
    assert job_line(Job("Evaluation", status="queued")) == "Evaluation: queued, starting…"


def test_a_running_bar_is_never_full_until_the_job_ends():
    """The bar was full at "1/1 chunks · R-hat" with about 40 s of work left."""
    running = Job("Analysis", status="running", total=1, done=1, unit="chunks")
    assert running.fraction == 1.0 and shown_fraction(running) == 0.99
    done = Job("Analysis", status="done", total=1, done=1, unit="chunks")
    assert shown_fraction(done) == 1.0


def _panel_twice_beside_a_running_job() -> None:
    """An app run where the page draws the sidebar's job list again (``again``) while a job runs."""
    import time

    from rredcot_viz.ui import resources
    from rredcot_viz.ui.jobs import jobs_panel

    manager = resources.jobs()
    if not manager.running_count():
        manager.submit("A slow job", lambda job: time.sleep(3))
    jobs_panel()
    jobs_panel(again=True)


def test_the_job_list_drawn_again_beside_a_running_job_has_no_duplicate_keys(tmp_path, monkeypatch):
    """Drawing the list again gave its cancel button the key of the first drawing in the same run:
    StreamlitDuplicateElementKey ``jobs_cancel_<id>`` (seen by bench/app_rerun.py while an analysis ran)."""
    from streamlit.testing.v1 import AppTest

    monkeypatch.setenv("RREDCOT_STORE", str(tmp_path / "store.duckdb"))
    app = AppTest.from_function(_panel_twice_beside_a_running_job, default_timeout=60).run()
    assert not app.exception, [e.value for e in app.exception]
    assert [button.label for button in app.sidebar.button] == ["Cancel"]  # the second drawing replaced the first
