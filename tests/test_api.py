"""The one-call library (rredcot_viz.api): analyse a question and its reasoning, look at the result."""

from __future__ import annotations

import subprocess
import sys

import pytest

import rredcot_viz
from rredcot_viz.engine import Analyzer

QUESTION = "Tom has 3 boxes of 4 pens and gives away 1 pen. How many pens does he have?"
REASONING = "3 boxes of 4 pens make 12 pens.\nHe gives away 1, so 12 - 1 = 11.\nThe answer is 11."


def test_a_question_and_its_reasoning_in_one_call(tiny):
    analysis = rredcot_viz.analyze(
        QUESTION, REASONING, reference_answer="11", segmenter="line", analyzer=Analyzer(tiny)
    )
    frame = analysis.to_pandas()
    k = analysis.result.k  # the line segmenter: the two lines of working (the answer line is the action)
    assert len(frame) == k == 2 and frame["text"].str.contains("12 - 1 = 11").any()
    assert frame["sigma"].sum() == pytest.approx(1.0)  # exact_sum: the credits add up to R (correct)
    assert analysis.settings["estimator"] == "answer_only"  # rredcot's v-hat needs a reference solution, said so
    assert analysis.notes[0].startswith("Using answer_only instead of rredcot, which needs a reference solution")
    assert analysis._repr_html_().count('class="rc-seg"') == k  # a notebook shows the heatmap
    assert "Q_hat" in {trace.name for trace in analysis.figure().data}
    assert analysis.to_html().startswith("<!DOCTYPE html>")


def test_a_trace_without_a_reference_says_which_estimator_ran(tiny):
    analysis = rredcot_viz.analyze(QUESTION, REASONING, segmenter="line", analyzer=Analyzer(tiny))
    (note,) = analysis.notes
    assert note.startswith("Using own_answer instead of rredcot") and analysis.settings["estimator"] == "own_answer"
    with pytest.raises(TypeError, match=r"analyze\(question, cot\)"):
        rredcot_viz.analyze(QUESTION)


def test_import_loads_no_torch_and_the_names_resolve_on_use():
    code = "import sys, rredcot_viz; assert 'torch' not in sys.modules; print(rredcot_viz.Trace.__name__)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "Trace"
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        rredcot_viz.nope  # noqa: B018


@pytest.mark.integration
def test_the_readme_example_runs():
    """README's library example, verbatim in spirit: three lines on the embedded model."""
    analysis = rredcot_viz.analyze(QUESTION, REASONING, reference_answer="11")
    assert len(analysis.rows()) == analysis.result.k >= 2 and analysis.model["name"].startswith("SmolLM2")
    assert rredcot_viz.load() is rredcot_viz.load()  # loaded once per process
