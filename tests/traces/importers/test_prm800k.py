"""The PRM800K importer (importers/prm800k.py): the shared phase-1/phase-2 samples and the chosen path."""

from __future__ import annotations

import copy

from rredcot_viz.traces.importers import importers

from .samples import SAMPLES, assert_steps_tile, imported


def test_prm800k_phase2_example() -> None:
    (trace,) = imported("prm800k/phase2_test_one_example.json").traces
    assert trace.first_error == 6
    assert len(trace.steps) == 13
    assert trace.step_labels == (1, 0, 1, 1, 1, 1, -1)
    assert (trace.final_answer, trace.reference_answer) == ("7200", "28800")
    assert trace.outcome == 0.0
    assert trace.reference_solution and trace.source == "prm800k" and trace.metadata["phase"] == 2
    assert_steps_tile(trace)


def test_prm800k_raw_samples() -> None:
    report = imported("prm800k/raw_samples_openr.jsonl")
    assert report.format == "prm800k" and not report.issues and len(report.traces) == 6
    phases = [t.metadata["phase"] for t in report.traces]
    assert phases == [1, 2, 1, 1, 1, 2]
    assert [t.first_error for t in report.traces] == [-1, 6, -1, -1, None, -1]  # line 5 gave up
    assert report.traces[1].content_hash == imported("prm800k/phase2_test_one_example.json").traces[0].content_hash
    line1, line5, line6 = report.traces[0], report.traces[4], report.traces[5]
    assert line1.metadata["human_steps"] == [1] and len(line1.steps) == 6  # step 2 is the human replacement
    assert line5.metadata["human_steps"] == [7] and len(line5.steps) == 8  # last step has no completion at all
    assert line6.step_labels == (1,) * 12 and line6.metadata["is_initial_screening_question"]
    for trace in report.traces:
        assert set(trace.step_labels) <= {-1, 0, 1}
        assert len(trace.step_labels) <= len(trace.steps)
        assert_steps_tile(trace)
    assert line1.answer == "29" and line1.outcome == 1.0  # "# Answer" heading of the last step


def test_prm800k_phase1_chosen_path() -> None:
    record = copy.deepcopy(SAMPLES["prm800k"])
    record["generation"] = None
    del record["question"]["pre_generated_steps"]
    record["label"] = {
        "steps": [
            {
                "completions": [{"text": "He has 2 apples.", "rating": 1}, {"text": "He has 3.", "rating": -1}],
                "human_completion": None,
                "chosen_completion": 0,
            },
            {
                "completions": [{"text": "2 * 3 = 6.", "rating": -1}],
                "human_completion": {"text": "2 + 3 = 5.", "rating": None, "source": "human"},
                "chosen_completion": None,
            },
            {"completions": [{"text": "# Answer\n\n5", "rating": 1}], "chosen_completion": 0},
            {"completions": None, "human_completion": None, "chosen_completion": None},
        ],
        "finish_reason": "solution",
    }
    (trace,) = importers.get("prm800k")().convert(record)
    assert trace.steps == ("He has 2 apples.", "2 + 3 = 5.", "# Answer\n\n5")
    assert (trace.step_labels, trace.first_error, trace.metadata["human_steps"]) == ((1, 1, 1), -1, [1])
    assert trace.answer == "5" and trace.outcome == 1.0
    record["label"]["finish_reason"] = "give_up"
    assert importers.get("prm800k")().convert(record)[0].first_error is None
