"""The model commands (cli/model_commands.py): ``info``, the catalogue, and a clear quantization error."""

from __future__ import annotations

import pytest
from tiny import tiny_model, tiny_tokenizer

from rredcot_viz.cli import main


@pytest.mark.integration
def test_info_prints_the_embedded_model(capsys):
    assert main(["info"]) == 0
    out = capsys.readouterr().out
    assert "SmolLM2-135M-Instruct" in out
    assert "device          cpu" in out and "context length  8192 tokens" in out
    assert "quantization    none" in out


def test_info_list_shows_the_catalogue(capsys):
    assert main(["info", "--list"]) == 0
    out = capsys.readouterr().out
    assert "smollm2-135m" in out and "[embedded]" in out and "qwen2.5-coder-1.5b" in out


def test_analyze_in_4bit_on_the_cpu_says_what_it_loaded(tmp_path, capsys):
    folder = tmp_path / "tiny-64"
    tiny_model(0, hidden=64).save_pretrained(folder)  # bitsandbytes' 4-bit CPU kernel wants 64-weight blocks
    tiny_tokenizer().save_pretrained(folder)
    argv = ["analyze", "rredcot_viz/sample_traces/arithmetic.jsonl", "--trace", "sample-bakery-failed", "--k", "3"]
    assert main([*argv, "--model", str(folder), "--quantization", "4bit", "--quant-type", "fp4"]) == 0
    out = capsys.readouterr().out
    assert "note: loaded tiny-64 in 4bit-fp4 with bitsandbytes 0.50.2 on cpu: 0.2 MB of weights" in out
    assert main(["info", "--model", str(folder), "--quantization", "8bit"]) == 0
    out = capsys.readouterr().out
    assert "quantization    8bit\n" in out and "weights         0.3 MB in memory (measured)" in out


def test_quantization_bitsandbytes_cannot_run_is_a_clear_error(capsys):
    assert main(["info", "--quantization", "4bit", "--device", "meta"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: bitsandbytes 0.50.2 has no backend for the meta device; load in full precision")
    assert "Traceback" not in err


def test_sampler_options_name_the_backend_and_its_settings():
    from rredcot_viz.cli import build_parser
    from rredcot_viz.cli.model_commands import model_config_from_args
    from rredcot_viz.model.backends import SamplerSpec
    from rredcot_viz.model.backends.openai import OpenAIConfig

    parse = build_parser().parse_args
    args = parse(
        ["resample", "t.jsonl", "--sampler", "openai", "--sampler-url", "http://h:1", "--sampler-concurrency", "4"]
    )
    assert model_config_from_args(args).sampler == SamplerSpec("openai", OpenAIConfig(url="http://h:1", concurrency=4))
    assert model_config_from_args(parse(["analyze", "t.jsonl"])).sampler == SamplerSpec()
    assert model_config_from_args(parse(["info"])).sampler == SamplerSpec()  # commands that do not sample


def test_a_server_setting_for_the_local_sampler_is_a_clear_error(capsys):
    assert main(["resample", "t.jsonl", "--sampler-url", "http://h:1"]) == 2
    err = capsys.readouterr().err
    assert "--sampler-url is not a setting of sampler 'local'" in err and "Traceback" not in err


def test_training_has_no_sampler_option(capsys):
    with pytest.raises(SystemExit):
        main(["train", "--sampler", "openai"])
    assert "unrecognized arguments: --sampler" in capsys.readouterr().err
