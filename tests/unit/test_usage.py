"""The reference pages link each model and accelerator to the pages that show it."""

from __future__ import annotations

import pytest

from snippets.render.usage import Usage, placeholder


def test_usage_records_names_and_links_relative_to_the_page():
    u = Usage({("model", "m"): "Model <One>", ("accelerator", "a"): "Chip"})
    u.record("hbm/", "HBM", "text about Model <One> and more")
    u.record("hbm/", "HBM", "Model <One> again")  # once per page
    u.record("", "Home", "Chip and Model <One>")
    out = u.fill(f"<p>{placeholder('model', 'm')}</p><p>{placeholder('accelerator', 'a')}</p>", "reference/models/")
    assert out == ('<p><a href="../../">Home</a>, <a href="../../hbm/">HBM</a></p><p><a href="../../">Home</a></p>')
    assert u.fill(placeholder("model", "nobody"), "reference/models/") == "—"
    with pytest.raises(ValueError):
        placeholder("model", 'x" onclick="y')
