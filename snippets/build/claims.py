"""A claim must be able to fail: the condition of each `fmt.claim` a page shows is read again with each figure it
compares scaled alone by 0.1 and by 10, and a claim that holds every time is refused.

`fmt.claim(holds, basis)` records where it was called and what its caller could read (`fmt.ClaimSite`). Here the
call is found in its file's syntax tree, and its condition split into figures and the logic around them:

- the figures are the operands of a comparison (`<`, `<=`, `==`, ...), through arithmetic (`a / b - 1`, `abs`,
  `min`, `max`, `round`): each maximal piece that is not arithmetic or a literal (`d.gpus`, `len(models)`,
  `out_cost(run(wd, 1))`) and gives a number is one figure; the same piece written twice is one figure, scaled
  in both places (so `x == x` and `x > 0.5 * x` are refused, as `value >= 0` is);
- what is not a number (a bool computed elsewhere: `d.fits_one_node`, `all(...)`, an `in` test) is logic,
  evaluated as written.

A claim whose condition holds with every figure scaled alone by 0.1 and by 10 states nothing its data could
contradict; it is refused unless it says why it is structural (`fmt.claim(..., structural="...")`). A claim whose
condition compares no figure (a bool computed in the engine) cannot be scaled here: it is counted as opaque and
listed at INFO level, not refused.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from snippets.render.fmt import Claim

SCALES = (0.1, 10.0)
_ARITHMETIC_CALLS = frozenset({"abs", "min", "max", "round", "float", "int"})
_NOT_NUMERIC_OPS = (ast.In, ast.NotIn, ast.Is, ast.IsNot)


@dataclass
class Verdict:
    """What scaling said about one claim: `refused` (a message), or `opaque` (nothing to scale), else it can fail."""

    refused: str | None = None
    opaque: str | None = None
    figures: int = 0


@dataclass
class ClaimChecker:
    """The claims of one build: each page model's file read once."""

    files: dict[str, list[bytes]] = field(default_factory=dict)
    """Each file's lines, as bytes: the call's columns are offsets in UTF-8."""

    def condition(self, claim: Claim) -> ast.expr | None:
        """The condition written in the `fmt.claim(...)` call that made `claim`: the call's own text, parsed (a page
        model's whole file would cost a parse a build)."""
        if claim.site is None:
            return None
        line, end, col, end_col = claim.site.position
        if line is None or end is None or col is None or end_col is None:
            return None
        lines = self.files.get(claim.site.file)
        if lines is None:
            path = Path(claim.site.file)
            lines = self.files[claim.site.file] = path.read_bytes().splitlines(keepends=True) if path.is_file() else []
        if end > len(lines):
            return None
        seg = lines[line - 1:end]
        text = seg[0][col:end_col] if line == end else seg[0][col:] + b"".join(seg[1:-1]) + seg[-1][:end_col]
        try:
            node = ast.parse(b"(" + text + b")", mode="eval").body
        except (SyntaxError, ValueError):
            return None
        if not isinstance(node, ast.Call):
            return None
        if node.args:
            return node.args[0]
        return next((k.value for k in node.keywords if k.arg == "holds"), None)

    def verdict(self, claim: Claim) -> Verdict:
        if claim.site is None:
            return Verdict(refused="was not made by snippets.render.fmt.claim, so its condition cannot be read: "
                                   "make it with fmt.claim(condition, basis)")
        if not claim.holds:
            return Verdict()  # the build reports it as not holding
        cond = self.condition(claim)
        if cond is None:
            return Verdict(opaque="its fmt.claim call was not found in its file")
        return scale_verdict(cond, claim)


def _figures(node: ast.expr, numeric: bool, out: list[ast.expr]) -> None:
    """The figure pieces of a condition (see the module's docstring), in order."""
    if isinstance(node, ast.Compare):
        operands = [node.left, *node.comparators]
        plain = not any(isinstance(op, _NOT_NUMERIC_OPS) for op in node.ops)
        for operand in operands:
            _figures(operand, plain, out)
    elif isinstance(node, ast.BoolOp):
        for value in node.values:
            _figures(value, False, out)
    elif isinstance(node, ast.UnaryOp):
        _figures(node.operand, numeric and not isinstance(node.op, ast.Not), out)
    elif not numeric:
        return  # logic: a bool from elsewhere, evaluated as written
    elif isinstance(node, ast.BinOp):
        _figures(node.left, True, out)
        _figures(node.right, True, out)
    elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in _ARITHMETIC_CALLS:
        for arg in node.args:
            _figures(arg, True, out)
    elif isinstance(node, ast.Constant):
        return  # a literal is the claim's own threshold, not a figure of data
    elif isinstance(node, ast.Name | ast.Attribute | ast.Subscript | ast.Call):
        out.append(node)


class _Swap(ast.NodeTransformer):
    """Each piece (by identity) replaced by the name of its figure."""

    def __init__(self, names: dict[int, str]) -> None:
        self.names = names

    def visit(self, node: ast.AST) -> Any:
        name = self.names.get(id(node))
        if name is not None:
            return ast.copy_location(ast.Name(id=name, ctx=ast.Load()), node)
        return super().visit(node)


def _number(x: object) -> bool:
    return isinstance(x, int | float) and not isinstance(x, bool)


def scale_verdict(cond: ast.expr, claim: Claim) -> Verdict:
    """Scale each figure of `cond` alone by 0.1 and 10 in the scope `claim` was made in."""
    if claim.site is None:
        return Verdict(opaque="no call site")
    scope = dict(claim.site.scope)
    fresh = ast.parse(ast.unparse(cond), mode="eval").body  # a copy to rewrite
    pieces: list[ast.expr] = []
    _figures(fresh, False, pieces)
    by_source: dict[str, str] = {}  # a piece's source -> its figure's name: the same piece twice is one figure
    names: dict[int, str] = {}
    values: dict[str, float] = {}
    for piece in pieces:
        text = ast.unparse(piece)
        if text not in by_source:
            try:
                value = eval(compile(ast.Expression(piece), claim.site.file, "eval"), scope)  # noqa: S307 - the site's code
            except Exception:  # noqa: S112 - a piece that needs a comprehension's variable is logic, not a figure
                continue
            if not _number(value):
                continue
            by_source[text] = f"__figure_{len(by_source)}"
            values[by_source[text]] = value
        names[id(piece)] = by_source[text]
    if not values:
        return Verdict(opaque="its condition compares no figure (a bool computed elsewhere)")
    tree = ast.fix_missing_locations(ast.Expression(_Swap(names).visit(fresh)))
    code = compile(tree, claim.site.file, "eval")

    def holds(**scaled: float) -> bool:
        return bool(eval(code, {**scope, **values, **scaled}))  # noqa: S307 - the site's code, as written

    try:
        if not holds():
            return Verdict(opaque="its condition, read again, does not give what the claim recorded")
        for name, value in values.items():
            for k in SCALES:
                if not holds(**{name: value * k}):
                    return Verdict(figures=len(values))
    except Exception:
        return Verdict(figures=len(values))
    if claim.structural:
        return Verdict(figures=len(values))
    shown = ", ".join(by_source)
    return Verdict(refused=f"still holds with each of its figures ({shown}) scaled alone by 0.1 and by 10: it states "
                           "nothing its data could contradict. Compare it with a threshold that can fail, or give "
                           "fmt.claim(..., structural=\"why it is structural\")", figures=len(values))
