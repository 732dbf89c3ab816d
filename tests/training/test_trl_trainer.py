"""RREDCoT inside TRL (trl 1.16) on a tiny random model: the guide's example runs; the loss sees exactly the
per-token advantages our own credit assignment computes, for every TRL loss type with several iterations and
gradient accumulation; a flat estimator gives TRL's own advantages under each ``scale_rewards`` (None rewards
included) and for eval groups of ``num_generations_eval``; the completions table logs the advantages trained
with; settings the plug-in cannot honour are refused with a message before training."""

from __future__ import annotations

import copy
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import torch

datasets = pytest.importorskip("datasets")
trl = pytest.importorskip("trl")

from tiny import tiny_model, tiny_tokenizer  # noqa: E402

import rredcot_viz.training.trl_trainer as trl_module  # noqa: E402
from rredcot_viz.errors import ConfigError  # noqa: E402
from rredcot_viz.estimators import estimators  # noqa: E402
from rredcot_viz.model.lm import LanguageModel  # noqa: E402
from rredcot_viz.store import Store  # noqa: E402
from rredcot_viz.training import CreditConfig, config_for  # noqa: E402
from rredcot_viz.training.credit import couple_group, group_sigmas  # noqa: E402
from rredcot_viz.training.rollouts import TrainRollout  # noqa: E402
from rredcot_viz.training.task import Problem  # noqa: E402
from rredcot_viz.training.trl_trainer import RREDCoTGRPOTrainer  # noqa: E402
from rredcot_viz.types import StateValues  # noqa: E402
from rredcot_viz.workflows.train import training_runs  # noqa: E402

PROMPT = "Problem: Ann has 2 pens and gets 3 more. How many pens?\nWorking:"
ROW = {"prompt": PROMPT, "answer": "5", "solution": "2 + 3 = 5.\nThe answer is 5."}
TWO_ROWS = [ROW, {**ROW, "prompt": PROMPT.replace("2 pens", "4 pens"), "answer": "7"}]
GUIDE = Path(__file__).parents[2] / "docs" / "guide.md"
LOSS_HELP = trl.GRPOConfig.__dataclass_fields__["loss_type"].metadata["help"]
LOSS_TYPES = re.findall(r"'(\w+)'", LOSS_HELP.split("Supported values are")[1].split(". ")[0])


def parity(completions, **_):
    return [float(sum(map(ord, c)) % 2) for c in completions]  # a random model never solves it: give groups variance


def parity_declining_the_first(completions, **_):
    """TRL's None reward: this function has nothing to say about the first completion of each batch."""
    return [None if i == 0 else reward for i, reward in enumerate(parity(completions))]


def grpo_args(tmp_path, **overrides) -> trl.GRPOConfig:
    settings = dict(
        output_dir=str(tmp_path / "out"), per_device_train_batch_size=4, num_generations=4, max_completion_length=8,
        max_steps=1, learning_rate=1e-2, use_cpu=True, report_to="none", logging_steps=1, save_strategy="no",
        seed=0, disable_tqdm=True,
    )  # fmt: skip
    return trl.GRPOConfig(**{**settings, **overrides})


def make_trainer(tmp_path, rows=(ROW,), credit=None, reward=parity, **overrides) -> RREDCoTGRPOTrainer:
    torch.manual_seed(0)
    return RREDCoTGRPOTrainer(
        tiny_model(0),
        reward_funcs=[reward],
        args=grpo_args(tmp_path, **overrides),
        train_dataset=datasets.Dataset.from_list(list(rows)),
        processing_class=tiny_tokenizer(),
        credit=credit or CreditConfig(k=3),
        eval_dataset=datasets.Dataset.from_list(list(rows)) if "num_generations_eval" in overrides else None,
    )


def capture_loss_inputs(trainer) -> list[dict]:
    seen: list[dict] = []
    compute_loss = trainer._compute_loss

    def capture(model, inputs):
        seen.append({k: v.detach().clone() if isinstance(v, torch.Tensor) else v for k, v in inputs.items()})
        return compute_loss(model, inputs)

    trainer._compute_loss = capture
    return seen


def test_the_readme_example_runs(tmp_path, monkeypatch):
    """The guide's TRL block, executed as written; only the model download and the run's size are swapped for
    a tiny random model and one short step."""
    block = GUIDE.read_text().split("RREDCoT-GRPO inside TRL")[1].split("```python\n")[1].split("```")[0]
    grpo = trl.GRPOConfig
    small = dict(max_steps=1, max_completion_length=8, per_device_train_batch_size=8, use_cpu=True, report_to="none",
                 save_strategy="no", disable_tqdm=True)  # fmt: skip
    monkeypatch.setattr(trl, "GRPOConfig", lambda **kw: grpo(**{**kw, **small}))
    monkeypatch.setattr(trl_module, "GRPOConfig", trl.GRPOConfig)
    monkeypatch.setattr("trl.trainer.grpo_trainer.create_model_from_path", lambda *a, **k: tiny_model(0))
    monkeypatch.setattr("trl.trainer.grpo_trainer.AutoProcessor.from_pretrained", lambda *a, **k: tiny_tokenizer())
    monkeypatch.chdir(tmp_path)
    namespace = {"my_reward": parity, "dataset": datasets.Dataset.from_list([ROW])}
    exec(compile(block, "docs/guide.md", "exec"), namespace)
    trainer = namespace["trainer"]
    assert trainer.state.global_step == 1 and trainer.credit == CreditConfig(k=4)
    store = Store(tmp_path / "runs" / "trl.duckdb")
    assert training_runs(store)["run_id"].tolist() == ["trl-rredcot-1"]
    assert len(store.train_rollouts("trl-rredcot-1", 1)) == 8


def test_one_step_uses_our_token_advantages(tmp_path):
    model, tokenizer = tiny_model(0), tiny_tokenizer()
    start = copy.deepcopy(model)
    data = datasets.Dataset.from_list([ROW])
    credit = CreditConfig(k=3)
    store = Store(tmp_path / "s.duckdb")
    trainer = RREDCoTGRPOTrainer(
        model, reward_funcs=[parity], args=grpo_args(tmp_path, log_completions=True), train_dataset=data,
        processing_class=tokenizer, credit=credit, store=store, run_id="trl-test",
    )  # fmt: skip
    seen = capture_loss_inputs(trainer)
    trainer.train()

    (inputs,) = seen
    advantages, mask = inputs["advantages"], inputs["completion_mask"].bool()
    assert advantages.shape == inputs["completion_ids"].shape  # per token, not per sequence
    assert (advantages[~mask] == 0).all() and advantages[mask].abs().sum() > 0

    # our own credit for the same group, under the weights the completions were sampled with
    policy = LanguageModel(start, tokenizer, name="start", fingerprint="start")
    rollouts = []
    for i in range(4):
        prompt = inputs["prompt_ids"][i][inputs["prompt_mask"][i].bool()].tolist()
        completion = inputs["completion_ids"][i][mask[i]].tolist()
        text = policy.decode(completion)
        rollouts.append(TrainRollout(prompt, completion, text, parity([text])[0], 0))
    problem = Problem(PROMPT, "5", ROW["solution"])
    sigmas = group_sigmas(policy, credit, estimators.get("rredcot")(), rollouts[0].prompt_ids, rollouts, problem)
    couple_group(rollouts, sigmas, credit, std="trl")
    for i, rollout in enumerate(rollouts):
        expected = torch.as_tensor(rollout.token_advantages, dtype=advantages.dtype)
        assert torch.allclose(advantages[i, : len(expected)], expected, atol=1e-5), i

    # the completions table shows the advantages trained with (each completion's token mean), not GRPO's
    table = pd.read_parquet(tmp_path / "out" / "completions" / "completions_00001.parquet")
    means = {r.text: float(np.mean(r.token_advantages)) for r in rollouts}
    assert sorted(table["advantage"]) == pytest.approx(sorted(means.values()), abs=1e-5)
    assert set(table["credit_estimator"]) == {"rredcot"}
    assert trainer.state.log_history[0]["credit_groups_rredcot"] == 1
    assert trainer.state.log_history[0]["credit_groups_answer_only"] == 0

    runs = training_runs(store)
    assert runs["run_id"].tolist() == ["trl-test"] and runs["method"][0] == "rredcot-trl"
    records = store.train_rollouts("trl-test", 1)
    logged = {r["text"]: r for r in records}  # TRL shuffles the batch after logging
    assert len(records) == 4 and set(logged) == {r.text for r in rollouts}
    for rollout in rollouts:
        assert logged[rollout.text]["segment_advantages"] == pytest.approx(rollout.segment_advantages, abs=1e-5)
        assert logged[rollout.text]["credit_estimator"] == "rredcot"
    metrics = store.train_metrics(["trl-test"])
    assert metrics["reward_mean"].tolist() == [sum(r.reward for r in rollouts) / 4]
    assert metrics["credit_groups_rredcot"].tolist() == [1]


def test_a_prompt_without_a_solution_is_credited_by_r_hat_alone_and_logged_so(tmp_path):
    trainer = make_trainer(tmp_path, rows=[{"prompt": PROMPT, "answer": "5"}])
    trainer.train()
    assert {r.info["credit_estimator"] for r in trainer.last_rollouts} == {"answer_only"}
    assert trainer.state.log_history[0]["credit_groups_answer_only"] == 1
    assert trainer.state.log_history[0]["credit_groups_rredcot"] == 0


@pytest.mark.parametrize("loss_type", LOSS_TYPES)
def test_every_loss_type_trains_on_our_advantages(tmp_path, loss_type):
    """Two iterations over one generation batch, two accumulated micro-batches each: every loss call reads our
    (B, T) advantages for the rows it gets."""
    assert {"grpo", "dapo", "dr_grpo", "bnpo"} <= set(LOSS_TYPES)
    level = "sequence" if loss_type == "luspo" else "token"  # luspo is a sequence-level loss
    trainer = make_trainer(
        tmp_path, loss_type=loss_type, num_iterations=2, gradient_accumulation_steps=2, per_device_train_batch_size=2,
        max_steps=2, importance_sampling_level=level,
    )  # fmt: skip
    seen = capture_loss_inputs(trainer)
    trainer.train()
    ours = {tuple(r.completion_ids): r.token_advantages for r in trainer.last_rollouts}
    assert len(ours) >= 2 and any(np.abs(a).max() > 0 for a in ours.values())  # a group with variance
    assert len(seen) == 4  # 2 optimiser steps x 2 micro-batches, one generation batch
    for inputs in seen:
        mask = inputs["completion_mask"].bool()
        assert inputs["advantages"].shape == inputs["completion_ids"].shape
        for row in range(len(mask)):
            expected = ours[tuple(inputs["completion_ids"][row][mask[row]].tolist())]
            np.testing.assert_allclose(inputs["advantages"][row][mask[row]].numpy(), expected, atol=1e-6)
    assert all(np.isfinite(entry["loss"]) for entry in trainer.state.log_history if "loss" in entry)


class Flat:
    """A flat value estimator (Q-hat constant until the outcome): RREDCoT's credit is then GRPO's."""

    name = "flat"

    def series(self, subject):
        return []

    def combine(self, series, scores, n_states, outcome):
        return StateValues(self.name, np.append(np.full(n_states - 1, 0.5), outcome))


def trl_and_our_advantages(trainer, monkeypatch) -> list[tuple[torch.Tensor, torch.Tensor, torch.Tensor]]:
    """(TRL's per-sequence advantages, ours per token, the mask) of every generation batch."""
    monkeypatch.setattr(trl_module, "credit_estimator", lambda credit, problem: Flat())
    pairs = []
    ours = trainer.rredcot_advantages

    def both(inputs, output):
        theirs = output["advantages"].clone()
        mine = ours(inputs, output)
        pairs.append((theirs, mine, output["completion_mask"].bool()))
        return mine

    trainer.rredcot_advantages = both
    return pairs


@pytest.mark.parametrize("scale_rewards", ["group", "batch", "none"])
def test_a_flat_estimator_gives_trl_advantages_exactly(tmp_path, monkeypatch, scale_rewards):
    """Two prompts x 4 generations, one completion without any reward (TRL: left out of its group, advantage 0):
    with a flat estimator every token's advantage is TRL's advantage of its sequence, under TRL's std."""
    trainer = make_trainer(tmp_path, rows=TWO_ROWS, reward=parity_declining_the_first, scale_rewards=scale_rewards,
                           per_device_train_batch_size=8)  # fmt: skip
    pairs = trl_and_our_advantages(trainer, monkeypatch)
    trainer.train()
    ((theirs, mine, mask),) = pairs
    assert theirs[0] == 0 and theirs.abs().sum() > 0
    for row in range(len(theirs)):
        np.testing.assert_allclose(mine[row][mask[row]].numpy(), float(theirs[row]), atol=1e-6)
    assert not np.isfinite(trainer.last_rollouts[0].reward)  # the declined row: no reward, not a made-up 0 or -1


def test_eval_groups_have_num_generations_eval_rows(tmp_path, monkeypatch):
    trainer = make_trainer(tmp_path, rows=TWO_ROWS, num_generations_eval=2, per_device_eval_batch_size=4)
    pairs = trl_and_our_advantages(trainer, monkeypatch)
    trainer.evaluate()
    ((theirs, mine, mask),) = pairs
    assert len(theirs) == 4 and theirs.abs().sum() > 0 and not trainer.model.training
    for row in range(4):  # TRL normalised in pairs; grouping by num_generations (4) would not match
        np.testing.assert_allclose(mine[row][mask[row]].numpy(), float(theirs[row]), atol=1e-6)


def test_settings_the_plug_in_cannot_honour_are_refused_before_training(tmp_path):
    data = datasets.Dataset.from_list([{"prompt": PROMPT, "solution": "2 + 3 = 5."}])
    with pytest.raises(ConfigError, match="the train_dataset has no 'answer' column.*its columns: prompt, solution"):
        RREDCoTGRPOTrainer("never/loaded", reward_funcs=[parity], args=grpo_args(tmp_path), train_dataset=data)
    with pytest.raises(ConfigError, match="normalize_then_sum"):
        RREDCoTGRPOTrainer(
            "never/loaded", reward_funcs=[parity], train_dataset=datasets.Dataset.from_list([ROW]),
            args=grpo_args(tmp_path, multi_objective_aggregation="normalize_then_sum"),
        )  # fmt: skip
    with pytest.raises(ConfigError, match="credit= takes a CreditConfig .* got RREDCoTGRPOConfig"):
        RREDCoTGRPOTrainer("never/loaded", reward_funcs=[parity], credit=config_for("rredcot"))


def test_multi_segment_completions_get_per_segment_advantages(tmp_path):
    trainer = make_trainer(tmp_path, per_device_train_batch_size=2, num_generations=2)
    tokenizer = tiny_tokenizer()
    texts = [  # three reasoning lines each; the answer line is credited with the last one (reasoning scope)
        "2 + 3 = 5.\nCheck: 5 - 3 = 2.\nSo the sum is 5.\nThe answer is 5.",
        "2 + 3 = 6.\nBut wait.\nHmm, 6 it is.\nThe answer is 6.",
    ]
    prompt, completions = tokenizer(PROMPT)["input_ids"], [tokenizer(t)["input_ids"] for t in texts]
    width = max(map(len, completions))
    output = {
        "prompt_ids": torch.tensor([prompt, prompt]),
        "prompt_mask": torch.ones(2, len(prompt), dtype=torch.long),
        "completion_ids": torch.tensor([c + [0] * (width - len(c)) for c in completions]),
        "completion_mask": torch.tensor([[1] * len(c) + [0] * (width - len(c)) for c in completions]),
    }
    trainer._global_rewards = torch.tensor([1.0, 0.0])
    advantages = trainer.rredcot_advantages([ROW] * 2, output)
    policy = LanguageModel(trainer.model, tokenizer, name="m", fingerprint="m")
    rollouts = [TrainRollout(prompt, c, policy.decode(c), r, 0) for c, r in zip(completions, [1.0, 0.0], strict=True)]
    problem = Problem(PROMPT, "5", ROW["solution"])
    credit = CreditConfig(k=3)
    sigmas = group_sigmas(policy, credit, estimators.get("rredcot")(), prompt, rollouts, problem)
    couple_group(rollouts, sigmas, credit, std="trl")
    assert [len(r.segments) for r in rollouts] == [3, 3]
    for i, rollout in enumerate(rollouts):
        assert len(set(rollout.segment_advantages)) == 3  # one advantage per segment, not one per sequence
        assert torch.allclose(advantages[i, : len(completions[i])], torch.tensor(rollout.token_advantages).float())
        assert (advantages[i, len(completions[i]) :] == 0).all()
