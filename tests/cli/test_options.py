"""Options generated from the configs (cli/options.py): they reach only the chosen method, and the help names
each method's default."""

from __future__ import annotations

import json

import pytest

from rredcot_viz.cli import main
from rredcot_viz.paths import SAMPLE_TRACES_DIR


def test_generated_options_reach_only_the_chosen_method(tmp_path, capsys):
    """Segmenter, estimator, attribution and detector settings are generated options; one the chosen method does
    not have is a clear error before the model loads (the unknown model is never reached)."""
    sample = str(SAMPLE_TRACES_DIR / "arithmetic.jsonl")
    no_model = ["--limit", "1", "--model", "no-such-model"]
    assert main(["analyze", sample, "--segmenter", "line", "--k", "3", *no_model]) == 2
    assert "error: --seg-k is not a setting of segmenter 'line'; its settings: none" in capsys.readouterr().err
    assert main(["analyze", sample, "--estimator", "uniform", "--trigger", "x", *no_model]) == 2
    assert "--est-trigger is not a setting of estimator 'uniform'; its settings: none" in capsys.readouterr().err
    assert main(["analyze", sample, "--estimator", "mc", "--est-aggregation", "geo_mean", *no_model]) == 2
    err = capsys.readouterr().err
    assert "--est-aggregation is not a setting of estimator 'mc'; its settings: --est-rollouts," in err
    assert main(["analyze", sample, "--seg-k", "0", *no_model]) == 2
    assert "error: k must be in [1, 256], got 0" in capsys.readouterr().err
    assert main(["compare", sample, "--methods", "rredcot,loo", "--attr-permutations", "4", *no_model]) == 2
    assert "--attr-permutations is a setting of shapley, which is not being run" in capsys.readouterr().err
    assert main(["resample", sample, "--detector", "loo", "--det-variant", "l2", *no_model]) == 2
    err = capsys.readouterr().err
    assert "--det-variant is not a setting of detector 'loo'; its settings: --det-threshold, --det-trigger" in err
    with pytest.raises(SystemExit):  # argparse: not one of the choices, listing them
        main(["analyze", sample, "--est-aggregation", "median"])
    assert "invalid choice: 'median' (choose from 'mean_prob', 'seq_prob', 'geo_mean'" in capsys.readouterr().err
    data = tmp_path / "one.json"
    data.write_text(json.dumps([{"problem": "1+1?", "steps": ["So 2."], "final_answer_correct": True, "label": -1}]))
    argv = ["eval-diagnosis", "--data", str(data), "--detector", "min_sigma", "--loo-threshold", "0.2"]
    assert main([*argv, "--references", "none", "--model", "no-such-model"]) == 2
    assert "--loo-* options set detector 'loo', which is not evaluated" in capsys.readouterr().err


def test_generated_help_names_each_method_and_its_default(capsys):
    with pytest.raises(SystemExit):
        main(["analyze", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "--k INT, --seg-k INT target number of segments K (2-64 recommended, docs/method.md §2)" in text
    assert "--seg-k: former name, deprecated" in text
    assert "[hybrid, fixed_tokens, word_starts, adaptive_entropy] (default 12 for hybrid; none for fixed_tokens" in text
    assert "--est-beta FLOAT weight of v-hat (the reference path from here) in Q-hat" in text
    assert "(default 1.0 for rredcot, continue_only; 0.0 for answer_only, own_answer)" in text
    assert "--boundaries {all,segmenter,states}" in text and "(default segmenter)" in text
