"""verl rollout dumps: the ``<rollout_data_dir>/<step>.jsonl`` files ``RayPPOTrainer._dump_generations`` writes
(``trainer.rollout_data_dir``; the validation dump has the same shape), one line per response: ``input`` (the
prompt decoded without special tokens), ``output`` (the response), ``score`` (the summed token-level reward),
``step``, ``gts`` (the reward model's ground truth, in recent versions) and every reward extra info the reward
function returned (``acc``, ``pred``, ...). A folder of them is one run.

Mapping: question = the user turn of ``input`` when it is a chat template with its role markers left
(``system ... user ... assistant``), else ``input`` as is (kept whole in ``metadata["input"]``); cot =
``output``; reference answer = ``gts`` when it is one answer (other ground truths stay in ``metadata``). The
outcome: ``acc`` when it is 0/1 or true/false, else ``score`` when it is 0 or 1, else answer checking against
the reference. verl does not dump advantages: the run view recomputes GRPO's from each group's scores
(grouped by step and input, as verl groups by the prompt's uid).
"""

from __future__ import annotations

import re
from typing import Any

from rredcot_viz.errors import TraceError
from rredcot_viz.traces.importers.base import Importer, importers
from rredcot_viz.traces.importers.fields import reference_text
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

COLUMNS = ("input", "output", "score", "step")
SNIFFED = ("input", "output", "score")  # a line without ``step`` is verl's still, and is reported as such
_CHAT = re.compile(r"^(?:system\n.*?\n)?user\n(?P<question>.*?)\n?assistant\n?$", re.DOTALL)
_SPECIAL_TOKENS = re.compile(r"(?:\n?<\|[a-z_]+\|>\n?)+")  # <|im_start|> ...: a prompt decoded with its specials


@importers.register("verl_rollouts")
class VerlRolloutsImporter(Importer):
    name = "verl_rollouts"
    description = "verl rollout dumps (<step>.jsonl: input, output, score, step, gts, reward extra info)"

    columns = COLUMNS

    @classmethod
    def sniff(cls, record: dict[str, Any]) -> bool:
        return all(column in record for column in SNIFFED)

    def convert(self, record: dict[str, Any]) -> list[Trace]:
        if "step" not in record:
            raise TraceError("`step` is missing (verl writes it on every line of a dump), so this line is left out")
        step = step_of(record["step"])
        prompt, cot = record["input"], record["output"]
        if not isinstance(prompt, str) or not isinstance(cot, str):
            raise TraceError("`input` and `output` must be text")
        match = _CHAT.match(_SPECIAL_TOKENS.sub("\n", prompt).strip())
        question = match.group("question").strip() if match else prompt
        score = number(record["score"], "score")
        extras = {k: v for k, v in record.items() if k not in (*COLUMNS, "gts")}
        rewards = {"score": score, **{k: number(v, k) for k, v in extras.items() if _numeric(v)}}
        correct, outcome_from = None, None
        if "acc" in record and record["acc"] is not None:
            correct, outcome_from = correct_from(record["acc"], "acc"), "acc"
        if correct is None:
            correct, outcome_from = outcome_of({"score": score}, score)
        truth = record.get("gts")
        try:
            reference = reference_text(truth, "gts")
        except TraceError:
            reference = None  # a structured ground truth (test cases, a list): kept below, not an answer
        metadata = rollout_metadata(step, prompt_key(prompt), score, rewards, None, outcome_from)
        metadata["input"] = prompt
        if extras or (truth is not None and reference is None):
            metadata["extra"] = json_safe({**extras, **({"gts": truth} if reference is None and truth else {})})
        return [
            Trace(
                question=question or prompt,
                cot=cot,
                reference_answer=reference,
                correct=correct,
                source=self.name,
                metadata=metadata,
            )
        ]


def _numeric(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)
