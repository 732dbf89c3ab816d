"""The Streamlit app, shipped inside the package so an installed wheel starts it (``rredcot-viz app``).

``main.py`` is the entry script (navigation and cached resources); each file in ``screens/`` is one page. The
folder is not called ``pages/``: Streamlit would list a ``pages/`` folder beside the entry script on its own,
in lower case, before the navigation renders. Nothing here imports Streamlit, so the CLI and ``ui`` can ask for
the paths without loading it.
"""

from __future__ import annotations

from pathlib import Path

APP_DIR = Path(__file__).resolve().parent
MAIN_SCRIPT = APP_DIR / "main.py"
SCREENS_DIR = APP_DIR / "screens"
STREAMLIT_CONFIG = APP_DIR / "streamlit.toml"  # the app's Streamlit settings; .streamlit/config.toml links here
SCREENS = {  # screen -> (title, icon), in navigation order; the first is the default page
    "inspect": ("Inspect", "🔎"),
    "compare": ("Compare", "⚖️"),
    "dataset": ("Dataset", "🗂️"),
    "diagnose": ("Diagnose", "🩺"),
    "train": ("Train", "🏋️"),
    "learn": ("Learn", "🎓"),
}


def screen_path(name: str) -> str:
    """The absolute path of screen ``name``: what ``st.Page``, ``st.switch_page`` and ``st.page_link`` take, the
    same whichever entry script (the repository's ``app.py`` or the package's ``main.py``) started the app."""
    if name not in SCREENS:
        raise ValueError(f"no screen {name!r}; the app has {', '.join(SCREENS)}")
    return str(SCREENS_DIR / f"{name}.py")
