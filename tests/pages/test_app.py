"""The app shell: navigation, the model picker and a clear error for a model that is not there."""

from __future__ import annotations

import pytest
from conftest import run_page

from rredcot_viz.app import screen_path

pytestmark = pytest.mark.integration


def test_model_picker_lists_the_catalogue_with_reasons():
    app = run_page()
    picker = app.sidebar.selectbox(key="model")
    assert picker.options[:3] == [
        "SmolLM2-135M-Instruct (Q4_1, embedded default) · 98 MB",
        "Qwen2.5-Coder-0.5B-Instruct (Q4_K_M, optional) · 491 MB",
        "Qwen2.5-Coder-1.5B-Instruct (Q4_K_M, optional, strongest) · 1120 MB",
    ]
    captions = [c.value for c in app.sidebar.caption]  # the jobs panel's lines may come first
    assert any("does not order segments as Monte Carlo does" in c for c in captions)
    assert app.sidebar.selectbox(key="quantization").options == [  # the weights' estimated memory
        "full precision · ~538 MB",
        "8-bit · ~220 MB",
        "4-bit nf4 · ~168 MB",
        "4-bit fp4 · ~168 MB",
    ]


def test_unfetched_optional_model_says_how_to_fetch(tmp_path, monkeypatch):
    monkeypatch.setenv("RREDCOT_CACHE_DIR", str(tmp_path))  # nothing fetched here
    app = run_page()
    app.sidebar.selectbox(key="model").select("qwen2.5-coder-1.5b").run()
    assert not app.exception and not app.error  # the sample's recorded scores need no model
    app.radio(key="inspect_source").set_value("live").run()
    assert not app.exception
    assert "python -m rredcot_viz fetch-model qwen2.5-coder-1.5b" in app.error[0].value


def test_every_page_renders():
    for page in (
        screen_path("inspect"),
        screen_path("compare"),
        screen_path("dataset"),
        screen_path("diagnose"),
        screen_path("learn"),
    ):
        app = run_page(page)
        assert app.title[0].value in ("Inspect", "Compare", "Dataset", "Diagnose", "Learn: who deserves the credit?")


def test_the_sidebar_sends_rollouts_to_an_inference_server_checked_against_the_model(embedded_lm):
    from fake_openai import FakeOpenAIServer
    from tiny import tiny_lm

    with FakeOpenAIServer(embedded_lm) as same, FakeOpenAIServer(tiny_lm(0)) as other:
        app = run_page()
        app.sidebar.selectbox(key="sampler").select("openai").run()
        app.sidebar.text_input(key="sampler_openai_url").set_value(same.url).run()
        assert not app.exception and not app.sidebar.error
        assert any("Rollouts from openai: tiny: mean |Δ log-prob| 0 nats" in c.value for c in app.sidebar.caption)
        app.sidebar.text_input(key="sampler_openai_url").set_value(other.url).run()
        assert not app.exception
        error = app.sidebar.error[0].value  # the tiny model's vocabulary lacks SmolLM2's token ids
        assert "refused the probe's token ids" in error and "another tokenizer" in error and "fingerprint" in error
