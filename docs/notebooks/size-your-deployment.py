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
# # Size your own deployment
#
# This notebook sizes one replica of a model on one kind of accelerator with the same functions
# that compute every other page of this site. It is executed at every build, so the outputs below
# always match the data. [Download the notebook](size-your-deployment.py) (a jupytext percent
# script: open it in Jupyter with jupytext, or run it as plain Python), change the three choices
# in the next cell, and run it yourself after `pip install -e .` in a clone of the site.
#
# The choices are ids from the data tables: models from `data/models.yaml`, precisions from
# `data/precisions.yaml`, nodes (which name their accelerator) from `data/interconnects.yaml`.

# %%
from IPython.display import Markdown

from snippets import fmt
from snippets.capacity import nodes_needed
from snippets.data import Node, load
from snippets.decode import aggregate, tokens_per_s_ceiling
from snippets.layout import deployable_layout
from snippets.sizing import size

cat = load()

MODEL = "llama-3.1-405b"
PRECISION = "int8"
NODE = "hgx-h100-8"

model = cat.models[MODEL]
precision = cat.precisions[PRECISION]
node = cat.interconnect(NODE, Node)
gpu = cat.accelerators[node.accelerator]
reserve = cat.assumptions["runtime-reserve"].value.fraction
e = fmt.escape_markdown
Markdown(f"Sizing **{e(model.name)}** in **{e(precision.name)}** on **{e(gpu.name)}** ({e(node.name)}).")

# %% [markdown]
# ## Weight memory and GPU count
#
# Weights take parameters times bytes per parameter. Each card keeps the runtime reserve of
# `data/assumptions.yaml` free for the KV cache, activations and the runtime; the rest holds weights.

# %%
s = size(model, precision, gpu, reserve, node.gpus)
Markdown(fmt.table("notebook-sizing", ["Quantity", "Value"], [
    ["Parameters (nominal)", fmt.params(s.params)],
    ["Bytes per parameter", fmt.quantity(s.bytes_per_param, "bytes/param", 3)],
    ["Weight memory", fmt.nbytes(s.weight_bytes, "GB")],
    ["Usable memory per GPU", fmt.nbytes(s.usable_bytes, "GB")],
    ["GPUs, weights only", fmt.count(s.gpus_weights_only)],
    ["GPUs with the reserve", fmt.count(s.gpus_with_headroom)],
]))

# %% [markdown]
# ## A layout a serving engine accepts
#
# A tensor-parallel degree must divide the attention heads and the KV heads and fit in one node;
# pipeline stages must divide the layers. Capacity rounds up to such a layout.

# %%
arch = model.architecture
layout = deployable_layout(s.gpus_with_headroom, arch.attention_heads, arch.kv_heads, arch.layers, node.gpus)
Markdown(fmt.table("notebook-layout", ["Quantity", "Value"], [
    ["Layout", layout.label],
    ["GPUs rented", fmt.count(layout.gpus)],
    ["Nodes", fmt.count(nodes_needed(layout.gpus, node.gpus), "nodes")],
]))

# %% [markdown]
# ## The bandwidth ceiling
#
# Generating one token reads every weight once. With the weights spread over the layout's GPUs,
# their memory bandwidths add up, and bandwidth divided by bytes read is an upper bound on tokens
# per second for one sequence: it ignores the KV cache, compute and communication.

# %%
hbm = gpu.memory_bandwidth.bandwidth
ceiling = tokens_per_s_ceiling(s.weight_bytes, aggregate(hbm, layout.gpus))
Markdown(fmt.table("notebook-ceiling", ["Quantity", "Value"], [
    ["HBM per GPU", fmt.bandwidth(hbm, "TB/s", 2)],
    ["HBM of the layout", fmt.bandwidth(aggregate(hbm, layout.gpus), "TB/s", 1)],
    ["Tokens per second, ceiling", fmt.quantity(ceiling, "tokens/s", 0)],
]))
