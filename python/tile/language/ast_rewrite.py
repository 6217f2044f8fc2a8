"""The AST rewrite of kernel bodies (T.prim_func, @tile.jit, T.macro).

TileLang kernels are Python functions whose `if`, `for ... in range(...)`,
`a if c else b`, `and` / `or` / `not` and chained comparisons act on tile
values as well as on Python values. Python cannot overload those, so the
function's source is rewritten before it runs:

    if c: A else: B   ->  _c = cond(c)
                          if is_static(_c): (if _c: A else: B)   # Python
                          else: with then(_c): A ; with otherwise(): B  # scf.if
    x if c else y     ->  select(c, lambda: x, lambda: y)
    a and b / a or b  ->  and_(a, lambda: b) / or_(a, lambda: b)
    not a             ->  not_(a)
    a < b < c         ->  and_(a < b, lambda: b < c)   (b evaluated once)
    for i in range(n) ->  for i in kernel_range(n)     (scf.for, as in TileLang)

Static conditions keep Python semantics exactly, so configuration code
(`if enable_bias:`) runs as written. Line numbers are kept, so tracebacks and
the IR's locations point at the user's source. Everything else (loops over
T.Parallel / T.Pipelined / T.serial, buffer indexing, arithmetic) needs no
rewrite. Names of assigned buffers and loop variables are passed to the
builder as SSA name hints (readable IR).

A function whose source is unavailable (defined in a REPL or by exec) runs
unchanged: a dynamic condition then raises a TileLangError that says so.
"""

import ast
import copy
import functools
import inspect
import textwrap
import types

from . import control

_HELPER = "__tile_ast__"


class _Helpers:
    """What the rewritten code calls (bound to the name __tile_ast__)."""

    cond = staticmethod(control.cond)
    then = control.then
    otherwise = control.otherwise
    select = staticmethod(control.select)
    and_ = staticmethod(control.and_)
    or_ = staticmethod(control.or_)
    not_ = staticmethod(control.not_)
    kernel_range = staticmethod(control.kernel_range)
    stmt = staticmethod(control.stmt)
    unsupported = staticmethod(control.unsupported)

    @staticmethod
    def is_static(c):
        return c.__class__ is bool

    @staticmethod
    def name(value, hint):
        """x = value: the SSA name hint of a new buffer / value is 'x'."""
        if (getattr(value, "hint", 1) in (None, "shared", "fragment", "local")
                and getattr(value, "const", 1) is None):
            try:
                if value.owner is not None or value.block is not None:
                    value.hint = hint
            except AttributeError:
                pass
        return value

    @staticmethod
    def named(obj, names):
        """for i, j in T.Parallel(...) / with T.Kernel(...) as (bx, by):
        induction variable name hints."""
        if isinstance(obj, (control._Loop, control.Kernel)):
            obj._names = names
            if isinstance(obj, control.Kernel):
                obj.names = names
        return obj


HELPERS = _Helpers()


def _h(attr, node):
    return ast.copy_location(ast.Attribute(ast.Name(_HELPER, ast.Load()), attr,
                                           ast.Load()), node)


def _call(attr, args, node):
    return ast.copy_location(ast.Call(_h(attr, node), args, []), node)


def _lambda(expr):
    return ast.copy_location(ast.Lambda(
        ast.arguments(posonlyargs=[], args=[], vararg=None, kwonlyargs=[],
                      kw_defaults=[], kwarg=None, defaults=[]), expr), expr)


def _target_names(t):
    if isinstance(t, ast.Name):
        return (t.id,)
    if isinstance(t, (ast.Tuple, ast.List)) and all(isinstance(e, ast.Name) for e in t.elts):
        return tuple(e.id for e in t.elts)
    return None


def _is_call_of(node, attr):
    return (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
            and node.func.attr == attr)


class _Dynamic(ast.NodeTransformer):
    """In the scf.if copy of a branch: return / break / continue (outside
    nested loops and functions) cannot leave a region."""

    def __init__(self):
        self.loop_depth = 0

    def _stub(self, node, what):
        return ast.copy_location(ast.Expr(_call("unsupported", [
            ast.copy_location(ast.Constant(what), node)], node)), node)

    def visit_Return(self, node):
        return self._stub(node, "return")

    def visit_Break(self, node):
        return node if self.loop_depth else self._stub(node, "break")

    def visit_Continue(self, node):
        return node if self.loop_depth else self._stub(node, "continue")

    def _loop(self, node):
        self.loop_depth += 1
        self.generic_visit(node)
        self.loop_depth -= 1
        return node

    visit_For = visit_While = visit_AsyncFor = _loop

    def visit_FunctionDef(self, node):
        return node

    visit_AsyncFunctionDef = visit_Lambda = visit_ClassDef = visit_FunctionDef


class _Rewriter(ast.NodeTransformer):
    def __init__(self):
        self.counter = 0
        self.depth = 0

    def _tmp(self):
        self.counter += 1
        return f"__tile_t{self.counter}"

    # nested functions and classes keep their own semantics
    def visit_FunctionDef(self, node):
        if self.depth == 0:
            self.depth += 1
            self.generic_visit(node)
            self.depth -= 1
        return node

    def visit_AsyncFunctionDef(self, node):
        return node

    visit_ClassDef = visit_AsyncFunctionDef

    def visit_If(self, node):
        self.generic_visit(node)
        tmp = self._tmp()
        store = ast.copy_location(ast.Name(tmp, ast.Store()), node)
        load = ast.copy_location(ast.Name(tmp, ast.Load()), node)
        assign = ast.copy_location(ast.Assign([store], _call("cond", [node.test], node)), node)
        static_if = ast.copy_location(ast.If(load, node.body, node.orelse or []), node)
        dyn = [ast.copy_location(ast.With([ast.withitem(_call("then", [load], node), None)],
                                          _dynamic(node.body)), node)]
        if node.orelse:
            first = node.orelse[0]
            dyn.append(ast.copy_location(ast.With(
                [ast.withitem(_call("otherwise", [], first), None)],
                _dynamic(node.orelse)), first))
        test = _call("is_static", [load], node)
        return [assign, ast.copy_location(ast.If(test, [static_if], dyn), node)]

    def visit_IfExp(self, node):
        self.generic_visit(node)
        return _call("select", [node.test, _lambda(node.body), _lambda(node.orelse)], node)

    def visit_BoolOp(self, node):
        self.generic_visit(node)
        fn = "and_" if isinstance(node.op, ast.And) else "or_"
        expr = node.values[-1]
        for v in reversed(node.values[:-1]):
            expr = _call(fn, [v, _lambda(expr)], node)
        return expr

    def visit_UnaryOp(self, node):
        self.generic_visit(node)
        if isinstance(node.op, ast.Not):
            return _call("not_", [node.operand], node)
        return node

    def visit_Compare(self, node):
        self.generic_visit(node)
        if len(node.ops) == 1:
            return node
        # a < b < c: and_(a < (t := b), lambda: t < c), each operand once
        parts = []
        left = node.left
        for i, (op, right) in enumerate(zip(node.ops, node.comparators)):
            last = i == len(node.ops) - 1
            if not last and not isinstance(right, (ast.Name, ast.Constant)):
                tmp = self._tmp()
                bound = ast.copy_location(ast.NamedExpr(
                    ast.copy_location(ast.Name(tmp, ast.Store()), right), right), right)
                parts.append(ast.copy_location(ast.Compare(left, [op], [bound]), node))
                left = ast.copy_location(ast.Name(tmp, ast.Load()), right)
            else:
                parts.append(ast.copy_location(ast.Compare(left, [op], [right]), node))
                left = right
        expr = parts[-1]
        for p in reversed(parts[:-1]):
            expr = _call("and_", [p, _lambda(expr)], node)
        return expr

    def visit_For(self, node):
        pipelined = _is_call_of(node.iter, "Pipelined")
        self.generic_visit(node)
        it = node.iter
        if (isinstance(it, ast.Call) and isinstance(it.func, ast.Name)
                and it.func.id == "range"):
            it = ast.copy_location(ast.Call(_h("kernel_range", it), it.args, it.keywords), it)
        names = _target_names(node.target)
        if names:
            it = _call("named", [it, ast.copy_location(ast.Constant(names), it)], it)
        node.iter = it
        if pipelined:
            body = []
            for s in node.body:
                body.append(ast.copy_location(ast.Expr(_call("stmt", [], s)), s))
                body.append(s)
            node.body = body
        return node

    def visit_With(self, node):
        self.generic_visit(node)
        for item in node.items:
            names = _target_names(item.optional_vars) if item.optional_vars else None
            if names and _is_call_of(item.context_expr, "Kernel"):
                item.context_expr = _call("named", [
                    item.context_expr,
                    ast.copy_location(ast.Constant(names), item.context_expr)],
                    item.context_expr)
        return node

    def visit_Assign(self, node):
        self.generic_visit(node)
        if (len(node.targets) == 1 and isinstance(node.targets[0], ast.Name)
                and isinstance(node.value, ast.Call)):
            node.value = _call("name", [node.value, ast.copy_location(
                ast.Constant(node.targets[0].id), node)], node.value)
        return node


def _dynamic(body):
    body = copy.deepcopy(body)
    out = []
    fixer = _Dynamic()
    for s in body:
        r = fixer.visit(s)
        out.extend(r if isinstance(r, list) else [r])
    return out


def _find_code(code, name):
    for c in code.co_consts:
        if isinstance(c, types.CodeType) and c.co_name == name:
            return c
    return None


@functools.lru_cache(maxsize=256)
def _compiled(code, source, first_line, filename):
    tree = ast.parse(source)
    fdef = tree.body[0]
    if not isinstance(fdef, ast.FunctionDef):
        return None
    fdef.decorator_list = []
    fdef = _Rewriter().visit(fdef)
    ast.increment_lineno(fdef, first_line - 1)
    freevars = list(code.co_freevars)
    wrapper = ast.FunctionDef(
        name="__tile_make",
        args=ast.arguments(posonlyargs=[], args=[ast.arg(n) for n in [_HELPER] + freevars],
                           vararg=None, kwonlyargs=[], kw_defaults=[], kwarg=None,
                           defaults=[]),
        body=[fdef, ast.Return(ast.Name(fdef.name, ast.Load()))],
        decorator_list=[], returns=None)
    if "type_params" in ast.FunctionDef._fields:
        wrapper.type_params = []
    module = ast.Module([wrapper], type_ignores=[])
    ast.fix_missing_locations(module)
    mod_code = compile(module, filename, "exec")
    make = _find_code(mod_code, "__tile_make")
    return _find_code(make, fdef.name)


def rewrite(fn):
    """fn with its body rewritten (see the module docstring), sharing fn's
    globals, closure cells, defaults and annotations; fn itself when its
    source cannot be read."""
    if getattr(fn, "__tile_rewritten__", False):
        return fn
    try:
        lines, first = inspect.getsourcelines(fn)
    except (OSError, TypeError):
        return fn
    source = textwrap.dedent("".join(lines))
    code = fn.__code__
    inner = _compiled(code, source, first, code.co_filename)
    if inner is None:
        return fn
    cells = dict(zip(code.co_freevars, fn.__closure__ or ()))
    closure = []
    for name in inner.co_freevars:
        if name == _HELPER:
            closure.append(types.CellType(HELPERS))
        elif name in cells:
            closure.append(cells[name])
        else:  # pragma: no cover - the rewrite adds no other free names
            return fn
    new = types.FunctionType(inner, fn.__globals__, fn.__name__, fn.__defaults__,
                             tuple(closure))
    new.__kwdefaults__ = fn.__kwdefaults__
    new.__annotations__ = dict(getattr(fn, "__annotations__", {}))
    new.__qualname__ = fn.__qualname__
    new.__module__ = fn.__module__
    new.__doc__ = fn.__doc__
    new.__wrapped__ = fn
    new.__tile_rewritten__ = True
    return new
