"""RREDCoT inside TRL: one GRPOTrainer step on a tiny random model, with the loss seeing exactly the per-token
advantages our own credit assignment computes for the same group, and the rollouts logged to the store."""

from __future__ import annotations

import copy

import pytest
import torch

datasets = pytest.importorskip("datasets")
trl = pytest.importorskip("trl")

from tiny import tiny_model, tiny_tokenizer  # noqa: E402

from rredcot_viz.estimators import estimators  # noqa: E402
from rredcot_viz.model.lm import LanguageModel  # noqa: E402
from rredcot_viz.store import Store  # noqa: E402
from rredcot_viz.training.credit import couple_group, group_sigmas  # noqa: E402
from rredcot_viz.training.methods.rredcot import RREDCoTGRPOConfig  # noqa: E402
from rredcot_viz.training.rollouts import TrainRollout  # noqa: E402
from rredcot_viz.training.task import Problem  # noqa: E402
from rredcot_viz.training.trl_trainer import RREDCoTGRPOTrainer  # noqa: E402
from rredcot_viz.workflows.train import training_runs  # noqa: E402

PROMPT = "Problem: Ann has 2 pens and gets 3 more. How many pens?\nWorking:"


def parity(completions, **_):
    return [float(sum(map(ord, c)) % 2) for c in completions]  # a random model never solves it: give groups variance


def test_one_step_uses_our_token_advantages(tmp_path):
    torch.manual_seed(0)
    model, tokenizer = tiny_model(0), tiny_tokenizer()
    start = copy.deepcopy(model)
    data = datasets.Dataset.from_list([{"prompt": PROMPT, "answer": "5", "solution": "2 + 3 = 5.\nThe answer is 5."}])
    args = trl.GRPOConfig(
        output_dir=str(tmp_path / "out"), per_device_train_batch_size=4, num_generations=4, max_completion_length=8,
        max_steps=1, learning_rate=1e-2, use_cpu=True, report_to="none", logging_steps=1, save_strategy="no",
        seed=0, disable_tqdm=True,
    )  # fmt: skip
    credit = RREDCoTGRPOConfig(segments=3, coupling="a")
    store = Store(tmp_path / "s.duckdb")
    trainer = RREDCoTGRPOTrainer(
        model, reward_funcs=[parity], args=args, train_dataset=data, processing_class=tokenizer,
        credit=credit, store=store, run_id="trl-test",
    )  # fmt: skip
    seen: dict = {}
    compute_loss = trainer._compute_loss

    def capture(model, inputs):
        seen.update(inputs)
        return compute_loss(model, inputs)

    trainer._compute_loss = capture
    trainer.train()

    advantages = seen["advantages"]
    mask = seen["completion_mask"].bool()
    assert advantages.shape == seen["completion_ids"].shape  # per token, not per sequence
    assert (advantages[~mask] == 0).all() and advantages[mask].abs().sum() > 0

    # our own credit for the same group, under the weights the completions were sampled with
    policy = LanguageModel(start, tokenizer, name="start", fingerprint="start")
    rollouts = []
    for i in range(4):
        prompt = seen["prompt_ids"][i][seen["prompt_mask"][i].bool()].tolist()
        completion = seen["completion_ids"][i][mask[i]].tolist()
        text = policy.decode(completion)
        rollouts.append(TrainRollout(prompt, completion, text, parity([text])[0], 0))
    problem = Problem(PROMPT, "5", "2 + 3 = 5.\nThe answer is 5.")
    sigmas = group_sigmas(policy, credit, estimators.get("rredcot")(), rollouts[0].prompt_ids, rollouts, problem)
    couple_group(rollouts, sigmas, credit.coupling, credit.coupling_lambda, credit.gae_lambda)
    for i, rollout in enumerate(rollouts):
        expected = torch.as_tensor(rollout.token_advantages, dtype=advantages.dtype)
        assert torch.allclose(advantages[i, : len(expected)], expected, atol=1e-5), i

    runs = training_runs(store)
    assert runs["run_id"].tolist() == ["trl-test"] and runs["method"][0] == "rredcot-trl"
    records = store.train_rollouts("trl-test", 1)
    logged = {r["text"]: r["segment_advantages"] for r in records}  # TRL shuffles the batch after logging
    assert len(records) == 4 and set(logged) == {r.text for r in rollouts}
    for rollout in rollouts:
        assert logged[rollout.text] == pytest.approx(rollout.segment_advantages, abs=1e-5)
    assert store.train_metrics(["trl-test"])["reward_mean"].tolist() == [sum(r.reward for r in rollouts) / 4]


def test_multi_segment_completions_get_per_segment_advantages(tmp_path):
    model, tokenizer = tiny_model(0), tiny_tokenizer()
    data = datasets.Dataset.from_list([{"prompt": PROMPT, "answer": "5", "solution": "2 + 3 = 5."}])
    args = trl.GRPOConfig(
        output_dir=str(tmp_path / "out"), per_device_train_batch_size=2, num_generations=2, max_steps=1,
        use_cpu=True, report_to="none", save_strategy="no", disable_tqdm=True,
    )  # fmt: skip
    credit = RREDCoTGRPOConfig(segments=3)
    trainer = RREDCoTGRPOTrainer(
        model, reward_funcs=[parity], args=args, train_dataset=data, processing_class=tokenizer, credit=credit
    )
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
    advantages = trainer.rredcot_advantages([{"prompt": PROMPT, "answer": "5", "solution": "2 + 3 = 5."}] * 2, output)
    policy = LanguageModel(model, tokenizer, name="m", fingerprint="m")
    rollouts = [TrainRollout(prompt, c, policy.decode(c), r, 0) for c, r in zip(completions, [1.0, 0.0], strict=True)]
    problem = Problem(PROMPT, "5", "2 + 3 = 5.")
    sigmas = group_sigmas(policy, credit, estimators.get("rredcot")(), prompt, rollouts, problem)
    couple_group(rollouts, sigmas, credit.coupling, credit.coupling_lambda, credit.gae_lambda)
    assert [len(r.segments) for r in rollouts] == [3, 3]
    for i, rollout in enumerate(rollouts):
        assert len(set(rollout.segment_advantages)) == 3  # one advantage per segment, not one per sequence
        assert torch.allclose(advantages[i, : len(completions[i])], torch.tensor(rollout.token_advantages).float())
        assert (advantages[i, len(completions[i]) :] == 0).all()
