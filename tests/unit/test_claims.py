"""A claim must be able to fail (issue 27): `snippets.build.claims` reads each claim's condition where `fmt.claim`
was called and scales each figure it compares alone by 0.1 and by 10. Before, `value >= 0`, `x == x` or a `Claim`
made by hand were published as checked."""

from __future__ import annotations

import ast
from decimal import Decimal

import markdown

from snippets.build.claims import (
    ClaimChecker,
    _figures,
    _kind_pieces,
    _others,
    _scaled,
    inline_engine_properties,
    scale_verdict,
    swap_verdict,
)
from snippets.build.computed import ComputedExtension, Pages
from snippets.data import Catalog
from snippets.data.export import engine_catalog
from snippets.engine.deployment import deploy, setting
from snippets.render import fmt
from snippets.render.fmt import Claim


def verdict(claim: Claim) -> tuple[str | None, str | None]:
    v = ClaimChecker().verdict(claim)
    return v.refused, v.opaque


def test_a_claim_that_no_scaled_figure_can_break_is_refused() -> None:
    value, x = 3.0, 7.0
    for c in (fmt.claim(value >= 0, "positive"), fmt.claim(x == x, "same"), fmt.claim(x > 0.5 * x, "half"),
              fmt.claim(abs(x) < x * 2 + 1, "bounded")):
        refused, _ = verdict(c)
        assert refused is not None and "scaled alone by 0.1 and by 10" in refused, c


def test_a_claim_a_scaled_figure_breaks_holds() -> None:
    a, b, models = 20.0, 10.0, ["one"]
    share = 0.7
    for c in (fmt.claim(a > b, "a > b"), fmt.claim(len(models) == 1, "one"), fmt.claim(0.5 < share < 1.0, "range"),
              fmt.claim(abs(a / b - 2) < 0.01, "twice"), fmt.claim(a > b and models[0] == "one", "mixed")):
        assert verdict(c) == (None, None), c


def test_a_stated_reason_lets_a_structural_claim_hold() -> None:
    heads, gpus = 128, 12
    c = fmt.claim(heads % gpus != 0, "128 heads, 12 GPUs", structural="divisibility of integers")
    assert verdict(c) == (None, None)
    assert verdict(fmt.claim(heads % gpus != 0, "128 heads, 12 GPUs"))[0] is not None


def test_a_bool_nothing_can_vary_is_refused_unless_structural_and_a_hand_made_claim_refused() -> None:
    """Before, a claim over a bool from elsewhere was listed as opaque and published."""
    flags = {"fits": True}
    refused, _ = verdict(fmt.claim(flags["fits"], "the engine says so"))
    assert refused is not None and "reads no figure, id, kind or list the build can vary" in refused
    assert verdict(fmt.claim(flags["fits"], "x", structural="a rule of the engine, not a size")) == (None, None)
    refused, _ = verdict(Claim(True, "typed to hold"))
    assert refused is not None and "not made by snippets.render.fmt.claim" in refused


def test_a_claim_over_a_name_its_function_bound_is_read_through_it() -> None:
    a, b, c = 1.0, 2.0, 3.0
    ordered = a < b < c
    assert verdict(fmt.claim(ordered, "ascending")) == (None, None)
    same = a == a
    refused, _ = verdict(fmt.claim(same, "tautology"))
    assert refused is not None and "scaled alone" in refused


def test_ids_kinds_and_lists_are_swapped_for_others_of_their_kind() -> None:
    compute, stored = "bf16", "fp8"
    degrees, gpus, found = [1, 2, 4, 8], 12, object()
    for c in (fmt.claim(compute != stored, "converted"), fmt.claim(gpus not in degrees, "no such TP"),
              fmt.claim(found is not None, "found one"), fmt.claim(bool(degrees), "some")):
        assert verdict(c) == (None, None), c.basis
    refused, _ = verdict(fmt.claim(compute == compute, "same format"))
    assert refused is not None and "swapped alone" in refused


def test_an_all_claim_can_fail_if_one_instance_can() -> None:
    gains = {"h100": 1.4, "b200": 1.2}
    assert verdict(fmt.claim(all(v > 1 for v in gains.values()), "every gain above one")) == (None, None)
    refused, _ = verdict(fmt.claim(all(v >= 0 for v in gains.values()), "every gain non-negative"))
    assert refused is not None


def test_the_build_refuses_such_a_claim_at_its_line() -> None:
    level = 5.0
    pages = Pages()
    state = pages.begin("page.md", "Intro.\n\nIt is {{ claim positive }}above zero{{ /claim }}.", "interconnect")
    state.namespace = {"positive": fmt.claim(level > 0, f"{level} > 0"), "hand": Claim(True, "x"), "flag": True}
    html = markdown.Markdown(extensions=[ComputedExtension(pages)]).convert(state.markdown)
    assert 'data-claim="positive"' in html
    assert len(state.errors) == 1 and state.errors[0].startswith("docs/page.md:3: claim 'positive' (\"above zero\") "
                                                                 "still holds with each of its figures (level)")
    state = pages.begin("page.md", "{{ claim hand }}x{{ /claim }} and {{ claim flag }}y{{ /claim }}", "interconnect")
    state.namespace = {"hand": Claim(True, "x"), "flag": True}
    markdown.Markdown(extensions=[ComputedExtension(pages)]).convert(state.markdown)
    assert len(state.errors) == 2
    assert "claim 'hand' (\"x\") was not made by snippets.render.fmt.claim" in state.errors[0]
    assert "claim 'flag' gave a bool, not a Claim" in state.errors[1]


def test_a_bool_the_engine_computes_is_read_through_its_definition(catalog: Catalog) -> None:
    """`d.fits_one_node` is `self.nodes == 1`, `nodes` is `math.ceil(self.gpus / self.gpus_per_node)`: the claim is
    read through those definitions, and scaling the GPUs or the node's size can break it (before: opaque)."""
    eng = engine_catalog(catalog)
    d = deploy(setting(eng, "llama-3.1-70b", "fp8", "reference", node="hgx-h100-8"))
    big = deploy(setting(eng, "llama-3.1-405b", "bf16", "reference", node="hgx-h100-8"))
    assert d.fits_one_node and not big.fits_one_node
    for c in (fmt.claim(d.fits_one_node, "one node"), fmt.claim(not big.fits_one_node, "more than one"),
              fmt.claim(d.memory.fits, "it fits"), fmt.claim(d.fits_one_node and not big.fits_one_node, "both")):
        v = ClaimChecker().verdict(c)
        assert v.refused is None and v.opaque is None and v.figures >= 2, (c.basis, v)


def test_an_engine_property_is_replaced_by_what_it_returns(catalog: Catalog) -> None:
    """`fits_one_node` -> `nodes == 1` -> `ceil(gpus / gpus_per_node) == 1`, over names bound to the record and to the
    engine module's own names."""
    eng = engine_catalog(catalog)
    d = deploy(setting(eng, "llama-3.1-70b", "fp8", "reference", node="hgx-h100-8"))
    expanded = inline_engine_properties(ast.parse("not d.fits_one_node", mode="eval").body, {"d": d}, __file__)
    assert expanded is not None
    text = ast.unparse(expanded[0])
    assert ".ceil(" in text and ".tp" in text and ".node.gpus" in text and "fits_one_node" not in text, text
    assert eval(compile(ast.Expression(expanded[0]), "x", "eval"), expanded[1]) is False  # noqa: S307 - the test's own
    assert inline_engine_properties(ast.parse("flag", mode="eval").body, {"flag": True}, __file__) is None


def _as_written(c: Claim) -> ast.expr:
    cond = ClaimChecker().condition(c)
    assert cond is not None
    return cond


def test_one_swap_reading_for_both_kinds_of_alternative() -> None:
    """Issue 25: scaling figures and swapping ids are one reading (`swap_verdict`) given how a piece's alternatives
    are made; it refuses what no alternative breaks and accepts what one does, under either."""
    a, b, compute, stored = 20.0, 10.0, "bf16", "fp8"
    readings = {"scaled": (lambda node, out: _figures(node, False, out), _scaled), "kinds": (_kind_pieces, _others)}
    cases = {"scaled": (fmt.claim(a == a, "same"), fmt.claim(a > b, "a > b")),
             "kinds": (fmt.claim(compute == compute, "same format"), fmt.claim(compute != stored, "converted"))}
    for kind, (find, alternatives) in readings.items():
        never, can = cases[kind]
        v = swap_verdict(_as_written(never), never, find, alternatives, "no {shown} breaks it")
        assert v is not None and v.refused == ("no a breaks it" if kind == "scaled" else "no compute breaks it"), v
        v = swap_verdict(_as_written(can), can, find, alternatives, "no {shown} breaks it")
        assert v is not None and v.refused is None and v.opaque is None and v.figures == 2, (kind, v)
    flag = True  # a bool has no alternative under either: not this reading's
    c = fmt.claim(flag, "a bool")
    assert all(swap_verdict(_as_written(c), c, f, alt, "{shown}") is None for f, alt in readings.values())


def test_a_claim_whose_every_reading_raises_is_not_accepted() -> None:
    """A swap whose evaluation raises shows nothing. Before, the first one that raised counted as "the claim can
    fail": `price > 1` over a Decimal (which neither scales nor has another value of its kind: each swap raises
    TypeError) was published as checked, and so was a shift or a string repeat whose scaled count is a float."""
    price = Decimal("2.5")
    v = ClaimChecker().verdict(fmt.claim(price > 1, "above one"))
    assert v.refused is not None and "could not be read again" in v.refused and "TypeError" in v.refused, v
    assert ClaimChecker().verdict(fmt.claim(price > 1, "x", structural="a price, not a size")).refused is None
    n, x = 4, 3.0
    for c in (fmt.claim(n << 1 == 8, "shifted"), fmt.claim("ab" * n == "abababab", "repeated"),
              fmt.claim("ab" * n == "abababab" and x >= 0, "the only figure that reads holds however scaled")):
        v = scale_verdict(_as_written(c), c)
        assert v.raised and v.opaque is not None and v.refused is None and "TypeError" in v.opaque, (c.basis, v)
    c = fmt.claim("ab" * n == "abababab" and x > 1, "one figure raises, another breaks it")
    v = scale_verdict(_as_written(c), c)
    assert v.refused is None and v.opaque is None and not v.raised, v
