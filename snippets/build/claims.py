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
contradict; it is refused unless it says why it is structural (`fmt.claim(..., structural="...")`).

A condition that compares no figure as written is read again, until one reading shows it can fail:

- through the engine's definitions of the properties it reads (`d.fits_one_node` is `self.nodes == 1`, `nodes`
  is `ceil(gpus / gpus_per_node)`: the GPUs are then a figure), and through the expressions its own function bound
  to the names it reads (`ordered = a < b < c` ... `fmt.claim(ordered, ...)`);
- as kinds: each id, format, list or record it reads from data swapped alone for another value of its kind (another
  string or another piece's, an empty list or one holding another piece, another record or none): `a != b` fails
  when a is b's value, `x not in xs` when xs holds x, `r is not None` when r is none;
- as the instances of an `all(P(x) for x in xs)`: it can fail if one instance `P(x)` can.

A claim no reading can break is refused as one no scaling breaks is; one that reads nothing the build can vary (a
bool field of a record, a bool a function returns) is refused unless it says why it is structural.

Every reading is one loop (`swap_verdict`), given how a piece's alternatives are made (`_scaled`, `_others`). A
swap whose evaluation raises (a float where a shift or a repeat wants an int, a value of no kind where a comparison
wants its own) is no reading: it shows neither that the claim can fail nor that it cannot. A claim is shown to fail
only by a swap that evaluates and breaks it; one whose every reading raised is refused as one that reads nothing,
unless it says why it is structural.

What the readings cannot see: two different pieces that are equal by construction (`full.x` and `cap`, where `cap`
was read from `full.x` a line before; `at_rate(...)` above a replica's capacity, which returns that replica's
figures). Scaled alone, each makes the other's comparison fail, so such a claim passes though its data could never
contradict it. The readings prove a claim can fail only where its figures are independent; a condition that
restates how a figure was computed, or a check a function already enforces by raising, is the page author's to keep
out (the pages then say the fact plainly, or let the raising function be the guard).
"""

from __future__ import annotations

import ast
import builtins
import inspect
import textwrap
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from snippets.render.fmt import Claim

SCALES = (0.1, 10.0)
_ARITHMETIC_CALLS = frozenset({"abs", "min", "max", "round", "float", "int", "ceil", "floor"})
ENGINE = "snippets."
"""Records whose properties a claim is read through: the project's own (the engine's, the teaching arithmetic's)."""
QUANTIFIED = 8
"""Instances of an `all(...)` claim read before it is called opaque (or refused, if each is)."""
INLINE_DEPTH = 4
"""How many properties deep a condition is read (`fits` -> `starts`, `free` -> `kv_room`, `pool` ...)."""
_NOT_NUMERIC_OPS = (ast.In, ast.NotIn, ast.Is, ast.IsNot)


@dataclass
class Verdict:
    """What scaling said about one claim: `refused` (a message), or `opaque` (nothing to scale), else it can fail."""

    refused: str | None = None
    opaque: str | None = None
    figures: int = 0
    raised: bool = False
    """Opaque because its condition raised each time it was read again with a piece swapped (or as written)."""


@dataclass
class ClaimChecker:
    """The claims of one build: each page model's file read once."""

    files: dict[str, list[bytes]] = field(default_factory=dict)
    """Each file's lines, as bytes: the call's columns are offsets in UTF-8."""
    trees: dict[str, ast.Module | None] = field(default_factory=dict)
    """Each file's syntax tree, parsed the first time one of its claims reads no figure as written."""
    functions: dict[str, list[ast.FunctionDef | ast.AsyncFunctionDef]] = field(default_factory=dict)
    """Each parsed file's functions, in `ast.walk` order."""
    assigns: dict[int, list[tuple[int, int, str, ast.expr]]] = field(default_factory=dict)
    """Each function's (by the id of its node, held in `trees`) `name = value` statements: line, end line, name,
    value, in `ast.walk` order."""

    def local_definitions(self, claim: Claim) -> dict[str, ast.expr]:
        """The names the function that made `claim` bound before the call, each to the last expression assigned to it
        (`ordered = a < b < c` ... `fmt.claim(ordered, ...)`): a claim over such a name is read through it."""
        if claim.site is None or claim.site.position[0] is None:
            return {}
        file, line = claim.site.file, claim.site.position[0]
        if file not in self.trees:
            lines = self.files.get(file) or []
            try:
                self.trees[file] = ast.parse(b"".join(lines)) if lines else None
            except (SyntaxError, ValueError):
                self.trees[file] = None
        tree = self.trees[file]
        if tree is None:
            return {}
        functions = self.functions.get(file)
        if functions is None:  # each file's functions listed once, in `ast.walk` order
            functions = self.functions[file] = [f for f in ast.walk(tree)
                                                if isinstance(f, ast.FunctionDef | ast.AsyncFunctionDef)]
        around = [f for f in functions if f.lineno <= line <= (f.end_lineno or 0)]
        if not around:
            return {}
        fn = min(around, key=lambda f: (f.end_lineno or 0) - f.lineno)  # the innermost
        assigns = self.assigns.get(id(fn))
        if assigns is None:  # each function's single-name assignments listed once, in `ast.walk` order
            assigns = self.assigns[id(fn)] = [
                (st.lineno, st.end_lineno or 0, st.targets[0].id, st.value) for st in ast.walk(fn)
                if isinstance(st, ast.Assign) and len(st.targets) == 1 and isinstance(st.targets[0], ast.Name)]
        found: dict[str, tuple[int, ast.expr]] = {}
        for lineno, end, name, value in assigns:
            if end < line and found.get(name, (0,))[0] <= lineno:
                found[name] = (lineno, value)
        return {name: value for name, (_, value) in found.items()}

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
        verdict = scale_verdict(cond, claim)
        if verdict.opaque is None or claim.site is None:
            return verdict
        # read again: through the names its function bound, as kinds (ids, lists, records), as instances of an
        # `all(...)`, as written and expanded; the claim can fail if one reading shows it can, and is refused if none
        # can and one refuses
        readings = [verdict]
        expanded = expand(cond, dict(claim.site.scope), claim.site.file, self.local_definitions(claim))
        forms: list[tuple[ast.expr, Claim]] = [(cond, claim)]
        if expanded is not None:
            wide = replace(claim, site=replace(claim.site, scope=expanded[1]))
            forms.append((expanded[0], wide))
            readings.append(scale_verdict(expanded[0], wide, expand_engine=False))
        for form, made in forms:
            readings.append(kind_verdict(form, made))
            quantified = self.quantified(form, made)
            if quantified is not None:
                readings.append(quantified)
        for v in readings:
            if v.refused is None and v.opaque is None:
                return v
        refused = next((v for v in readings if v.refused), None)
        if refused is not None:
            return refused
        if claim.structural:
            return Verdict()
        raised = next((v for v in readings if v.raised), None)
        if raised is not None:
            return Verdict(refused=f"could not be read again ({raised.opaque}), so nothing shows it could fail: "
                                   "compare the figures it rests on, or give "
                                   "fmt.claim(..., structural=\"why it is structural\")", figures=raised.figures)
        return Verdict(refused="reads no figure, id, kind or list the build can vary (a bool computed elsewhere), so "
                               "nothing shows it could fail: compare the figures it rests on, or give "
                               "fmt.claim(..., structural=\"why it is structural\")")

    def quantified(self, cond: ast.expr, claim: Claim) -> Verdict | None:
        """`all(P(x) for x in xs)`: read as its instances, each `P(x)` with `x` bound to an element of
        `xs` (the first `QUANTIFIED` that pass its `if`s); it can fail if one instance can, and is refused if every
        instance is. None for another form."""
        if not (isinstance(cond, ast.Call) and _callee(cond.func) == "all" and len(cond.args) == 1
                and isinstance(cond.args[0], ast.GeneratorExp) and len(cond.args[0].generators) == 1
                and claim.site is not None):
            return None
        gen = cond.args[0].generators[0]
        scope = claim.site.scope
        try:
            items = list(eval(compile(ast.Expression(gen.iter), claim.site.file, "eval"), dict(scope)))  # noqa: S307
        except Exception:
            return None
        target = compile(ast.fix_missing_locations(ast.Module(body=[ast.Assign(
            targets=[gen.target], value=ast.Name(id="__item", ctx=ast.Load()))], type_ignores=[])),
            claim.site.file, "exec")
        verdicts: list[Verdict] = []
        for item in items:
            local = {**scope, "__item": item}
            try:
                exec(target, local)  # noqa: S102 - the claim's own loop target (`a, b`), bound to one element
                if not all(eval(compile(ast.Expression(c), claim.site.file, "eval"), local) for c in gen.ifs):  # noqa: S307
                    continue
            except Exception:  # noqa: S112 - an element the claim's own loop could not bind: not an instance
                continue
            instance = replace(claim, holds=True, site=replace(claim.site, scope=local))
            elt = ast.parse(ast.unparse(cond.args[0].elt), mode="eval").body
            v = scale_verdict(elt, instance)
            if v.opaque is not None:
                v = kind_verdict(elt, instance)
            if v.refused is None and v.opaque is None:
                return v
            verdicts.append(v)
            if len(verdicts) >= QUANTIFIED:
                break
        if verdicts and all(v.refused for v in verdicts):
            return verdicts[0]
        return verdicts[0] if verdicts else None


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
    """Each `record.prop` whose record is the project's and whose property returns one expression, replaced by that
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


class _Locals(ast.NodeTransformer):
    """Each name the claim's function bound to one expression, replaced by it where it gives the same value now."""

    def __init__(self, scope: dict[str, object], file: str, defs: dict[str, ast.expr]) -> None:
        self.scope, self.file, self.defs, self.count = scope, file, defs, 0

    def visit(self, node: ast.AST) -> Any:
        if isinstance(node, ast.Lambda | ast.GeneratorExp | ast.ListComp | ast.SetComp | ast.DictComp):
            return node  # its names are its own variables, not the function's
        return super().visit(node)

    def visit_Name(self, node: ast.Name) -> Any:
        value = self.defs.get(node.id)
        if value is None or not isinstance(node.ctx, ast.Load) or node.id not in self.scope:
            return node
        try:
            same = eval(compile(ast.Expression(value), self.file, "eval"), self.scope) == self.scope[node.id]  # noqa: S307
        except Exception:  # a comprehension's variable, or a call that fails read again: left as written
            return node
        if same is not True:
            return node
        self.count += 1
        return ast.copy_location(ast.parse(ast.unparse(value), mode="eval").body, node)


def expand(cond: ast.expr, scope: dict[str, object], file: str, defs: dict[str, ast.expr]
           ) -> tuple[ast.expr, dict[str, object]] | None:
    """`cond` read through the local names its function bound and the engine's properties, alternately,
    `INLINE_DEPTH` rounds; None when neither changes it."""
    tree: ast.expr = ast.parse(ast.unparse(cond), mode="eval").body
    changed = False
    try:
        for _ in range(INLINE_DEPTH):
            local = _Locals(scope, file, defs)
            tree = ast.parse(ast.unparse(local.visit(tree)), mode="eval").body
            engine = inline_engine_properties(tree, scope, file)
            if engine is not None:
                tree, scope = engine
            if not local.count and engine is None:
                break
            changed = True
    except (SyntaxError, ValueError, RecursionError):
        return None  # a reading the checker cannot make: the claim stays as opaque as it was
    return (tree, scope) if changed else None


_KIND_CALLS = frozenset({"bool", "len", "any", "all", "sorted", "set", "list", "tuple"})


def _kind_pieces(node: ast.expr, out: list[ast.expr]) -> None:
    """The pieces a condition without figures reads from data: the operands of its comparisons (ids, formats, sets,
    records compared by identity) and what `bool`, `len`, `any`, `all` test; literals are its own."""
    if isinstance(node, ast.Compare):
        for operand in (node.left, *node.comparators):
            if not isinstance(operand, ast.Constant):
                out.append(operand)
    elif isinstance(node, ast.BoolOp):
        for value in node.values:
            _kind_pieces(value, out)
    elif isinstance(node, ast.UnaryOp):
        _kind_pieces(node.operand, out)
    elif isinstance(node, ast.Call) and _callee(node.func) in _KIND_CALLS:
        for arg in node.args:
            if isinstance(arg, ast.Compare | ast.BoolOp | ast.UnaryOp):
                _kind_pieces(arg, out)
            elif not isinstance(arg, ast.Constant | ast.GeneratorExp | ast.ListComp):
                out.append(arg)
    elif isinstance(node, ast.Name | ast.Attribute | ast.Subscript | ast.Call):
        out.append(node)  # `not problems(...)`: a list a function returned is a kind, its bools stay logic


class _Other:
    """A value of no kind the data holds: what a piece is swapped for to see whether the claim can fail."""

    def __repr__(self) -> str:
        return "<another value>"


def _others(value: object, beside: tuple[object, ...] = ()) -> list[object]:
    """Values of `value`'s kind other than it: another string, or the value of another piece of the claim (`a != b`
    fails when a is b's); an empty container, one holding something else, or holding another piece's value
    (`x not in xs` fails when xs holds x); another object, or none (`r is not None`); a number scaled by 0.1 and 10.
    None for a bool, which the claim's logic reads as written (swapping it would break any claim)."""
    if isinstance(value, bool) or value is None:
        return []
    if isinstance(value, int | float):
        return [value * k for k in SCALES]  # a figure the scan above could not reach (`min` over a comprehension)
    if isinstance(value, str):
        return [value + "\u0000another", *(b for b in beside if isinstance(b, str) and b != value)]
    if isinstance(value, dict):
        return [{}, {_Other(): _Other()}]
    if isinstance(value, list | tuple | set | frozenset):
        grown = [type(value)([*value, b]) for b in beside if not isinstance(b, list | tuple | set | frozenset | dict)]
        return [type(value)(), type(value)([_Other()]), *grown]
    return [_Other(), None, *(b for b in beside if type(b) is type(value) and b is not value)]


def kind_verdict(cond: ast.expr, claim: Claim) -> Verdict:
    """A claim that compares no figure, read as kinds: each piece it reads from data (an id, a format, a list, a
    record compared by identity) swapped alone for another value of its kind; a claim no swap breaks is refused, as a
    claim no scaling breaks is. Pieces that are bools the page computed stay as written: such a claim stays opaque."""
    verdict = swap_verdict(
        cond, claim, _kind_pieces, _others,
        "still holds with each id, kind or list it reads ({shown}) swapped alone for another: it states nothing its "
        "data could contradict. Compare it with something that can differ, or give "
        "fmt.claim(..., structural=\"why it is structural\")")
    if verdict is not None:
        return verdict
    return Verdict(opaque="its condition reads no figure and no id, kind or list from data (a bool computed "
                          "elsewhere)")


class _Swap(ast.NodeTransformer):
    """Each piece (by identity) replaced by the name of its figure."""

    def __init__(self, names: dict[int, str]) -> None:
        self.names = names

    def visit(self, node: ast.AST) -> Any:
        name = self.names.get(id(node))
        if name is not None:
            return ast.copy_location(ast.Name(id=name, ctx=ast.Load()), node)
        return super().visit(node)


def _scaled(value: object, beside: tuple[object, ...] = ()) -> list[object]:
    """A figure's alternatives: it scaled by 0.1 and by 10 (`SCALES`); none for what is not a number (a bool is
    not)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return []
    return [value * k for k in SCALES]


Alternatives = Callable[[object, tuple[object, ...]], list[object]]
"""The values one piece of a claim is swapped for, given its value and the values of the claim's other pieces: none
when the piece is not one this reading varies."""


def swap_verdict(cond: ast.expr, claim: Claim, find: Callable[[ast.expr, list[ast.expr]], None],
                 alternatives: Alternatives, refusal: str) -> Verdict | None:
    """The reading behind `scale_verdict` and `kind_verdict`: the pieces `find` collects from `cond` that have
    `alternatives` (the same piece written twice is one piece, swapped in both places), each swapped alone for each
    of its alternatives, and the condition evaluated again in the scope `claim` was made in.

    It can fail if one swap evaluates and does not hold. A swap whose evaluation raises (a string where arithmetic
    wants a number, a float where an index or a shift wants an int) is no reading: it shows neither that the claim
    can fail nor that it cannot. So the claim is refused (`refusal`, `{shown}` naming its pieces) only if every swap
    evaluates and holds, unless it is structural; if a swap raised and none broke it, or the condition as written
    raises, it is opaque (`Verdict.raised`): read otherwise, or refused as a claim no reading can break. None when
    `cond` has no piece with alternatives."""
    if claim.site is None:
        return Verdict(opaque="no call site")
    scope = dict(claim.site.scope)
    fresh = ast.parse(ast.unparse(cond), mode="eval").body  # a copy to rewrite
    pieces: list[ast.expr] = []
    find(fresh, pieces)
    by_source: dict[str, str] = {}  # a piece's source -> its name: the same piece twice is one piece
    names: dict[int, str] = {}
    values: dict[str, object] = {}
    for piece in pieces:
        text = ast.unparse(piece)
        if text not in by_source:
            try:
                value = eval(compile(ast.Expression(piece), claim.site.file, "eval"), scope)  # noqa: S307 - the site's code
            except Exception:  # noqa: S112 - a piece that needs a comprehension's variable is logic
                continue
            if not alternatives(value, ()):
                continue
            by_source[text] = f"__piece_{len(by_source)}"
            values[by_source[text]] = value
        names[id(piece)] = by_source[text]
    if not values:
        return None
    code = compile(ast.fix_missing_locations(ast.Expression(_Swap(names).visit(fresh))), claim.site.file, "eval")

    def holds(**swapped: object) -> bool:
        return bool(eval(code, {**scope, **values, **swapped}))  # noqa: S307 - the site's code, as written

    try:
        as_written = holds()
    except Exception as e:  # whatever it raises, the condition could not be read again
        return Verdict(opaque=f"its condition, read again as written, raised {type(e).__name__}: {str(e)[:120]}",
                       figures=len(values), raised=True)
    if not as_written:
        return Verdict(opaque="its condition, read again, does not give what the claim recorded")
    source = {name: text for text, name in by_source.items()}
    raised: dict[str, str] = {}  # a piece's source -> what its first swap that raised raised
    for name, value in values.items():
        beside = tuple(v for n, v in values.items() if n != name)
        for other in alternatives(value, beside):
            try:
                if not holds(**{name: other}):
                    return Verdict(figures=len(values))
            except Exception as e:  # no reading, whatever it raised
                raised.setdefault(source[name], f"{type(e).__name__}: {str(e)[:120]}")
    if raised:
        shown = "; ".join(f"{text}: {error}" for text, error in raised.items())
        return Verdict(opaque=f"its condition raised when read again with a piece swapped ({shown}), and no swap "
                              "that could be read broke it", figures=len(values), raised=True)
    if claim.structural:
        return Verdict(figures=len(values))
    return Verdict(refused=refusal.format(shown=", ".join(by_source)), figures=len(values))


def scale_verdict(cond: ast.expr, claim: Claim, *, expand_engine: bool = True) -> Verdict:
    """Scale each figure of `cond` alone by 0.1 and 10 in the scope `claim` was made in. A condition that compares no
    figure (`d.fits_one_node`) is read again through the engine's own definitions of the properties it reads
    (`inline_engine_properties`), whose figures are then scaled."""
    if claim.site is None:
        return Verdict(opaque="no call site")
    verdict = swap_verdict(
        cond, claim, lambda node, out: _figures(node, False, out), _scaled,
        "still holds with each of its figures ({shown}) scaled alone by 0.1 and by 10: it states nothing its data "
        "could contradict. Compare it with a threshold that can fail, or give "
        "fmt.claim(..., structural=\"why it is structural\")")
    if verdict is not None:
        return verdict
    if expand_engine:
        expanded = inline_engine_properties(cond, dict(claim.site.scope), claim.site.file)
        if expanded is not None:
            return scale_verdict(expanded[0], replace(claim, site=replace(claim.site, scope=expanded[1])),
                                 expand_engine=False)
    return Verdict(opaque="its condition compares no figure (a bool computed elsewhere)")
