"""What the importer tests share: the shared data files (skipped when absent), one small inline record per
format, and the checks every importer's traces pass."""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any

import pytest

from rredcot_viz.paths import shared_data_dir
from rredcot_viz.traces.importers import ImportReport, import_file, importers, read_records
from rredcot_viz.traces.trace import Trace

MINE = (
    "gsm8k",
    "gsm8k_solutions",
    "math",
    "math_shepherd",
    "prm800k",
    "processbench",
    "qwen_rm",
    "thought_anchors",
    "trl_completions",
    "verl_rollouts",
)


def data_file(relative: str) -> Path:
    path = shared_data_dir() / relative
    if not path.is_file():
        pytest.skip(f"shared data file {relative} is absent (looked for {path})")
    return path


@cache
def _imported(relative: str) -> ImportReport:
    return import_file(shared_data_dir() / relative)


def imported(relative: str) -> ImportReport:
    data_file(relative)
    return _imported(relative)


def raw_records(relative: str) -> list[dict[str, Any]]:
    return [record for _, record in read_records(data_file(relative))]


def assert_steps_tile(trace: Trace) -> None:
    """step_spans() finds every step in order and the spans tile cot exactly."""
    spans = trace.step_spans()
    assert "".join(trace.cot[start:end] for start, end in spans) == trace.cot
    for index, ((start, end), step) in enumerate(zip(spans, trace.steps, strict=True)):
        piece = trace.cot[start:end]
        assert step in piece
        if index > 0:
            assert piece.startswith(step)


QUESTION = "Tom has 2 apples and buys 3 more. How many apples does he have?"


SAMPLES: dict[str, dict[str, Any]] = {
    "processbench": {
        "id": "pb-1",
        "generator": "toy",
        "problem": QUESTION,
        "steps": ["He starts with 2 apples.", "2 + 3 = 6, so the answer is \\boxed{6}."],
        "final_answer_correct": False,
        "label": 1,
    },
    "gsm8k": {"question": QUESTION, "answer": "He has 2 apples.\nThen 2 + 3 = <<2+3=5>>5 apples.\n#### 5"},
    "gsm8k_solutions": {
        "question": QUESTION,
        "ground_truth": "He has 2 + 3 = <<2+3=5>>5 apples.\nA: 5",
        "6b_finetuning": {"is_correct": False, "solution": "He has 2 * 3 = <<2*3=6>>6 apples.\nA: 6"},
        "175b_verification": {"is_correct": True, "solution": "He has 2 + 3 = <<2+3=5>>5 apples.\nA: 5"},
    },
    "math": {
        "problem": "Compute $\\frac12 + \\frac14$.",
        "solution": "We get $\\frac{2}{4} + \\frac{1}{4} = \\boxed{\\frac{3}{4}}$.",
        "answer": "\\frac{3}{4}",
        "subject": "Prealgebra",
        "level": 1,
        "unique_id": "test/prealgebra/1.json",
    },
    "prm800k": {
        "labeler": "toy-labeler",
        "timestamp": "2022-01-01T00:00:00",
        "generation": 3,
        "is_quality_control_question": False,
        "is_initial_screening_question": False,
        "question": {
            "problem": QUESTION,
            "ground_truth_answer": "5",
            "ground_truth_solution": "2 + 3 = 5, so $\\boxed{5}$.",
            "pre_generated_steps": ["He has 2 apples.", "He buys 3, so 2 * 3 = 6.", "# Answer\n\n6"],
            "pre_generated_answer": "6",
        },
        "label": {
            "steps": [
                {"completions": [{"text": "He has 2 apples.", "rating": 0}], "chosen_completion": 0},
                {"completions": [{"text": "He buys 3, so 2 * 3 = 6.", "rating": -1}], "chosen_completion": None},
            ],
            "finish_reason": "found_error",
        },
    },
    "thought_anchors": {
        "model": "toy-model",
        "condition": "correct_base_solution",
        "problem_id": "problem_1",
        "problem": QUESTION,
        "prompt": f"Solve: {QUESTION} Solution: \n<think>\n",
        "trace": "He has 2 apples.\n\nThen 3 more makes 5. Done.\n</think>\n\nSo \\boxed{5}.",
        "answer": "5",
        "is_correct": True,
        "gt_answer": "5",
        "gt_solution": "2 + 3 = 5.",
        "chunks": [
            {
                "chunk": "He has 2 apples. Then 3 more makes 5.",  # the chunker joined a paragraph break
                "chunk_idx": 0,
                "function_tags": ["problem_setup"],
                "depends_on": [],
                "accuracy": 0.9,
                "resampling_importance_accuracy": 0.1,
                "counterfactual_importance_accuracy": 0.05,
                "forced_importance_accuracy": 0.2,
            },
            {
                "chunk": "Done.",
                "chunk_idx": 1,
                "function_tags": ["final_answer_emission"],
                "depends_on": ["0"],
                "accuracy": 1.0,
                "resampling_importance_accuracy": None,
                "counterfactual_importance_accuracy": 0.0,
                "forced_importance_accuracy": 0.0,
            },
        ],
    },
    "qwen_rm": {
        "idx": 7,
        "question": QUESTION,
        "gt": "5",
        "solution": "$2 + 3 = \\boxed{5}$",
        "level": "Level 1",
        "system": "Reason step by step.",
        "response": ["2 + 3 = 5, so \\boxed{5}.", "2 * 3 = 6, so \\boxed{6}."],
        "pred": ["5", "6"],
        "score": [True, False],
        "pred_score": [[1.5], [-0.75]],
    },
    "math_shepherd": {
        "input": f"{QUESTION} Step 1: He has 2 + 3 = 5 apples. ки\nStep 2: The answer is: 6 ки",
        "label": f"{QUESTION} Step 1: He has 2 + 3 = 5 apples. +\nStep 2: The answer is: 6 -",
        "task": "GSM8K",
    },
    "trl_completions": {
        "step": 3,
        "prompt": [{"role": "user", "content": QUESTION}],
        "completion": [{"role": "assistant", "content": "He has 2 + 3 = 5 apples. The answer is 5."}],
        "accuracy_reward": 1.0,
        "advantage": 0.5,
    },
    "verl_rollouts": {
        "input": f"user\n{QUESTION}\nassistant\n",
        "output": "He has 2 + 3 = 5 apples. The answer is 5.",
        "gts": "5",
        "score": 1.0,
        "step": 3,
    },
}


def claimants(record: dict[str, Any]) -> list[str]:
    """The specific (non-fallback) importers that claim a record: exactly one for every known format."""
    specific = [name for name in importers.names() if not importers.get(name).fallback]
    return [name for name in specific if importers.get(name).sniff(record)]


def write_jsonl(path: Path, lines: list[Any]) -> Path:
    path.write_text("\n".join(line if isinstance(line, str) else json.dumps(line) for line in lines) + "\n")
    return path
