"""PRM800K (openai/prm800k) raw labelling records: ``{labeler, timestamp, generation, is_quality_control_question,
is_initial_screening_question, question: {problem, ground_truth_answer, ...}, label: {steps, total_time,
finish_reason}}``, each ``label.steps[k]`` being ``{completions: [{text, rating}] | null, human_completion,
chosen_completion}`` with ratings -1 (wrong), 0 (neutral, not an error), +1 (good).

Phase 2 (``generation`` not null and ``question.pre_generated_steps`` present): the trace is the pre-generated
solution, ``steps`` = ``pre_generated_steps``, ``cot`` = the steps joined by a blank line, ``final_answer`` =
``pre_generated_answer``. ``label.steps[k]`` rates pre-generated step k (its first completion is that step's
text); ``step_labels`` are those ratings, for the labelled prefix only. Index convention (docs/method.md §0.2, §8.2):
``first_error`` = 0-based position of the first step rated -1; -1 when ``finish_reason == "solution"`` and no
step is rated -1; None otherwise (``give_up``, or labelling stopped for another reason).

Phase 1 (``generation`` null): labellers rated several candidate completions per step and continued one, so
the trace is the chosen path: per step the ``chosen_completion``, else the ``human_completion``; the path ends
at the first step with neither (labelling stopped there). A human-written step carries no rating in the data;
it was written as the correct continuation, so it is labelled +1 and its index listed in
``metadata["human_steps"]``. ``first_error`` follows the same -1 rule along the path.

No source id exists: ``trace_id`` is None; labeler, timestamp and generation go to ``metadata``. ``correct``
is None, so the outcome is decided by answer checking against ``ground_truth_answer``.
"""

from __future__ import annotations

from typing import Any

from rredcot_viz.errors import TraceError
from rredcot_viz.traces.importers.base import Importer, importers
from rredcot_viz.traces.trace import Trace

STEP_SEPARATOR = "\n\n"
_METADATA_FIELDS = (
    "labeler",
    "timestamp",
    "generation",
    "is_quality_control_question",
    "is_initial_screening_question",
)


def _rating(completion: dict[str, Any], where: str) -> int:
    rating = completion.get("rating")
    if rating not in (-1, 0, 1):
        raise TraceError(f"{where} has rating {rating!r}; PRM800K ratings are -1, 0 or 1")
    return int(rating)


def first_error_of(ratings: list[int], finish_reason: str | None) -> int | None:
    """0-based position of the first -1; -1 if labelling finished with a solution and found none; else None."""
    if -1 in ratings:
        return ratings.index(-1)
    return -1 if finish_reason == "solution" else None


@importers.register("prm800k")
class Prm800kImporter(Importer):
    name = "prm800k"
    description = "PRM800K raw labelling records (phase 2 pre-generated steps or the phase-1 chosen path)"

    @classmethod
    def sniff(cls, record: dict[str, Any]) -> bool:
        label, question = record.get("label"), record.get("question")
        return (
            isinstance(label, dict)
            and isinstance(question, dict)
            and "steps" in label
            and "problem" in question
            and "generation" in record
        )

    def convert(self, record: dict[str, Any]) -> list[Trace]:
        question, label = record["question"], record["label"]
        labelled = label["steps"]
        if not isinstance(labelled, list):
            raise TraceError("`label.steps` must be a list")
        finish_reason = label.get("finish_reason")
        metadata: dict[str, Any] = {key: record[key] for key in _METADATA_FIELDS if key in record}
        metadata["finish_reason"] = finish_reason
        if record["generation"] is None:
            metadata["phase"] = 1
            steps, ratings, human = self._chosen_path(labelled)
            if human:
                metadata["human_steps"] = human
            final_answer = None
        elif question.get("pre_generated_steps"):
            metadata["phase"] = 2
            metadata["pre_generated_verifier_score"] = question.get("pre_generated_verifier_score")
            steps, ratings = self._pre_generated(question["pre_generated_steps"], labelled)
            final_answer = question.get("pre_generated_answer")
        else:
            raise TraceError(
                f"generation is {record['generation']!r} but `question.pre_generated_steps` is missing: neither a "
                "phase-1 record (generation null) nor a phase-2 record"
            )
        return [
            Trace(
                question=question["problem"],
                cot=STEP_SEPARATOR.join(steps),
                final_answer=None if final_answer is None else str(final_answer),
                reference_answer=question["ground_truth_answer"],
                reference_solution=question.get("ground_truth_solution"),
                steps=tuple(steps),
                first_error=first_error_of(ratings, finish_reason),
                step_labels=tuple(ratings),
                source=self.name,
                metadata=metadata,
            )
        ]

    @staticmethod
    def _pre_generated(pre_generated: list[str], labelled: list[dict[str, Any]]) -> tuple[list[str], list[int]]:
        if len(labelled) > len(pre_generated):
            raise TraceError(f"{len(labelled)} labelled steps but only {len(pre_generated)} pre-generated steps")
        ratings = []
        for index, step in enumerate(labelled):
            completions = step.get("completions") or []
            if not completions or completions[0].get("text") != pre_generated[index]:
                raise TraceError(
                    f"label step {index}: its first completion is not pre-generated step {index}, so its rating "
                    "cannot be attributed to that step"
                )
            ratings.append(_rating(completions[0], f"label step {index}"))
        return list(pre_generated), ratings

    @staticmethod
    def _chosen_path(labelled: list[dict[str, Any]]) -> tuple[list[str], list[int], list[int]]:
        steps: list[str] = []
        ratings: list[int] = []
        human: list[int] = []
        for index, step in enumerate(labelled):
            chosen = step.get("chosen_completion")
            if chosen is not None:
                completions = step.get("completions") or []
                if not 0 <= chosen < len(completions):
                    raise TraceError(f"label step {index}: chosen_completion {chosen} is not one of its completions")
                completion = completions[chosen]
                ratings.append(_rating(completion, f"label step {index} (chosen completion {chosen})"))
            elif step.get("human_completion") is not None:
                completion = step["human_completion"]
                rating = completion.get("rating")
                ratings.append(1 if rating is None else _rating(completion, f"label step {index} (human)"))
                human.append(len(steps))
            else:
                break
            steps.append(completion["text"])
        if not steps:
            raise TraceError("no step of `label.steps` has a chosen or human completion: the path is empty")
        return steps, ratings, human
