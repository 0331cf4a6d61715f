"""The floor: a bare Streamlit page with one slider, a 20-row table and a plotly histogram of 45,000 values.

``bench/latency.py`` serves it beside the workbench and times it the same
way, so every latency is quoted as a ratio to what Streamlit itself costs
on this machine at this moment (issue 27).
"""

import numpy as np
import pandas as pd
import plotly.express as px
import streamlit as st

st.title("Floor")
k = st.slider("bins", 5, 200, 40)
values = np.random.default_rng(k).normal(size=45_000)
st.dataframe(pd.DataFrame({"i": np.arange(20), "value": values[:20]}))
st.plotly_chart(px.histogram(x=values, nbins=k))
