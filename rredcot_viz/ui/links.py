"""Links: a page's view of a trace (source, trace, model, segmenter, K, estimator, shading) lives in the URL's
query parameters, so a copied URL reopens the same view on the same store.

    sync_view("inspect")   # the first line of the page, before its pickers

A URL that differs from the one this session last wrote (a link just opened) sets the page's widgets, once;
otherwise the widgets' state (which Streamlit updates before each rerun) is written into the URL, so it is
current even when the page stops early (while an analysis runs). A parameter that names nothing this app or
store has (a trace not in this store, an unknown model, K out of range) is left out with a message that says
so, and the page opens on its defaults for it. A link is anyone's text: the message shows its values verbatim
(``as_text``), never as Markdown, and names no server path.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import streamlit as st

from rredcot_viz.attribution import attributions
from rredcot_viz.estimators import estimators, live_estimators
from rredcot_viz.model.catalogue import CATALOGUE
from rredcot_viz.segmenters import segmenters
from rredcot_viz.traces.trace import Trace
from rredcot_viz.ui import resources

SOURCES = {"samples": "Samples", "stored": "Stored", "paste": "Paste", "upload": "Upload"}
SHADES = ("sigma", "Q_hat", "R_hat", "v_hat")
SCORES = ("recorded", "live")
K_RANGE = (2, 64)
HASH_CHARS = 16  # of a trace's content hash in a link: unique in any store of a realistic size
SHOWN_CHARS = 80  # of a link's value in a message
APPLIED = "links_applied"  # the query string last applied in this session


@dataclass(frozen=True)
class Param:
    name: str  # in the URL
    key: str  # the session-state key of the widget it sets ({prefix} is the page's)


PARAMS = {
    "model": Param("model", "model"),
    "source": Param("source", "trace_source"),
    "collection": Param("collection", "collection"),
    "trace": Param("trace", "trace_hash"),
    "scores": Param("scores", "{prefix}_source"),
    "segmenter": Param("segmenter", "{prefix}_segmenter"),
    "k": Param("k", "{prefix}_k"),
    "estimator": Param("estimator", "{prefix}_estimator"),
    "shade": Param("shade", "{prefix}_shade"),
    "methods": Param("methods", "{prefix}_methods"),  # a comma list (Compare's chosen methods)
}
PAGE_PARAMS = {
    "inspect": ("model", "source", "collection", "trace", "scores", "segmenter", "k", "estimator", "shade"),
    "compare": ("model", "source", "collection", "trace", "segmenter", "k", "methods"),
    "diagnose": ("model", "source", "collection", "trace", "segmenter", "k"),
}


def _key(prefix: str, name: str) -> str:
    return PARAMS[name].key.format(prefix=prefix)


def sync_view(prefix: str) -> None:
    """Restore the view from a newly opened link, else write the current view into the URL."""
    given = {name: st.query_params.get(name) for name in PAGE_PARAMS[prefix] if st.query_params.get(name)}
    if given and st.session_state.get(APPLIED) != _signature(prefix, given):
        restore_view(prefix, given)
    else:
        publish_view(prefix)


def _signature(prefix: str, values: dict[str, str]) -> str:
    return f"{prefix}?{sorted(values.items())}"


def restore_view(prefix: str, given: dict[str, str]) -> None:
    """Apply a link's state to this page's widgets (a later widget change is the user's and stays); a
    parameter that names nothing known is reported and skipped."""
    st.session_state[APPLIED] = _signature(prefix, given)
    problems = [problem for name, value in given.items() if (problem := _apply(prefix, name, value, given))]
    if problems:
        st.warning("This link's view could not be restored in full: " + "; ".join(problems) + ".", icon="🔗")


def _apply(prefix: str, name: str, value: str, given: dict[str, str]) -> str | None:
    """Set one parameter's widget; the reason it cannot be set, or None."""
    key = _key(prefix, name)
    if name == "model":
        if value not in CATALOGUE:
            return f"model {as_text(value)} is not in the catalogue ({', '.join(CATALOGUE)}); using the sidebar's model"
    elif name == "source":
        if value not in SOURCES:
            return f"trace source {as_text(value)} is not one of {', '.join(SOURCES)}"
        value = SOURCES[value]
    elif name == "collection":
        if value not in resources.store().collections():
            return f"collection {as_text(value)} is not in this store"
    elif name == "trace":
        trace, problem = _find_trace(value, given)
        if trace is None:
            return problem
        value = trace.content_hash  # the trace picker starts on it (a link opens a new session)
    elif name == "scores" and value not in SCORES:
        return f"scores {as_text(value)} is not one of {', '.join(SCORES)}"
    elif name == "segmenter" and value not in segmenters.names():
        return f"segmenter {as_text(value)} is not one of {', '.join(segmenters.names())}"
    elif name == "estimator" and value not in live_estimators():
        return f"estimator {as_text(value)} is not one of {', '.join(live_estimators())}"
    elif name == "shade" and value not in SHADES:
        return f"shading {as_text(value)} is not one of {', '.join(SHADES)}"
    elif name == "methods":
        known = [*estimators.names(), *attributions.names()]
        chosen = [m for m in value.split(",") if m]
        unknown = [m for m in chosen if m not in known]
        if unknown:
            return f"method {as_text(','.join(unknown))} is not one of {', '.join(known)}"
        st.session_state[key] = chosen
        return None
    elif name == "k":
        if not (value.isascii() and value.isdigit()) or not K_RANGE[0] <= int(value) <= K_RANGE[1]:
            return f"K {as_text(value)} is not a whole number from {K_RANGE[0]} to {K_RANGE[1]}"
        st.session_state[key] = int(value)
        return None
    st.session_state[key] = value
    return None


def _find_trace(value: str, given: dict[str, str]) -> tuple[Trace | None, str]:
    """The trace a link names (a prefix of its content hash) among the samples or the store's traces."""
    value = value.lower()
    source = given.get("source", "samples")
    if source == "samples":
        pool = resources.samples()
    else:
        store = resources.store()
        pool = store.traces(given.get("collection")) if source == "stored" else store.traces("user")
        pool = pool + (store.traces("upload") if source != "stored" else [])
    matches = {t.content_hash: t for t in pool if t.content_hash.startswith(value)}
    if len(value) < 6 or len(matches) != 1:
        where = "the samples" if source == "samples" else "this store"
        found = "matches several traces" if len(matches) > 1 else "is not"
        return None, f"trace {as_text(value[:HASH_CHARS])} {found} in {where}; showing the first trace instead"
    return next(iter(matches.values())), ""


def as_text(value: str) -> str:
    """A link's value as Markdown that shows it verbatim: a code span (its fence longer than any run of backticks
    in it), in which no bold, link or remote image is rendered; long values are cut."""
    value = " ".join(value[:SHOWN_CHARS].split()) + ("..." if len(value) > SHOWN_CHARS else "")
    fence = "`" * (max((len(run) for run in re.findall("`+", value)), default=0) + 1)
    return f"{fence} {value} {fence}"


def publish_view(prefix: str) -> None:
    """Write this page's widget state into the URL (only what is set, so the link stays short)."""
    state = st.session_state

    def shown(key: str) -> object:  # a sidebar widget not drawn yet in this run shows what it kept
        return state[key] if key in state else state.get(f"kept_{key}")

    values: dict[str, str] = {}
    source = shown("trace_source") or "Samples"
    for name in PAGE_PARAMS[prefix]:
        value = shown(_key(prefix, name))
        if name == "trace":
            value = state.get(f"trace_{source}") or value
            value = value[:HASH_CHARS] if isinstance(value, str) else None
        elif name == "source" and value is not None:
            value = str(value).lower()
        elif name == "model" and value not in CATALOGUE:
            value = None  # a custom model path stays out of links: a URL never names a file to load
        elif name == "collection" and source != "Stored":
            value = None
        elif name == "methods" and isinstance(value, list):
            value = ",".join(value)
        if value is not None and value != "":
            values[name] = str(value)
    current = {name: st.query_params.get(name) for name in PAGE_PARAMS[prefix] if name in st.query_params}
    if current != values:  # this page's parameters only: another's (a run view's ?run=) stay as they are
        for name in set(current) - set(values):
            del st.query_params[name]
        st.query_params.update(values)
    state[APPLIED] = _signature(prefix, values)  # the URL now says what is shown
