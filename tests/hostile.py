"""A trace whose text tries to inject markup: it must render as text everywhere."""

from rredcot_viz.traces.trace import Trace

HOSTILE = Trace(
    question="What does <b>this</b> do?",
    cot=(
        'First <script>alert("x")</script> step.\nThen <img src=x onerror=alert(1)> and '
        '<a href="javascript:alert(2)">link</a>.\nThe answer is \\boxed{3}.'
    ),
    reference_answer="3",
    reference_solution="It is \\boxed{3}.",
    trace_id="hostile",
    metadata={"title": "Hostile markup"},
)
