"""``app`` (cli/app_commands.py): the command line it runs, a clear message without Streamlit, and a real server
that answers on the port it was given with the store it was given."""

from __future__ import annotations

import importlib.util
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request

import pytest

from rredcot_viz.app import MAIN_SCRIPT
from rredcot_viz.cli import build_parser, main
from rredcot_viz.cli.app_commands import streamlit_command


def parsed(argv: list[str]):
    return build_parser("app").parse_args(argv)


def options(command: list[str]) -> dict[str, str]:
    """The ``--name value`` pairs after ``streamlit run SCRIPT``."""
    return dict(zip(command[5::2], command[6::2], strict=True))


def test_the_command_runs_the_packaged_entry_script_headless_on_the_port_given():
    command = streamlit_command(parsed(["app", "--port", "9123", "--", "--server.maxUploadSize", "50"]))
    assert command[:5] == [sys.executable, "-m", "streamlit", "run", str(MAIN_SCRIPT)]
    assert MAIN_SCRIPT.is_file() and MAIN_SCRIPT.parent.name == "app"
    chosen = options(command)
    assert (chosen["--server.port"], chosen["--server.headless"], chosen["--browser.gatherUsageStats"]) == (
        "9123",
        "true",
        "false",
    )
    assert chosen["--runner.postScriptGC"] == "false"  # the packaged settings travel as options
    assert command[-2:] == ["--server.maxUploadSize", "50"]  # given after `--`: last, so they win
    assert options(streamlit_command(parsed(["app", "--browser"])))["--server.headless"] == "false"


def test_without_streamlit_it_says_which_extra_to_install(monkeypatch, capsys):
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "streamlit" else real(name, *a))
    assert main(["app"]) == 2
    err = capsys.readouterr().err
    assert "pip install 'rredcot-viz[app]'" in err and "Traceback" not in err


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@pytest.mark.integration
def test_it_serves_the_app_on_the_store_it_was_given(tmp_path):
    port, store = free_port(), tmp_path / "mine.duckdb"
    argv = [sys.executable, "-m", "rredcot_viz", "--store", str(store), "app", "--port", str(port)]
    server = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, start_new_session=True)
    try:
        health, deadline = "", time.monotonic() + 120
        while time.monotonic() < deadline and health != "ok":
            time.sleep(0.5)
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/_stcore/health", timeout=2) as reply:
                    health = reply.read().decode()
            except OSError:
                assert server.poll() is None, server.stdout.read() if server.stdout else ""
        assert health == "ok"
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/", timeout=10) as reply:
            assert "<title>Streamlit</title>" in reply.read().decode()
    finally:
        os.killpg(server.pid, signal.SIGTERM)
        out, _ = server.communicate(timeout=30)
    assert f"starting the app on http://localhost:{port} with the store {store}" in out
