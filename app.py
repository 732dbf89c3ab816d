"""RREDCoT Explorer in a checkout: ``streamlit run app.py`` (what ``scripts/dev app`` does).

A thin shim: the app lives in the package (``rredcot_viz/app``), so an installed wheel starts the same app with
``rredcot-viz app``.
"""

from rredcot_viz.app.main import main

main()
