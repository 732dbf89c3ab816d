"""Learn: delayed reward, return decomposition and RREDCoT on a tiny reasoning MDP you control."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from rredcot_viz.figures import credit_bars, value_curves
from rredcot_viz.workflows.learn import RREDCOT_LONG_CONTEXT, SRPO_MAIN, lesson

st.title("Learn: who deserves the credit?")
st.markdown(
    """
A reasoning chain earns its reward only at the end: right answer, reward 1; wrong, reward 0. **Delayed reward**
makes learning slow, because every step of a long chain gets the same signal (that is what GRPO does).
**Return decomposition** (RUDDER) moves the reward back to the steps that caused it: if we knew the value
V(s) of every partial chain, giving step t the reward σₜ = V(sₜ₊₁) − V(sₜ) leaves the total return unchanged
(*return-equivalent*) and makes the expected future reward after every step zero, the optimal redistribution.
Monte Carlo estimates V by sampling continuations (unbiased, expensive, noisy); **RREDCoT** estimates it
without sampling from the policy's own probabilities: R̂ (answer now) plus v̂ (the likelihood of the reference
path from here). v̂ alone ignores other routes to the answer and so never overestimates V; the sum Q̂ can, since
R̂ and v̂ count overlapping chances. The notes under the table say what the settings you chose show.

The toy below is a chain of steps: each is sound with the probability you set, a flawed chain can still
recover, and you choose where (if anywhere) this trajectory went wrong.
"""
)
k = st.slider("Steps", 2, 8, 4, key="learn_k")
cols = st.columns(k)
p = tuple(cols[t].slider(f"p(step {t + 1} sound)", 0.05, 1.0, 0.8, 0.05, key=f"learn_p{t}") for t in range(k))
col_r, col_err, col_n, col_a = st.columns(4)
recover = col_r.slider("Recovery after a flaw", 0.0, 0.5, 0.05, 0.05, key="learn_recover")
error = col_err.selectbox("First flawed step", ["none", *range(1, k + 1)], key="learn_error")
n = col_n.select_slider("MC rollouts per state", [1, 2, 4, 8, 16, 32, 64, 128], 8, key="learn_n")
skill = col_a.slider("R̂ answer-now skill", 0.0, 1.0, 0.1, 0.05, key="learn_skill")

first_error = None if error == "none" else int(error) - 1
outcome = 1.0 if first_error is None else float(st.toggle("…and it recovered anyway", key="learn_recovered"))
shown = lesson(p, recover, first_error, outcome, n, skill)

left, right = st.columns(2)
left.plotly_chart(value_curves(shown.values, title="Values of the partial chains"), key="learn_values")
right.plotly_chart(credit_bars(shown.credits, title="Credit per step"), key="learn_credit")
st.dataframe(pd.DataFrame(shown.errors), hide_index=True, key="learn_errors")
for note in shown.notes:
    st.caption(note)
st.caption(
    "GRPO's credit is unbiased only for the total; MC is unbiased per step but noisy (shrinking as 1/√n) "
    "and costs n·K samples; the RREDCoT-style estimate costs no sampling and is biased low where recovery "
    "paths matter (v̂ counts only the reference path)."
)

st.subheader("What the papers report")
st.markdown("**RREDCoT (arXiv 2606.06475), long-context training**")
st.dataframe(
    pd.DataFrame(RREDCOT_LONG_CONTEXT["rows"], columns=RREDCOT_LONG_CONTEXT["columns"]),
    hide_index=True,
    key="learn_rredcot_table",
)
st.caption(RREDCOT_LONG_CONTEXT["caveat"])
st.markdown("**Credit assignment with resets: RRPO and SRPO (arXiv 2605.25507)**")
st.dataframe(
    pd.DataFrame(SRPO_MAIN["rows"], columns=SRPO_MAIN["columns"]).fillna("not available"),
    hide_index=True,
    key="learn_srpo_table",
)
st.caption(SRPO_MAIN["caveat"])
