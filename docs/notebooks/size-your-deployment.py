# ---
# jupyter:
#   jupytext:
#     formats: py:percent
#     text_representation:
#       extension: .py
#       format_name: percent
#   kernelspec:
#     display_name: Python 3
#     language: python
#     name: python3
# ---

# %% [markdown]
# # Sizing notebook: the engine in Python
#
# This notebook sizes one replica of a model on one kind of node with the serving engine that
# computes every other page of this site (`snippets.engine`): the same layouts, memory per GPU and
# decode ceiling, not a second derivation. It is executed at every build, so the outputs below
# always match the data. [Download the notebook](size-your-deployment.py) (a jupytext percent
# script: open it in Jupyter with jupytext), change the choices in the next cell, and run it yourself
# after `pip install -e '.[docs]'` in a clone of the site (the engine and its data loader, with
# jupytext and the Jupyter kernel the build executes it in).
#
# The choices are ids from the data tables: models from `data/models.yaml`, precisions from
# `data/precisions.yaml`, nodes (which name their accelerator) from `data/interconnects.yaml`,
# layout policies from `data/policies.yaml` (try `NODE = "hgx-a100-8"` or `POLICY = "fewest-gpus"`).
# The scenario (context length, sequences at once, memory budget) is the site's reference scenario
# in `data/scenarios.yaml`.

# %%
from IPython.display import Markdown

from snippets.data import load
from snippets.engine.serving import at_rate, predict
from snippets.pages import units
from snippets.pages.interconnect import cost_figure
from snippets.pages.scenario import reference
from snippets.render import fmt

cat = load()
r = reference(cat)

MODEL = "llama-3.1-405b"
PRECISION = "fp8"
NODE = r.node.id
POLICY = r.scenario.layout_policy

d = r.deployment(MODEL, PRECISION, node=NODE, layout_policy=POLICY)
st = d.setting
e = fmt.escape_markdown
Markdown(f"Sizing **{e(st.model.name)}** in **{e(st.precision.name)}** on **{e(st.chip.name)}** ({e(st.node.name)}), "
         f"for the scenario *{e(st.scenario.name)}*.")

# %% [markdown]
# ## Weights and the layout
#
# The parameter count comes from the architecture in `config.json`; the weights keep the tensors the
# checkpoint keeps unquantized (embeddings, LM head). The layout policy picks, among the layouts the engines accept, the one to
# rent; the sentence says which policy chose it and how.

# %%
Markdown(fmt.table("notebook-sizing", ["Quantity", "Value"], [
    ["Parameters (from the architecture)", fmt.params(d.params, 1)],
    ["Weight memory, one copy", fmt.nbytes(d.weight_bytes, "GB", 1)],
    ["Layout", d.layout.label],
    ["Chosen by", d.why],
    ["GPUs", fmt.count(d.gpus)],
    ["Nodes", fmt.count(d.nodes, "nodes")],
    ["GPUs rented", fmt.count(d.gpus_rented)],
]))

# %% [markdown]
# ## Memory of the busiest GPU
#
# The engine budgets from the memory the device reports to a program (CUDA's total, or the vendor's
# label where no source publishes that total: `data/accelerators.yaml`); its pool (a share of that)
# holds the weights, the activation peak, memory outside PyTorch and the KV cache of the scenario's
# sequences.

# %%
m = d.memory
Markdown(fmt.table("notebook-memory", ["Quantity", "Value"], [
    ["Memory the GPU reports", fmt.nbytes(m.capacity, "GiB", 1)],
    ["The engine's pool", fmt.nbytes(m.pool, "GiB", 1)],
    ["Weights", fmt.nbytes(m.weights, "GiB", 1)],
    ["Activations and runtime", fmt.nbytes(m.activations + m.non_torch, "GiB", 1)],
    ["KV cache of the scenario", fmt.nbytes(m.kv_cache, "GiB", 2)],
    ["Free in the pool", fmt.nbytes(m.free, "GiB", 1)],
    ["Sequences the KV cache can hold", fmt.count(d.max_concurrency, "sequences")],
]))

# %% [markdown]
# ## The bandwidth ceiling and the cost
#
# Generating one token reads, on each pipeline stage in turn, the busiest GPU's weights (of a mixture of
# experts, those outside the experts and the experts one token's routing reaches) and the sequence's KV
# cache. HBM bandwidth over those bytes is an upper bound on tokens per second for one sequence:
# compute, communication and latency are left out.

# %%
Markdown(fmt.table("notebook-ceiling", ["Quantity", "Value"], [
    ["Bytes read per token", fmt.nbytes(d.decode_step_bytes(1), "GB", 1)],
    ["Tokens per second, ceiling", fmt.quantity(d.decode_ceiling, "tokens/s", 1)],
    ["Matrix units compute in", d.compute_format.upper()],
    ["Weights converted to compute (weight-only)", ("no", "yes")[d.weight_only]],
    ["Cost per hour", cost_figure(d)],
]))

# %% [markdown]
# ## Serving it: the times at a load
#
# The ceiling above leaves out compute, communication and the engine's own time. The serving engine
# (`snippets.engine.serving.predict`) prices each step op by op and serves the scenario's requests as
# the engine schedules them: admission up to what the KV cache and the sequence limit hold, prompts
# beside the decoding requests, and a queue for the rest, whose wait is in the time to first token.
# Each prediction comes with the band in which most published measurements of its regime fell
# against the model (`units.banded`; the predictions page lists the bands). Change the loads in the next
# cell, or loop over models and nodes.

# %%
n_in, n_out = st.scenario.input_tokens, st.scenario.output_tokens
loads = sorted({1, 8, d.max_concurrency, 2 * d.max_concurrency})
rows = []
for c in loads:
    p = predict(d, c, n_in, n_out)
    rows.append([fmt.count(c), fmt.count(p.in_flight), units.ttft_banded(p), units.tpot_banded(p, 2),
                 units.tps_banded(p)])
Markdown(f"{fmt.number(n_in)} tokens in and {fmt.number(n_out)} out, on {d.layout.label}:\n"
         + fmt.table("notebook-times", ["Requests kept in flight", "Running", "TTFT", "TPOT", "Output"], rows))

# %% [markdown]
# ## Requests sent at a rate
#
# A client that sends requests at a rate, rather than keeping a number in flight, finds the replica
# holding the rate times a request's life (Little's law: `snippets.engine.serving.at_rate`). Up to
# what the replica finishes with every slot full, the requests held and their times grow with the
# rate; beyond it, the queue grows for as long as requests keep coming, and more replicas are needed.

# %%
full = predict(d, 10**9, n_in, n_out)
capacity = full.requests_per_s  # requests a second with every slot it admits full
rows = []
for share in (0.25, 0.5, 0.9):
    x = at_rate(d, share * capacity, n_in, n_out)
    rows.append([fmt.percent(share), fmt.quantity(share * capacity, "requests/s", 3),
                 fmt.quantity(x.mean_in_flight, "requests", 1), units.ttft_banded(x), units.tpot_banded(x, 2)])
Markdown(f"With all {fmt.number(full.in_flight)} requests it admits in flight, the replica finishes "
         f"{fmt.number(capacity, 3)} a second:\n"
         + fmt.table("notebook-rate", ["Share of that", "Requests a second", "Requests held", "TTFT", "TPOT"], rows))
