"""The app's Streamlit configuration: settings the app's speed depends on."""

from __future__ import annotations

import tomllib

from rredcot_viz.app import STREAMLIT_CONFIG
from rredcot_viz.paths import PROJECT_ROOT


def test_streamlit_does_not_collect_garbage_after_every_rerun():
    """Streamlit's default runs gc.collect() after each script run, the page's one-second progress reruns included,
    holding the GIL the analysis job in the same process needs (measured: the job at half speed)."""
    config = tomllib.loads((PROJECT_ROOT / ".streamlit" / "config.toml").read_text(encoding="utf-8"))
    assert config["runner"]["postScriptGC"] is False


def test_the_checkout_and_the_installed_app_read_one_settings_file():
    """``streamlit run app.py`` reads .streamlit/config.toml; ``rredcot-viz app`` passes the packaged file's
    settings as options (an installed package has no .streamlit folder): one file, so they cannot drift."""
    assert (PROJECT_ROOT / ".streamlit" / "config.toml").resolve() == STREAMLIT_CONFIG
