"""One Streamlit page per file, run by ``rredcot_viz/app/main.py``'s navigation (never imported)."""
