"""The app's Streamlit configuration: settings the app's speed depends on."""

from __future__ import annotations

import tomllib

from rredcot_viz.app import MAIN_SCRIPT, SCREENS, SCREENS_DIR, STREAMLIT_CONFIG
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


def test_no_pages_folder_sits_beside_an_entry_script():
    """Streamlit lists a ``pages/`` folder beside the entry script on its own, by file name in lower case, and
    showed that list for a moment before the app's navigation replaced it (issue 40): the pages are ``screens/``."""
    for entry in (PROJECT_ROOT / "app.py", MAIN_SCRIPT):
        assert entry.is_file() and not (entry.parent / "pages").exists(), entry
    assert sorted(path.stem for path in SCREENS_DIR.glob("[!_]*.py")) == sorted(SCREENS)
