"""RREDCoT Explorer, the Streamlit face of ``rredcot_viz``: navigation and cached resources only."""

from __future__ import annotations

import streamlit as st

from rredcot_viz.errors import RredcotError
from rredcot_viz.ui import resources
from rredcot_viz.ui.jobs import jobs_panel

st.set_page_config(page_title="RREDCoT Explorer", layout="wide")

try:
    resources.store()
    resources.samples()
except RredcotError as error:
    st.error(str(error))
    st.stop()

pages = [
    st.Page("pages/inspect.py", title="Inspect", icon="🔎", default=True),
    st.Page("pages/compare.py", title="Compare", icon="⚖️"),
    st.Page("pages/dataset.py", title="Dataset", icon="🗂️"),
    st.Page("pages/diagnose.py", title="Diagnose", icon="🩺"),
    st.Page("pages/train.py", title="Train", icon="🏋️"),
    st.Page("pages/learn.py", title="Learn", icon="🎓"),
]
navigation = st.navigation(pages)
jobs_panel()
navigation.run()
