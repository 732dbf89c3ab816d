"""The one scoring plan (docs/method.md §2-§4): what is scored after which prefix of a response, scored in one
packed model call, and cached by content so nothing is ever scored twice (``engine`` and ``training`` both
run on it)."""

from rredcot_viz.scoring.cache import BoundaryCache
from rredcot_viz.scoring.context import PromptConfig, TraceContext
from rredcot_viz.scoring.plan import ResponseTokens, ScoringSubject, plan_items

__all__ = ["BoundaryCache", "PromptConfig", "ResponseTokens", "ScoringSubject", "TraceContext", "plan_items"]
