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
import builtins
import inspect
import textwrap
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from snippets.render.fmt import Claim

SCALES = (0.1, 10.0)
_ARITHMETIC_CALLS = frozenset({"abs", "min", "max", "round", "float", "int", "ceil", "floor"})
ENGINE = "snippets.engine."
"""Records whose properties a claim is read through: the engine's."""
INLINE_DEPTH = 4
"""How many properties deep a condition is read (`fits` -> `starts`, `free` -> `kv_room`, `pool` ...)."""
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
    elif isinstance(node, ast.Call) and _callee(node.func) in _ARITHMETIC_CALLS:
        for arg in node.args:
            _figures(arg, True, out)
    elif isinstance(node, ast.Constant):
        return  # a literal is the claim's own threshold, not a figure of data
    elif isinstance(node, ast.Name | ast.Attribute | ast.Subscript | ast.Call):
        out.append(node)


def _callee(func: ast.expr) -> str | None:
    """`abs` of `abs(x)`, `ceil` of `math.ceil(x)`."""
    if isinstance(func, ast.Name):
        return func.id
    if isinstance(func, ast.Attribute) and func.attr in ("ceil", "floor"):  # math's, bound under any name
        return func.attr
    return None


def _returned(fget: Any) -> tuple[ast.expr, str] | None:
    """The one expression a property's getter returns, and its `self` parameter's name; None for any other body."""
    try:
        tree = ast.parse(textwrap.dedent(inspect.getsource(fget)))
    except (OSError, TypeError, SyntaxError):
        return None
    fn = tree.body[0] if tree.body else None
    if not isinstance(fn, ast.FunctionDef) or not fn.args.args:
        return None
    body = [st for st in fn.body if not (isinstance(st, ast.Expr) and isinstance(st.value, ast.Constant))]
    if len(body) != 1 or not isinstance(body[0], ast.Return) or body[0].value is None:
        return None
    return body[0].value, fn.args.args[0].arg


class _Inliner(ast.NodeTransformer):
    """Each `record.prop` whose record is the engine's and whose property returns one expression, replaced by that
    expression over a name bound to the record; the names the getter reads from its module bound under fresh names."""

    def __init__(self, scope: dict[str, object], file: str) -> None:
        self.scope, self.file, self.count = scope, file, 0
        self.names: dict[int, str] = {}
        """One name per object: a record read through two properties is one record, its figures scaled together."""

    def _bind(self, value: object) -> str:
        self.count += 1
        name = self.names.get(id(value))
        if name is None:
            name = self.names[id(value)] = f"__inlined_{len(self.names)}"
            self.scope[name] = value
        return name

    def visit_Attribute(self, node: ast.Attribute) -> Any:
        node = self.generic_visit(node)  # type: ignore[assignment]
        try:
            owner = eval(compile(ast.Expression(node.value), self.file, "eval"), self.scope)  # noqa: S307 - the site's code
        except Exception:  # a piece that needs a comprehension's variable, or fails: left as written
            return node
        prop = getattr(type(owner), node.attr, None)
        if not isinstance(prop, property) or not type(owner).__module__.startswith(ENGINE):
            return node
        found = _returned(prop.fget)
        if found is None:
            return node
        expr, this = found
        module_names = getattr(prop.fget, "__globals__", {})
        renames = {this: self._bind(owner)}
        for sub in ast.walk(expr):
            if isinstance(sub, ast.Name) and sub.id not in renames:
                if sub.id in module_names:
                    renames[sub.id] = self._bind(module_names[sub.id])
                elif hasattr(builtins, sub.id):
                    renames[sub.id] = self._bind(getattr(builtins, sub.id))
        for sub in ast.walk(expr):
            if isinstance(sub, ast.Name) and sub.id in renames:
                sub.id = renames[sub.id]
        return ast.copy_location(expr, node)


def inline_engine_properties(cond: ast.expr, scope: dict[str, object], file: str
                             ) -> tuple[ast.expr, dict[str, object]] | None:
    """`cond` with the engine's properties it reads replaced by their definitions, `INLINE_DEPTH` deep, and the scope
    that evaluates it; None when it reads none."""
    inliner = _Inliner(dict(scope), file)
    tree: ast.expr = ast.parse(ast.unparse(cond), mode="eval").body
    for _ in range(INLINE_DEPTH):
        before = inliner.count
        tree = inliner.visit(tree)
        if inliner.count == before:
            break
    if inliner.count == 0:
        return None
    return ast.parse(ast.unparse(tree), mode="eval").body, inliner.scope


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


def scale_verdict(cond: ast.expr, claim: Claim, *, inlined: bool = False) -> Verdict:
    """Scale each figure of `cond` alone by 0.1 and 10 in the scope `claim` was made in. A condition that compares no
    figure (`d.fits_one_node`) is read again through the engine's own definitions of the properties it reads
    (`inline_engine_properties`), whose figures are then scaled."""
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
        if not inlined:
            expanded = inline_engine_properties(cond, scope, claim.site.file)
            if expanded is not None:
                return scale_verdict(expanded[0], replace(claim, site=replace(claim.site, scope=expanded[1])),
                                     inlined=True)
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
