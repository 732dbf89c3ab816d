"""The Train page: stored runs as overlaid curves, the step inspector's advantage rows (reset prefix greyed,
text escaped), and a real one-step run started from the form, followed by the before/after comparison."""

from __future__ import annotations

from dataclasses import asdict

import pytest
from conftest import figure_titled, run_page

from rredcot_viz.app import screen_path
from rredcot_viz.training import quick
from rredcot_viz.ui import resources

pytestmark = pytest.mark.integration


def record(group: str, text: str, reward: float, advantages: list[float], **extra) -> dict:
    half = len(text) // 2
    return {
        "group": group,
        "text": text,
        "reward": reward,
        "seed": 1,
        "suffix_start": 0,
        "tokens": 6,
        "segments": [[0, 3], [3, 6]],
        "segment_advantages": advantages,
        "segment_chars": [[0, half], [half, len(text)]],
        "problem": 3,
        "question": "q",
        "parent": None,
        **extra,
    }


def put_fake_run(store, run_id: str) -> None:
    store.put_run(run_id, "train", {"name": "m", "fingerprint": "f"}, asdict(quick(method="srpo", steps=2)), 0)
    store.put_train_metrics(run_id, 0, {"step": 0, "held_out_accuracy": 0.25})
    resets = {
        "reset_groups": 1,
        "reset_empty_prefix_share": 0.0,
        "reset_prefix_fraction": 0.4,
        "reset_uniform_empty_chance": 0.25,
        "reset_steps_mean": 4.0,
    }
    localiser = {"localiser_parse_rate": 0.0, "localiser_fallback_share": 1.0}
    store.put_train_metrics(
        run_id, 1, {"step": 1, "reward_mean": 0.5, "advantage_abs_mean": 0.8, "loss": 0.1, **resets, **localiser}
    )
    store.put_train_metrics(run_id, 2, {"step": 2, "reward_mean": 0.75, "held_out_accuracy": 0.5})
    parent = record("parent", "Working: 2 + 2 = 5.\nThe answer is 5.", 0.0, [])
    store.put_train_rollouts(
        run_id,
        1,
        [
            record("base", "Working: <b>2 + 2</b> = 4.", 1.0, [1.0, 1.0]),
            record("base", "Working: 2 + 2 = 3.", 0.0, [-1.0, -1.0]),
            record("reset", "Working: 2 + 2 = 4. Done", 1.0, [0.0, 1.0], suffix_start=3, suffix_char=9, parent=parent),
            record("reset", "Working: 2 + 2 = 6. Oops", 0.0, [0.0, -1.0], suffix_start=3, suffix_char=9, parent=parent),
        ],
    )
    store.finish_run(run_id, "done", {"steps": 2}, {})


def test_stored_run_curves_and_step_inspector():
    put_fake_run(resources.store(), "train-fake")
    app = run_page(screen_path("train"))
    assert app.title[0].value == "Train"
    app.multiselect(key="train_plot_runs").set_value(["train-fake"]).run()
    curves = figure_titled(app, "Training curves")
    reward = next(t for t in curves["data"] if t["xaxis"] == "x")  # the first panel: reward_mean
    assert reward["x"] == [1, 2] and reward["y"] == [0.5, 0.75]
    accuracy = next(t for t in curves["data"] if t["xaxis"] == "x2")
    assert accuracy["x"] == [0, 2] and accuracy["y"] == [0.25, 0.5]
    app.selectbox(key="train_inspect_run").set_value("train-fake").run()
    rows = next(h.proto.body for h in app.get("html") if "rc-steps" in h.proto.body)
    assert rows.count('data-group="base"') == 2 and rows.count('data-group="reset"') == 2
    assert "&lt;b&gt;" in rows and "&lt;/b&gt;" in rows and "<b>" not in rows  # trace text is escaped
    assert rows.count('class="rc-prefix"') == 2 and "failed parent" in rows  # the reset prefix is greyed
    assert 'data-advantage="-1.0000"' in rows and "reset group · problem 3 · 2 rollouts" in rows
    notes = next(c.value for c in app.caption if "reset group(s)" in c.value)
    assert "1 reset group(s): 0% from an empty prefix (the question alone), 40% of the parent kept" in notes
    assert "starts empty with chance 25% (mean 1/H, 4.0 steps)" in notes
    assert "last box named a step: 0%" in notes and "100% that name none get a uniformly random step" in notes
    table = app.dataframe[-1].value
    assert table["prefix tokens"].tolist() == [0, 0, 3, 3]


def test_a_one_step_run_from_the_form_then_before_and_after():
    app = run_page(screen_path("train"))
    app.selectbox(key="train_method").set_value("grpo").run()  # the form holds the chosen method's settings
    app.number_input(key="train_steps").set_value(1)
    app.number_input(key="train_group_size").set_value(2)
    app.number_input(key="train_eval_every").set_value(1)
    app.number_input(key="train_eval_problems").set_value(2)
    app.number_input(key="train_max_new_tokens").set_value(24)
    next(b for b in app.button if b.label == "Start run").click().run()
    assert not app.exception, [e.value for e in app.exception]
    jobs = resources.jobs()
    job = jobs.wait(jobs.get(app.session_state["train_job"]), timeout=600)
    assert job.status == "done", job.error
    run_id = job.key.removeprefix("train:")
    app.run()
    assert not app.exception, [e.value for e in app.exception]
    steps = resources.store().train_metrics([run_id])["step"].tolist()
    assert steps == [0, 1]
    app.selectbox(key="train_compare_run").set_value(run_id).run()
    app.button(key="train_compare").click().run()
    assert not app.exception, [e.value for e in app.exception]
    assert not app.error, [e.value for e in app.error]
    before_after = figure_titled(app, "Q̂ before and after training")
    base, trained = before_after["data"]
    assert len(base["y"]) == len(trained["y"]) >= 2 and trained["name"] == "trained (step 1)"
    shift = figure_titled(app, "Value shift per state")["data"][0]["y"]
    assert shift == pytest.approx([t - b for t, b in zip(trained["y"], base["y"], strict=True)], abs=1e-9)


def test_a_reloaded_page_finds_the_running_run_with_its_stop_button():
    """A new session (a reload) knows no job: the page finds the running training job, shows its progress and
    Stop, and Stop asks it to cancel."""
    import threading

    put_fake_run(resources.store(), "train-running")
    jobs, release = resources.jobs(), threading.Event()

    def training(job):
        job.progress(1, 4)
        job.note("evaluating held-out")
        release.wait(60)

    job = jobs.submit("grpo run train-running", training, kind="train", key="train:train-running", total=4)
    try:
        app = run_page(screen_path("train"))  # a fresh session: nothing in its state
        assert app.session_state["train_job"] == job.id
        stop = next(b for b in app.button if b.label == "Stop")
        progress = next(e for e in app.get("progress") if "grpo run train-running" in e.proto.text)
        assert "1/4 steps · evaluating held-out" in progress.proto.text
        stop.click().run()
        assert job.cancel_requested and job.status == "cancelling"
        assert any("cancelling…" in e.proto.text for e in app.get("progress"))
        app.run()
        assert any(b.label == "Cancelling…" and b.disabled for b in app.button)
    finally:
        release.set()
        jobs.wait(job)


def test_the_estimate_follows_the_settings_before_start_and_a_stop_says_what_can_resume(tmp_path, monkeypatch):
    """The estimate under the form showed the defaults until Start (a form sends its values on submit only), and
    a run stopped before its first step was told to resume "from its last checkpoint below" beside "No run has
    a checkpoint"."""
    from rredcot_viz.jobs import Job
    from rredcot_viz.ui.train_views import _stopped_text

    app = run_page(screen_path("train"))
    estimate = lambda: next(c.value for c in app.caption if c.value.startswith("Time here: "))  # noqa: E731
    before = estimate()
    app.number_input(key="train_steps").set_value(40).run()
    assert not app.exception and "40 steps" in estimate() and "40 steps" not in before  # no Start pressed

    monkeypatch.setenv("RREDCOT_DATA_DIR", str(tmp_path))
    job = Job("grpo run r1", kind="train", key="train:r1")
    assert _stopped_text(job) == "Stopped before anything was saved: start a new run."
    (tmp_path / "checkpoints" / "r1" / "step_0000").mkdir(parents=True)
    assert _stopped_text(job).startswith("Stopped before its first step finished: resuming it below starts again")
    (tmp_path / "checkpoints" / "r1" / "step_0003").mkdir(parents=True)
    assert _stopped_text(job) == "Stopped after step 3; resume it from that checkpoint below."
