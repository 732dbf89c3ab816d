"""The Inspect page: lands on an analysed sample, re-segments without the model, escapes trace text."""

from __future__ import annotations

import json
import re

import pytest
from conftest import figure_titled, run_page
from hostile import HOSTILE
from rl_logs import trl_run

from rredcot_viz.traces.importers import import_file
from rredcot_viz.ui import resources
from rredcot_viz.workflows.runs import store_import

pytestmark = pytest.mark.integration


def segment_count(app) -> int:
    return len(re.findall(r'data-segment="\d+"', app.get("html")[0].proto.body))


def settle(app):
    """Rerun the page until its background analysis is done: AppTest does not fire the progress fragment's
    timer, so the test waits for the job and reruns, as the fragment would."""
    jobs = resources.jobs()
    for _ in range(10):
        active = [job for job in jobs.jobs(limit=20) if job.kind == "analysis" and job.active]
        if not active:
            assert not app.exception, [e.value for e in app.exception]
            return app
        for job in active:
            assert jobs.wait(job, timeout=600).status == "done", job.error
        app.run()
    raise AssertionError("analysis jobs kept starting")


def live_page():
    """The Inspect page re-scoring the default sample with the loaded model instead of its recording."""
    app = run_page()
    app.radio(key="inspect_source").set_value("live").run()
    return settle(app)


def test_lands_on_the_recorded_scores_without_model_work():
    app = run_page()
    assert app.title[0].value == "Inspect" and not app.exception
    assert app.radio(key="inspect_source").value == "recorded"
    assert "recorded with Qwen2.5-Coder-1.5B" in app.info[0].value
    caption = app.main.caption[0].value
    k = int(re.search(r"K = (\d+) segments · recorded: no model calls", caption).group(1))
    assert segment_count(app) == k
    metrics = {m.label: m.value for m in app.metric}
    assert float(metrics["Σσ"]) == pytest.approx(float(metrics["Outcome R"]), abs=1e-4)
    curves = figure_titled(app, "Values at the states")
    q_hat = next(trace for trace in curves["data"] if trace["name"] == "Q_hat")
    assert len(q_hat["y"]) == k + 1 and max(q_hat["y"][:-1]) < 0.99  # Qwen's values move before the answer
    assert not any(s.key == "inspect_k" for s in app.slider)  # the recording's settings, no live controls


def test_lands_on_an_analysed_sample_and_shows_the_values():
    app = live_page()
    assert app.title[0].value == "Inspect"
    assert "does not order segments as Monte Carlo does" in app.info[0].value
    caption = app.main.caption[0].value
    k = int(re.search(r"K = (\d+) segments", caption).group(1))
    assert segment_count(app) == k
    metrics = {m.label: m.value for m in app.metric}
    assert float(metrics["Σσ"]) == pytest.approx(float(metrics["Outcome R"]), abs=1e-4)
    curves = figure_titled(app, "Values at the states")
    q_hat = next(trace for trace in curves["data"] if trace["name"] == "Q_hat")
    assert len(q_hat["y"]) == k + 1 and q_hat["y"][-1] == pytest.approx(float(metrics["Outcome R"]))
    credit = figure_titled(app, "Credit per segment")
    sigma = next(trace for trace in credit["data"] if trace["name"].startswith("σ"))
    assert sum(sigma["y"]) == pytest.approx(float(metrics["Σσ"]), abs=1e-4)
    grpo = next(trace for trace in credit["data"] if trace["name"].startswith("GRPO"))
    assert grpo["y"] == pytest.approx([float(metrics["Outcome R"]) / k] * k)
    table = app.dataframe[0].value
    assert len(table) == k and table["sigma"].sum() == pytest.approx(float(metrics["Σσ"]), abs=1e-4)


def test_k_and_text_segmenters_among_the_candidates_make_no_model_calls():
    """The first analysis scores hybrid's candidates; K, keyword, paragraph, aggregation and variant reuse them,
    while sentence adds boundaries (one call) that a second visit then finds cached."""
    app = live_page()
    settle(app.sidebar.selectbox(key="trace_Samples").select_index(7).run())  # a long sample
    counts = set()
    for k in (2, 3, 5, 6):
        app.slider(key="inspect_k").set_value(k).run()
        assert "no model calls" in app.main.caption[0].value
        counts.add(segment_count(app))
    assert len(counts) >= 3  # the heatmap really changed
    for name in ("keyword", "paragraph"):
        app.selectbox(key="inspect_segmenter").select(name).run()
        assert not app.exception and "no model calls" in app.main.caption[0].value
    app.selectbox(key="inspect_aggregation").select("geo_mean").run()
    app.selectbox(key="inspect_variant").select("difference").run()
    assert "no model calls" in app.main.caption[0].value
    settle(app.selectbox(key="inspect_segmenter").select("sentence").run())
    assert not app.exception and "1 model call:" in app.main.caption[0].value
    app.selectbox(key="inspect_segmenter").select("keyword").run()
    app.selectbox(key="inspect_segmenter").select("sentence").run()
    assert "no model calls" in app.main.caption[0].value


def test_shading_views_and_replay():
    app = live_page()
    for shade in ("Q_hat", "R_hat", "v_hat", "sigma"):
        app.segmented_control(key="inspect_shade").set_value(shade).run()
        assert not app.exception and segment_count(app) >= 2
    app.radio(key="inspect_view").set_value("Rendered (LaTeX)").run()
    assert any("-badge[1 ·" in m.value for m in app.markdown)
    app.radio(key="inspect_view").set_value("Heatmap").run()
    app.slider(key="inspect_k").set_value(2).run()
    replay = app.slider(key="inspect_replay")
    replay.set_value(0).run()
    assert "pieces before any merge" in " ".join(c.value for c in app.main.caption)
    assert app.get("html")[-1].proto.body.count("data-segment=") > 2


def test_trace_text_is_escaped():
    hostile = HOSTILE
    resources.store().put_traces([hostile], "user")
    app = run_page()
    app.sidebar.radio(key="trace_source").set_value("Stored").run()
    settle(app.sidebar.selectbox(key="collection").select("user").run())
    body = app.get("html")[0].proto.body
    assert "<script>" not in body and "&lt;script&gt;" in body
    assert "<img" not in body and "&lt;img src=x onerror=alert(1)&gt;" in body
    assert '<a href="javascript' not in body and "&lt;a href=&quot;javascript:alert(2)&quot;&gt;" in body


def test_paste_adds_a_trace_and_bad_input_gets_a_message():
    app = run_page()
    app.sidebar.radio(key="trace_source").set_value("Paste").run()
    app.main.text_area(key="paste_question").input("").run()
    app.main.button[0].click().run()
    assert "a trace needs a non-empty question" in app.main.error[0].value
    app.main.text_area(key="paste_question").input("What is 2 + 3?")
    app.main.text_area(key="paste_cot").input("2 + 3 = 5.\nSo the answer is \\boxed{5}.")
    app.main.text_input(key="paste_reference").input("5")
    app.main.button[0].click().run()
    assert app.main.success[0].value == "Added and selected."  # shown on the run that added it
    settle(app)
    assert app.metric[0].value == "5" and any("What is 2 + 3?" in m.value for m in app.markdown)


def test_upload_is_parsed_reported_and_size_limited(monkeypatch):
    import json

    good = {"question": "What is 6 * 7?", "cot": "6 * 7 = 42.\nThe answer is \\boxed{42}.", "reference_answer": "42"}
    content = (json.dumps(good) + "\n{broken\n").encode()
    app = run_page()
    app.sidebar.radio(key="trace_source").set_value("Upload").run()
    app.main.get("file_uploader")[0].upload("mine.jsonl", content, "application/json")
    settle(app.run())  # the upload's report stays on screen while the file is chosen
    assert "mine.jsonl: 1 traces (native); 1 problems" in app.main.success[0].value
    assert "line 2: invalid JSON" in app.main.warning[0].value
    assert app.metric[0].value == "42"
    monkeypatch.setattr("rredcot_viz.ui.upload.MAX_UPLOAD_MB", 0.00001)
    app.main.get("file_uploader")[0].set_value(("big.jsonl", content, "application/json"))
    app.run()
    assert "the upload limit is" in app.main.error[0].value


def upload(app, name: str, content: bytes):
    app.sidebar.radio(key="trace_source").set_value("Upload").run()
    app.main.get("file_uploader")[0].upload(name, content, "application/json")
    return settle(app.run())


def test_upload_of_random_bytes_is_a_message_naming_the_users_file():
    app = upload(run_page(), "noise.jsonl", bytes(range(1, 256)) * 8)
    message = app.main.error[0].value
    assert message.startswith("noise.jsonl is not valid utf-8 text: byte 0x80 at offset 127")
    assert "/tmp" not in message and "tmp" not in message.split(":")[0]


def test_upload_with_natural_field_names_and_latin1_via_the_options():
    record = '{"problem": "Caf\xe9: what is 6 * 7?", "response": "6 * 7 = 42. The answer is 42.", "gt_answer": 42}\n'
    app = upload(run_page(), "mine.jsonl", record.encode("latin-1"))
    assert "mine.jsonl is not valid utf-8 text" in app.main.error[0].value
    settle(app.main.selectbox(key="upload_encoding").set_value("latin-1").run())
    assert not app.main.error
    assert "mine.jsonl: 1 traces (plain); 0 problems" in app.main.success[0].value


def test_upload_field_mapping_box():
    content = b'{"q": "What is 6 * 7?", "model_text": "6 * 7 = 42. The answer is 42."}\n'
    app = upload(run_page(), "odd.jsonl", content)
    assert "odd.jsonl: cannot tell the format" in app.main.error[0].value
    assert "model_text=cot" in app.main.error[0].value
    settle(app.main.text_input(key="upload_map").input("model_text=cot, q=question").run())
    assert "odd.jsonl: 1 traces (native)" in app.main.success[0].value


def test_upload_with_a_lone_surrogate_is_imported_with_a_note():
    """A `\\ud800` escape used to reach the store and the tokenizer and end in a traceback with server paths."""
    record = '{"question": "What is 6 * 7?", "cot": "6 * 7 = 42 \\ud800. The answer is 42.", "reference_answer": "42"}'
    app = upload(run_page(), "lone.jsonl", (record + "\n").encode())
    assert not app.exception
    shown = [element.value for element in [*app.warning, *app.error]]
    assert any(text.startswith("lone surrogate escapes (e.g. \\ud800") and "(1 record: " in text for text in shown)
    assert not any("Traceback" in text or "/tmp" in text for text in shown)
    assert app.metric[0].value == "42"


def test_k_defaults_to_the_config_and_never_exceeds_the_pieces():
    from rredcot_viz.segmenters.hybrid import HybridSegmenterConfig

    app = live_page()
    slider = app.slider(key="inspect_k")
    pieces = int(re.search(r"at most (\d+) pieces", slider.label).group(1))
    assert slider.value == min(HybridSegmenterConfig().k, pieces) and slider.max == max(pieces, 3)
    assert not any("asks for more segments" in i.value for i in app.info)
    settle(app.selectbox(key="inspect_segmenter").select("delimiter").run())
    assert app.text_input(key="inspect_delimiter").value == "\\n\\n"  # the first sample has blank lines, no </thought>
    assert int(re.search(r"K = (\d+) segments", app.main.caption[0].value).group(1)) > 1


def test_paste_without_a_solution_falls_back_to_answer_only():
    app = run_page()
    app.sidebar.radio(key="trace_source").set_value("Paste").run()
    assert "needs it for v̂" in app.main.text_area(key="paste_solution").label
    app.main.text_area(key="paste_question").input("What is 4 + 4?")
    app.main.text_area(key="paste_cot").input("4 + 4 = 8.\nSo the answer is \\boxed{8}.")
    app.main.text_input(key="paste_reference").input("8")
    settle(app.main.button[0].click().run())
    assert not app.error
    assert any(i.value.startswith("Using answer_only instead of rredcot") for i in app.info)
    assert "R_hat" in app.dataframe[0].value.columns and "v_hat" not in app.dataframe[0].value.columns


def test_traces_with_one_question_keep_their_own_label_and_stay_chosen():
    """Streamlit maps a chosen label back to the last option showing it: equal labels switched the page to
    another trace. Two answers to one question now read apart and the chosen one stays."""
    import json

    question = "A shelf holds 4 rows of 6 books. How many books?"
    records = [
        {"question": question, "cot": "4 * 6 = 24.\nThe answer is \\boxed{24}.", "reference_answer": "24"},
        {"question": question, "cot": "4 + 6 = 10.\nThe answer is \\boxed{10}.", "reference_answer": "24"},
        {"question": question, "cot": "6 + 6 + 6 + 6 = 24.\nThe answer is \\boxed{24}.", "reference_answer": "24"},
    ]
    content = "".join(json.dumps(r) + "\n" for r in records).encode()
    app = upload(run_page(), "two_of_one.jsonl", content)
    picker = app.sidebar.selectbox(key="trace_Upload")
    labels = list(picker.options)  # what the browser shows and sends back
    correct = [label for label in labels if label.startswith("A shelf holds 4 rows of 6 books") and "correct" in label]
    assert len(correct) == 2 and len(set(labels)) == len(labels) and all(" · #" in label for label in correct)
    assert app.metric[0].value == "24" and any("4 * 6 = 24." in h.proto.body for h in app.get("html"))
    third = next(t for t in resources.store().traces("upload") if t.cot.startswith("6 + 6"))
    index = next(i for i, label in enumerate(labels) if label.endswith(f"#{third.content_hash[:8]}"))
    settle(picker.select_index(index).run())  # a label only its hash tells from the first's
    for _ in range(2):  # and it stays chosen over reruns
        settle(app.run())
        assert any("6 + 6 + 6 + 6 = 24." in h.proto.body for h in app.get("html"))
        assert not any("4 * 6 = 24." in h.proto.body for h in app.get("html"))


def test_relative_colours_say_so_and_print_the_largest_value():
    app = run_page()
    body = app.get("html")[0].proto.body
    assert 'data-scale="absolute"' in body and "Absolute scale: σ from −1 (red) to +1 (green)" in body
    app.toggle(key="inspect_relative").set_value(True).run()
    body = app.get("html")[0].proto.body
    largest = float(re.search(r"full colour = max \|σ\| = ([\d.e-]+)", body).group(1))
    assert 'data-scale="relative"' in body and 0 < largest <= 1


TOM = "Tom has 3 boxes of 4 apples and eats 1. How many apples are left?"
TOM_REASONING = "3 boxes of 4 apples make 3 * 4 = 12.\nHe eats 1, so 12 - 1 = 11.\nThe answer is 11."


def fallback_line(app) -> str:
    (line,) = [i.value for i in app.info if i.value.startswith("Using ")]
    return line


def no_exception_names(app) -> None:
    shown = " ".join(e.value for e in [*app.error, *app.warning, *app.info, *app.exception])
    assert not app.exception and not re.search(r"\b[A-Z]\w*Error\b", shown), shown


def test_a_pasted_trace_without_a_reference_or_a_label_gets_credit_toward_its_own_answer():
    """It used to stop at "The analysis failed: AttributeError: 'NoneType' object has no attribute 'strip'"."""
    app = run_page()
    app.sidebar.radio(key="trace_source").set_value("Paste").run()
    app.main.text_area(key="paste_question").input(TOM)
    app.main.text_area(key="paste_cot").input(TOM_REASONING)
    settle(app.main.button[0].click().run())
    no_exception_names(app)
    line = fallback_line(app)
    assert line.startswith("Using own_answer instead of rredcot, which needs an outcome (a correct/wrong label")
    assert line.endswith("so the heatmap is credit toward its own final answer: the probability of that answer "
                         "after each segment (1 − that on a trace labelled wrong).")  # fmt: skip
    offer = next(c.value for c in app.caption if c.value.startswith("Other choices need more"))
    assert "answer_only needs an outcome (a correct/wrong label, or a reference answer" in offer
    assert app.selectbox(key="inspect_estimator").options[:2] == [
        "rredcot · needs outcome, reference answer, reference solution",
        "answer_only · needs outcome, reference answer",
    ]
    assert segment_count(app) == 2
    metrics = {m.label: m.value for m in app.metric}
    assert (metrics["Trace answer"], metrics["Outcome R"], metrics["R (its own answer, reached)"]) == (
        "11",
        "unknown",
        "1",
    )
    assert float(metrics["Σσ"]) == pytest.approx(1.0, abs=1e-4)  # exact_sum: credit toward reaching its answer
    assert any(i.value.startswith("No correct/wrong label and no reference answer") for i in app.info)


def test_a_pasted_label_is_the_outcome():
    app = run_page()
    app.sidebar.radio(key="trace_source").set_value("Paste").run()
    app.main.text_area(key="paste_question").input(TOM)
    app.main.text_area(key="paste_cot").input(TOM_REASONING.replace("11", "13"))
    app.main.radio(key="paste_outcome").set_value(False)
    settle(app.main.button[0].click().run())
    no_exception_names(app)
    assert fallback_line(app).startswith("Using own_answer instead of rredcot")
    metrics = [(m.label, m.value) for m in app.metric]  # the trace's outcome, then the analysis's R
    assert ("Outcome R", "0 (wrong)") in metrics and ("Outcome R", "0") in metrics
    assert float(dict(metrics)["Σσ"]) == pytest.approx(0.0, abs=1e-4)


def test_an_upload_with_is_correct_and_no_reference_and_the_forms_reference_answer():
    record = {"question": TOM, "reasoning": TOM_REASONING, "is_correct": True}
    app = upload(run_page(), "labelled.jsonl", (json.dumps(record) + "\n").encode())
    no_exception_names(app)
    assert fallback_line(app).startswith("Using own_answer instead of rredcot")
    metrics = [(m.label, m.value) for m in app.metric]
    assert ("Reference answer", "None") in metrics and ("Outcome R", "1 (correct)") in metrics
    assert segment_count(app) == 2
    settle(app.main.text_input(key="upload_reference").input("11").run())  # the form's answer for records lacking one
    no_exception_names(app)
    assert {m.label: m.value for m in app.metric}["Reference answer"] == "11"
    assert fallback_line(app).startswith("Using answer_only instead of rredcot, which needs a reference solution")


def test_a_stored_rl_run_without_references_is_analysed(tmp_path):
    folder = trl_run(tmp_path / "grpo-inspect", solution=False)
    stored, _ = store_import(resources.store(), import_file(folder))
    app = run_page()
    app.sidebar.radio(key="trace_source").set_value("Stored").run()
    settle(app.sidebar.selectbox(key="collection").select(stored.collection).run())
    no_exception_names(app)
    assert fallback_line(app).startswith("Using own_answer instead of rredcot")
    outcome = next(m.value for m in app.metric if m.label == "Outcome R")  # the run's reward
    assert segment_count(app) >= 2 and outcome in ("1 (correct)", "0 (wrong)")
