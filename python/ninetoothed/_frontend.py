"""The frontend: an application function traced into the C++ kernel IR (the tracer; parameters are in
_parameters.py, Python built-ins on blocks in _python_builtins.py, the thread's tracing state in _tracing.py).

The application's source is read with `inspect` and walked with `ast`. Each
statement is interpreted once, with blocks (`_core.Block`) standing for the
values a program computes: operators and `ntl` calls build IR nodes, and the
statements that change state (stores to parameters, assignments to values
carried across loop iterations, `for`, `if`) are recorded with the
`_core.Builder`. Python values (ints, Symbols, tuples, dtypes) are computed
at trace time. Calls of other plain Python functions are inlined; a callee's
assignment to one of its parameters writes back to the caller's variable.
Anything else is a SyntaxError naming the user's file and line.
"""

import ast
import builtins
import functools
import inspect
import operator
import textwrap
import types

from ninetoothed import _core, _language_meta, _tracing
from ninetoothed._parameters import Parameter, _Source
from ninetoothed._python_builtins import BUILTINS_ON_BLOCKS
from ninetoothed._tracing import block_of as _block
from ninetoothed._tracing import is_block

_BINARY = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
    ast.FloorDiv: operator.floordiv,
    ast.Mod: operator.mod,
    ast.Pow: operator.pow,
    ast.BitAnd: operator.and_,
    ast.BitOr: operator.or_,
    ast.BitXor: operator.xor,
    ast.LShift: operator.lshift,
    ast.RShift: operator.rshift,
}

_COMPARE = {
    ast.Lt: operator.lt,
    ast.LtE: operator.le,
    ast.Gt: operator.gt,
    ast.GtE: operator.ge,
    ast.Eq: operator.eq,
    ast.NotEq: operator.ne,
}


def _is(a, b):
    # Element types come back from the core as new objects: `x.dtype is ntl.float16` compares them.
    if isinstance(a, _core.DType) and isinstance(b, _core.DType):
        return a == b
    return a is b


# Decided while tracing, on trace-time values (`if bias is None`, `if dtype in (...)`).
_TRACE_TIME_COMPARE = {
    ast.Is: _is,
    ast.IsNot: lambda a, b: not _is(a, b),
    ast.In: lambda a, b: a in b,
    ast.NotIn: lambda a, b: a not in b,
}


class _Local:
    """A name whose value changes across loop iterations or branches: an IR local."""

    def __init__(self, id):
        self.id = id


class _WriteBack:
    """A callee's parameter that aliases a caller's variable."""

    def __init__(self, frame, name):
        self.frame = frame
        self.name = name


class _Frame:
    def __init__(self, function, filename, first_line, globals, closure):
        self.function = function
        self.filename = filename
        self.first_line = first_line
        self.globals = globals
        self.closure = closure
        self.vars = {}


class _Return(Exception):
    def __init__(self, value):
        self.value = value


@functools.lru_cache(maxsize=None)
def _parse(code):
    """The function's AST, its file and the line its source starts at."""
    function = _FUNCTIONS[code]
    try:
        lines, first_line = inspect.getsourcelines(function)
    except (OSError, TypeError) as error:
        raise SyntaxError(f"cannot read the source of {function.__qualname__}: {error}") from None
    tree = ast.parse(textwrap.dedent("".join(lines)))
    node = tree.body[0]
    if not isinstance(node, ast.FunctionDef):
        raise SyntaxError(f"{function.__qualname__} is not defined with `def`")
    return node, inspect.getsourcefile(function) or function.__code__.co_filename, first_line


_FUNCTIONS = {}


def _function_ast(function):
    _FUNCTIONS[function.__code__] = function
    return _parse(function.__code__)


class Tracer:
    """Interprets one application (and the helpers it calls) into a Builder."""

    def __init__(self, builder):
        self.builder = builder
        self.frame = None
        self.node = None
        self._counter = 0

    # --- entry ----------------------------------------------------------------

    def trace(self, application, arguments):
        """Runs `application` with `arguments` (Parameters, blocks, values)."""
        frame, body = self._enter(application, arguments, write_backs=None)
        previous, self.frame = self.frame, frame
        try:
            with _tracing.tracing(self.builder, self):
                self._statements(body, top_level=True)
        except _Return:
            pass
        finally:
            self.frame = previous

    def _enter(self, function, arguments, write_backs):
        node, filename, first_line = _function_ast(function)
        closure = {}
        if function.__closure__:
            for name, cell in zip(function.__code__.co_freevars, function.__closure__):
                try:
                    closure[name] = cell.cell_contents
                except ValueError:
                    pass
        frame = _Frame(function, filename, first_line, function.__globals__, closure)
        parameters = node.args
        if parameters.vararg or parameters.kwarg or parameters.kwonlyargs or parameters.posonlyargs:
            self._error(node, "kernel functions take plain positional parameters only")
        names = [a.arg for a in parameters.args]
        defaults = list(function.__defaults__ or ())
        if len(arguments) > len(names) or len(arguments) < len(names) - len(defaults):
            raise TypeError(
                f"{function.__qualname__}() takes {len(names)} arguments, got {len(arguments)}"
            )
        values = list(arguments) + defaults[len(defaults) - (len(names) - len(arguments)) :]
        for i, (name, value) in enumerate(zip(names, values)):
            if write_backs is not None and i < len(write_backs) and write_backs[i] is not None:
                frame.vars[name] = write_backs[i]
            else:
                frame.vars[name] = value
        return frame, node.body

    # --- errors ---------------------------------------------------------------

    def _location(self, node):
        line = self.frame.first_line + getattr(node, "lineno", 1) - 1
        return self.frame.filename, line

    def _error(self, node, message, kind=SyntaxError):
        filename, line = self._location(node) if self.frame else ("<unknown>", 0)
        if kind is SyntaxError:
            error = SyntaxError(f"{message} ({filename}, line {line})")
            error.filename, error.lineno = filename, line
            error.ninetoothed_located = True
            raise error
        error = kind(f"{filename}:{line}: {message}")
        error.ninetoothed_located = True
        raise error

    def _located(self, node, error):
        """`error` with the user's file and line added (once)."""
        if getattr(error, "ninetoothed_located", False):
            return error
        filename, line = self._location(node)
        if isinstance(error, SyntaxError):
            located = SyntaxError(f"{error.msg} ({filename}, line {line})")
            located.filename, located.lineno = filename, line
        else:
            try:
                located = type(error)(f"{filename}:{line}: {error}")
            except Exception:  # noqa: BLE001 - exotic exception types keep their message
                return error
        located.ninetoothed_located = True
        return located

    # --- names ----------------------------------------------------------------

    def _read(self, frame, name, node):
        if name in frame.vars:
            binding = frame.vars[name]
            if isinstance(binding, _Local):
                return self.builder.local_ref(binding.id)
            if isinstance(binding, _WriteBack):
                return self._read(binding.frame, binding.name, node)
            return binding
        if name in frame.closure:
            return frame.closure[name]
        if name in frame.globals:
            return frame.globals[name]
        if name in BUILTINS_ON_BLOCKS:
            return BUILTINS_ON_BLOCKS[name]
        if hasattr(builtins, name):
            return getattr(builtins, name)
        self._error(node, f"name '{name}' is not defined", NameError)

    def _assign(self, frame, name, value, node):
        binding = frame.vars.get(name)
        if isinstance(binding, _WriteBack):
            self._assign(binding.frame, binding.name, value, node)
        elif isinstance(binding, Parameter):
            self.builder.store(binding._index, [], _block(value))
        elif isinstance(binding, _Local):
            self.builder.assign(binding.id, _block(value))
        elif is_block(value):
            frame.vars[name] = self.builder.let(_block(value))
        else:
            frame.vars[name] = value

    def _make_local(self, frame, name):
        """Turns `name` into a mutable IR local (a value changed in a loop or branch)."""
        binding = frame.vars.get(name)
        if isinstance(binding, _WriteBack):
            self._make_local(binding.frame, binding.name)
        elif binding is None or isinstance(binding, (Parameter, _Local)):
            return
        elif is_block(binding) or isinstance(binding, (int, float)) or isinstance(binding, _core.Symbol):
            frame.vars[name] = _Local(self.builder.declare_local(_block(binding)))

    # --- statements -----------------------------------------------------------

    def _statements(self, body, top_level=False):
        for statement in body:
            try:
                self._statement(statement)
            except (_Return, KeyboardInterrupt):
                raise
            except Exception as error:  # noqa: BLE001 - re-raised with the user's line
                located = self._located(statement, error)
                if located is error:
                    raise
                raise located from None

    def _statement(self, node):
        method = getattr(self, f"_stmt_{type(node).__name__}", None)
        if method is None:
            self._error(node, f"'{type(node).__name__}' statements are not supported in kernels")
        method(node)

    def _stmt_Expr(self, node):
        self._expr(node.value)

    def _stmt_Pass(self, node):
        pass

    def _stmt_Return(self, node):
        raise _Return(self._expr(node.value) if node.value is not None else None)

    def _stmt_Assign(self, node):
        value = self._expr(node.value)
        for target in node.targets:
            self._store_target(target, value)

    def _stmt_AnnAssign(self, node):
        if node.value is not None:
            self._store_target(node.target, self._expr(node.value))

    def _stmt_AugAssign(self, node):
        op = _BINARY.get(type(node.op))
        if op is None:
            self._error(node, f"operator {type(node.op).__name__} is not supported")
        current = self._expr(_as_load(node.target))
        self._store_target(node.target, op(_block(current), _block(self._expr(node.value))))

    def _store_target(self, target, value):
        if isinstance(target, ast.Name):
            self._assign(self.frame, target.id, value, target)
        elif isinstance(target, (ast.Tuple, ast.List)):
            values = list(value)
            if len(values) != len(target.elts):
                self._error(target, f"cannot unpack {len(values)} values into {len(target.elts)} names", ValueError)
            for t, v in zip(target.elts, values):
                self._store_target(t, v)
        elif isinstance(target, ast.Subscript):
            container = self._expr(target.value)
            if isinstance(container, _Source):
                container[self._expr(target.slice)] = value
                return
            if not isinstance(container, Parameter):
                self._error(target, "only kernel parameters and their sources can be assigned with []")
            container._store(self._expr(target.slice), value)
        else:
            self._error(target, f"cannot assign to {type(target).__name__}")

    def _stmt_For(self, node):
        if node.orelse:
            self._error(node, "for ... else is not supported in kernels")
        if not isinstance(node.target, ast.Name):
            self._error(node.target, "the loop variable must be a name")
        iterator = node.iter
        if isinstance(iterator, ast.Call) and self._expr(iterator.func) is not builtins.range:
            # ntl.range(...) / ntl.static_range(...) (Triton's loop iterables)
            iterable = self._expr(iterator)
            if isinstance(iterable, _language_meta.static_range):
                self._unrolled_for(node, iterable)
                return
            if isinstance(iterable, _language_meta.range):
                self._runtime_for(node, iterable.start, iterable.end, iterable.step)
                return
        if not (
            isinstance(iterator, ast.Call)
            and self._expr(iterator.func) is builtins.range
            and not iterator.keywords
            and 1 <= len(iterator.args) <= 3
        ):
            self._error(node.iter, "kernels loop only over range(...), ntl.range(...) or ntl.static_range(...)")
        bounds = [self._expr(a) for a in iterator.args]
        start, stop, step = (0, bounds[0], 1) if len(bounds) == 1 else (*bounds, 1)[:3]
        self._runtime_for(node, start, stop, step)

    def _unrolled_for(self, node, values):
        """A static_range loop: the body traced once per value, the loop variable an int."""
        for value in values:
            self.frame.vars[node.target.id] = value
            self._statements(node.body)

    def _runtime_for(self, node, start, stop, step):
        for name in self._assigned_names(node.body):
            self._make_local(self.frame, name)
        self._counter += 1
        loop_var = f"{node.target.id}{self._counter}"
        self.builder.begin_for(loop_var, _block(start), _block(stop), _block(step))
        saved = dict(self.frame.vars)
        self.frame.vars[node.target.id] = _core.block_loop_var(loop_var)
        self._statements(node.body)
        self.builder.end_for()
        self._restore_scope(saved)

    def _stmt_If(self, node):
        condition = self._expr(node.test)
        if not is_block(condition):
            if isinstance(condition, _core.Symbol):
                self._error(node.test, "a symbolic condition cannot be decided while tracing", TypeError)
            self._statements(node.body if condition else node.orelse)
            return
        for name in self._assigned_names(node.body) | self._assigned_names(node.orelse):
            self._make_local(self.frame, name)
        self.builder.begin_if(_block(condition))
        saved = dict(self.frame.vars)
        self._statements(node.body)
        self._restore_scope(saved)
        if node.orelse:
            self.builder.begin_else()
            self._statements(node.orelse)
            self._restore_scope(saved)
        self.builder.end_if()

    def _assigned_names(self, body):
        """Names `body` may assign: targets, and variables passed to helpers (write-back), in
        the order they first appear (a dict, not a set: the generated code must not depend on
        the process's string-hash seed, or the disk cache would miss in every new process)."""
        names = {}
        for statement in body:
            for node in ast.walk(statement):
                if isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign)):
                    targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                    for target in targets:
                        names.update(dict.fromkeys(n.id for n in ast.walk(target) if isinstance(n, ast.Name)))
                elif isinstance(node, ast.Call) and _tracing.is_user_function(self._resolve_static(node.func)):
                    names.update(dict.fromkeys(a.id for a in node.args if isinstance(a, ast.Name)))
        return names

    def _resolve_static(self, node):
        """What a call's function names, when that needs no tracing (else None)."""
        if isinstance(node, ast.Name):
            frame = self.frame
            for scope in (frame.vars, frame.closure, frame.globals):
                if node.id in scope:
                    return scope[node.id]
            return None
        if isinstance(node, ast.Attribute):
            base = self._resolve_static(node.value)
            if isinstance(base, (types.ModuleType, type)) or _tracing.is_user_function(base):
                return getattr(base, node.attr, None)
            if base is not None and not is_block(base):
                return getattr(base, node.attr, None)
        return None

    def _restore_scope(self, saved):
        """Names first bound inside a loop or runtime branch end with it."""
        self.frame.vars = {k: v for k, v in self.frame.vars.items() if k in saved}

    # --- expressions ----------------------------------------------------------

    def _expr(self, node):
        method = getattr(self, f"_expr_{type(node).__name__}", None)
        if method is None:
            self._error(node, f"'{type(node).__name__}' expressions are not supported in kernels")
        return method(node)

    def _expr_Constant(self, node):
        return node.value

    def _expr_Name(self, node):
        return self._read(self.frame, node.id, node)

    def _expr_Attribute(self, node):
        value = self._expr(node.value)
        try:
            return getattr(value, node.attr)
        except AttributeError:
            self._error(node, f"{type(value).__name__} has no attribute '{node.attr}'", AttributeError)

    def _expr_Tuple(self, node):
        return tuple(self._expr(e) for e in node.elts)

    def _expr_List(self, node):
        return [self._expr(e) for e in node.elts]

    def _expr_Slice(self, node):
        part = lambda n: None if n is None else self._expr(n)  # noqa: E731
        return slice(part(node.lower), part(node.upper), part(node.step))

    def _expr_Subscript(self, node):
        return self._expr(node.value)[self._expr(node.slice)]

    def _expr_BinOp(self, node):
        op = _BINARY.get(type(node.op))
        if op is None:
            self._error(node, f"operator {type(node.op).__name__} is not supported")
        left, right = self._expr(node.left), self._expr(node.right)
        if is_block(left) or is_block(right):
            left, right = _block(left), _block(right)
        return op(left, right)

    def _expr_UnaryOp(self, node):
        value = self._expr(node.operand)
        if isinstance(node.op, ast.Not):
            return _core.block_unary("not", _block(value)) if is_block(value) else not value
        if isinstance(node.op, ast.USub):
            return -_block(value)
        if isinstance(node.op, ast.UAdd):
            return +_block(value)
        return ~_block(value)

    def _expr_Compare(self, node):
        result = None
        left = self._expr(node.left)
        for op_node, right_node in zip(node.ops, node.comparators):
            right = self._expr(right_node)
            trace_time = _TRACE_TIME_COMPARE.get(type(op_node))
            if trace_time is not None:
                value = trace_time(left, right)
                result = value if result is None else _logical("and", result, value)
                left = right
                continue
            op = _COMPARE.get(type(op_node))
            if op is None:
                self._error(node, f"comparison {type(op_node).__name__} is not supported")
            a, b = (_block(left), _block(right)) if is_block(left) or is_block(right) else (left, right)
            value = op(a, b)
            result = value if result is None else _logical("and", result, value)
            left = right
        return result

    def _expr_BoolOp(self, node):
        name = "and" if isinstance(node.op, ast.And) else "or"
        result = self._expr(node.values[0])
        for value_node in node.values[1:]:
            if not is_block(result):
                if (name == "and") != bool(result):
                    return result
                result = self._expr(value_node)
            else:
                result = _logical(name, result, self._expr(value_node))
        return result

    def _expr_IfExp(self, node):
        condition = self._expr(node.test)
        if is_block(condition):
            return _core.block_where(_block(condition), _block(self._expr(node.body)), _block(self._expr(node.orelse)))
        return self._expr(node.body) if condition else self._expr(node.orelse)

    def _expr_Call(self, node):
        function = self._expr(node.func)
        arguments = []
        for a in node.args:
            if isinstance(a, ast.Starred):
                arguments.extend(self._expr(a.value))
            else:
                arguments.append(self._expr(a))
        keywords = {}
        for k in node.keywords:
            if k.arg is None:
                keywords.update(self._expr(k.value))
            else:
                keywords[k.arg] = self._expr(k.value)
        if _tracing.is_user_function(function):
            if keywords:
                self._error(node, "calls of helper functions take positional arguments only")
            return self._inline(function, arguments, node)
        if function is builtins.range:
            self._error(node, "range() is only allowed as the iterable of a for loop")
        return function(*arguments, **keywords)

    def _inline(self, function, arguments, node):
        write_backs = [
            _WriteBack(self.frame, a.id) if isinstance(a, ast.Name) else None for a in node.args
        ]
        if any(isinstance(a, ast.Starred) for a in node.args):
            write_backs = None
        return self._run_function(function, arguments, write_backs)

    def _run_function(self, function, arguments, write_backs):
        """Traces the body of a plain Python function in a frame of its own; its return value."""
        caller = self.frame
        frame, body = self._enter(function, arguments, write_backs)
        self.frame = frame
        try:
            self._statements(body)
        except _Return as returned:
            return returned.value
        finally:
            self.frame = caller
        return None


def _logical(name, a, b):
    if is_block(a) or is_block(b):
        return _core.block_binary(name, _block(a), _block(b))
    return (a and b) if name == "and" else (a or b)


def _as_load(target):
    """The expression reading what `target` names."""
    loaded = ast.fix_missing_locations(ast.copy_location(_copy_as_load(target), target))
    return loaded


def _copy_as_load(node):
    if isinstance(node, ast.Name):
        return ast.Name(id=node.id, ctx=ast.Load(), lineno=node.lineno, col_offset=node.col_offset)
    if isinstance(node, ast.Subscript):
        return ast.Subscript(
            value=node.value, slice=node.slice, ctx=ast.Load(), lineno=node.lineno, col_offset=node.col_offset
        )
    if isinstance(node, ast.Attribute):
        return ast.Attribute(
            value=node.value, attr=node.attr, ctx=ast.Load(), lineno=node.lineno, col_offset=node.col_offset
        )
    return node


