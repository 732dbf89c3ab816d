"""TRL GRPO completion logs: the ``completions/completions_NNNNN.parquet`` files ``GRPOTrainer`` writes into its
output_dir with ``log_completions=True`` (trl 1.16, ``GRPOTrainer.log``), one row per completion of the step's
generation batch: ``step``, ``prompt`` (text, or chat messages ``[{role, content}]``), ``completion`` (text or
messages), one column per reward function (named after it; NaN where it returned None), the columns logged
with ``log_extra``, and ``advantage``. A folder of them is one run.

Mapping: question = the prompt text, or its last user message (a system message is kept in
``metadata["system"]``; a text prompt is also the exact ``prompt``, since TRL applies no chat template to it);
cot = the completion text. The numeric columns between ``completion`` and ``advantage`` are the rewards, the
rest are extras (kept in ``metadata["extra"]``; one named like a reference answer or solution becomes the
reference, and a one-line ``solution``, which TRL's ``accuracy_reward`` reads as the gold answer, the answer).
The outcome: a ``correct`` column if the file has one (``--map accuracy_reward=correct``), else an
accuracy-like reward that is 0/1, else the only reward, else the total (their sum: TRL's default weights),
when it is 0 or 1; a reward on another scale leaves the outcome to answer checking. TRL's advantage is kept as
it was logged (``metadata["rollout"]``).
"""

from __future__ import annotations

from typing import Any

from rredcot_viz.errors import TraceError
from rredcot_viz.traces.importers.base import Importer, importers
from rredcot_viz.traces.importers.fields import find_field, reference_text
from rredcot_viz.traces.importers.rollouts import (
    correct_from,
    json_safe,
    number,
    outcome_of,
    prompt_key,
    rollout_metadata,
    step_of,
)
from rredcot_viz.traces.trace import Trace

COLUMNS = ("step", "prompt", "completion", "advantage")
SHORT_ANSWER_CHARS = 80


@importers.register("trl_completions")
class TRLCompletionsImporter(Importer):
    name = "trl_completions"
    description = "TRL GRPO completion logs (completions_NNNNN.parquet: step, prompt, completion, rewards, advantage)"

    columns = COLUMNS

    @classmethod
    def sniff(cls, record: dict[str, Any]) -> bool:
        return all(column in record for column in COLUMNS)

    def convert(self, record: dict[str, Any]) -> list[Trace]:
        step = step_of(record["step"])
        question, system, raw_prompt = prompt_parts(record["prompt"])
        cot = message_text(record["completion"], "completion")
        rewards, extras = _rewards_and_extras(record)
        present = [value for value in rewards.values() if value is not None]
        total = sum(present) if present else None
        if "correct" in record and record["correct"] is not None:
            correct, outcome_from = correct_from(record["correct"], "correct"), "correct"
            if correct is None:
                raise TraceError(f"`correct` must be true/false or 0/1, got {record['correct']!r}")
        else:
            correct, outcome_from = outcome_of(rewards, total)
        answer, solution = _references(extras)
        metadata = rollout_metadata(
            step,
            prompt_key(record["prompt"]),
            total,
            rewards,
            number(record["advantage"], "advantage"),
            outcome_from,
        )
        if system:
            metadata["system"] = system
        if extras:
            metadata["extra"] = json_safe(extras)
        return [
            Trace(
                question=question,
                cot=cot,
                reference_answer=answer,
                reference_solution=solution,
                correct=correct,
                prompt=raw_prompt,
                source=self.name,
                metadata=metadata,
            )
        ]


def _rewards_and_extras(record: dict[str, Any]) -> tuple[dict[str, float | None], dict[str, Any]]:
    """The reward columns (numeric, right after ``completion``, in TRL's order) and the rest."""
    rewards: dict[str, float | None] = {}
    extras: dict[str, Any] = {}
    names = list(record)
    start = names.index("completion") + 1
    reading_rewards = True
    for name in names[start:]:
        if name in (*COLUMNS, "correct", "image", "images"):
            continue
        value = record[name]
        if reading_rewards and (value is None or isinstance(value, int | float)) and not isinstance(value, bool):
            rewards[name] = number(value, name)
        else:
            reading_rewards = False
            extras[name] = value
    extras.update({n: record[n] for n in names[: start - 1] if n not in (*COLUMNS, "correct", "image", "images")})
    return rewards, extras


def _references(extras: dict[str, Any]) -> tuple[str | None, str | None]:
    """(reference answer, reference solution) from the extras, taken out of them. TRL's ``accuracy_reward``
    reads its gold answer from a ``solution`` column: a one-line solution is read as the answer."""
    answer_field = find_field(extras, "reference_answer")
    solution_field = find_field(extras, "reference_solution")
    answer = reference_text(extras.pop(answer_field), answer_field) if answer_field else None
    solution = extras.pop(solution_field) if solution_field else None
    if solution is not None and not isinstance(solution, str):
        raise TraceError(f"`{solution_field}` must be text, got {type(solution).__name__}")
    solution = solution.strip() if solution else None
    if answer is None and solution and "\n" not in solution and len(solution) <= SHORT_ANSWER_CHARS:
        return reference_text(solution, solution_field), None  # type: ignore[arg-type]
    return answer, solution or None


def prompt_parts(prompt: Any) -> tuple[str, str | None, str | None]:
    """(question, system message, exact prompt text) of a text prompt or a chat conversation."""
    if isinstance(prompt, str):
        if not prompt.strip():
            raise TraceError("the prompt is empty")
        return prompt, None, prompt
    if not isinstance(prompt, list) or not prompt:
        raise TraceError(f"`prompt` must be text or a list of chat messages, got {type(prompt).__name__}")
    users = [m for m in prompt if isinstance(m, dict) and m.get("role") == "user"]
    systems = [m for m in prompt if isinstance(m, dict) and m.get("role") == "system"]
    if not users:
        raise TraceError("the chat prompt has no user message")
    system = "\n".join(content_text(m.get("content")) for m in systems) or None
    return content_text(users[-1].get("content")), system, None


def message_text(value: Any, name: str) -> str:
    """A completion as text: the text itself, or the assistant messages' contents joined."""
    if isinstance(value, str):
        return value
    if isinstance(value, list) and all(isinstance(m, dict) for m in value):
        said = [content_text(m.get("content")) for m in value if m.get("role", "assistant") == "assistant"]
        if said:
            return "\n".join(said)
    raise TraceError(f"`{name}` must be text or a list of assistant messages, got {str(value)[:60]!r}")


def content_text(content: Any) -> str:
    """A chat message's content: text, or the text blocks of a multimodal content list."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(block.get("text") or "" for block in content if isinstance(block, dict))
    return "" if content is None else str(content)
