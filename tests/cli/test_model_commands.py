"""The model commands (cli/model_commands.py): ``info``, the catalogue, and a clear quantization error."""

from __future__ import annotations

import pytest

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


def test_quantization_on_cpu_is_a_clear_error(capsys):
    assert main(["info", "--quantization", "4bit"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: 4bit quantization needs bitsandbytes on a CUDA GPU") and "Traceback" not in err
