"""RREDCoT Explorer, the Streamlit face of ``rredcot_viz``: navigation and cached resources only.

Started by ``rredcot-viz app`` (this file) or ``streamlit run app.py`` in a checkout (a shim that calls ``main``).
"""

from __future__ import annotations

import streamlit as st

from rredcot_viz.app import SCREENS, screen_path
from rredcot_viz.errors import RredcotError
from rredcot_viz.ui import resources
from rredcot_viz.ui.jobs import jobs_panel


def main() -> None:
    """One run of the entry script: the store and samples first (a clear message if they fail), then the pages."""
    st.set_page_config(page_title="RREDCoT Explorer", layout="wide")
    try:
        resources.store()
        resources.samples()
    except RredcotError as error:
        st.error(str(error))
        st.stop()
    pages = [
        st.Page(screen_path(screen), title=title, icon=icon, default=index == 0)
        for index, (screen, (title, icon)) in enumerate(SCREENS.items())
    ]
    navigation = st.navigation(pages)
    jobs_panel()
    navigation.run()


if __name__ == "__main__":  # Streamlit runs its entry script as __main__ on every rerun
    main()
