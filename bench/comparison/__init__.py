"""The compare bench's parts; ``bench/compare.py`` is its entry point (its docstring gives the protocol).

``rows`` (what is scored), ``problems`` (drawing traces), ``scoring`` (one trace, every row), ``saved`` (the
per-trace file and the protocol), ``report`` and ``lean`` (the full and issue 42's reports), ``stats`` (the
pooled-ratio bootstrap and the held-out split, which only this bench uses).
"""
