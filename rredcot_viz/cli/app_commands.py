"""``app``: start the Streamlit app from the installed package (the same app ``scripts/dev app`` starts)."""

from __future__ import annotations

import argparse
import importlib.util
import os
import sys
import tomllib
from typing import NoReturn

from rredcot_viz.app import MAIN_SCRIPT, STREAMLIT_CONFIG
from rredcot_viz.cli.command import Command, commands
from rredcot_viz.errors import ConfigError

DEFAULT_PORT = 8501


def _configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--port", type=int, default=DEFAULT_PORT, help=f"port to serve on (default {DEFAULT_PORT})")
    parser.add_argument("--address", default=None, help="address to bind (default: Streamlit's, all interfaces)")
    parser.add_argument("--browser", action="store_true", help="open a browser tab (default: headless)")
    parser.add_argument(
        "streamlit_args", nargs=argparse.REMAINDER, help="after `--`: more `streamlit run` options, passed as given"
    )


def config_options() -> dict[str, str]:
    """The app's Streamlit settings as ``--section.name`` options: Streamlit reads ``.streamlit/config.toml`` only
    from the working folder, so outside a checkout the packaged copy is passed on the command line."""
    settings = tomllib.loads(STREAMLIT_CONFIG.read_text(encoding="utf-8"))
    return {
        f"--{section}.{name}": str(value).lower() if isinstance(value, bool) else str(value)
        for section, values in settings.items()
        for name, value in values.items()
    }


def streamlit_command(args: argparse.Namespace) -> list[str]:
    """The ``streamlit run`` command line for the package's entry script (what ``app`` executes)."""
    options = {**config_options(), "--server.port": str(args.port)}
    options["--server.headless"] = "false" if args.browser else "true"
    if args.address:
        options["--server.address"] = args.address
    extra = [word for word in args.streamlit_args if word != "--"]
    command = [sys.executable, "-m", "streamlit", "run", str(MAIN_SCRIPT)]
    return command + [word for pair in options.items() for word in pair] + extra


def _run(args: argparse.Namespace) -> NoReturn:
    if importlib.util.find_spec("streamlit") is None or importlib.util.find_spec("plotly") is None:
        raise ConfigError(
            "the app needs Streamlit and Plotly, which this environment lacks; install the app extra "
            "(pip install 'rredcot-viz[app]') or use the library and CLI without it"
        )
    command = streamlit_command(args)
    store = os.environ.get("RREDCOT_STORE")
    print(f"starting the app on http://localhost:{args.port}" + (f" with the store {store}" if store else ""))
    sys.stdout.flush()
    os.execv(command[0], command)  # the app replaces this process: Ctrl-C and SIGTERM reach Streamlit directly


commands.register("app")(
    Command("start the web app (Streamlit) from the installed package, on the store given by --store", _configure, _run)
)
