"""jinja2's immutable sandbox, bounded (:func:`_sandbox_class`): no operation, call, filter (:func:`_bounded_filter`) or
join that would make a string, sequence or format width of more than :data:`MAX_OUTPUT` characters or items, or an
integer of more than :data:`MAX_INT_BITS` bits; past a bound, :class:`TemplateLimit`. jinja2 is imported on first use
(only by a command that renders).
"""

from __future__ import annotations

import functools
import re
import types
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import jinja2.sandbox

MAX_OUTPUT = 16 * 1024 * 1024  # characters of output; also the largest string, sequence or width one step may make
MAX_INT_BITS = 1 << 16  # the largest integer a template may compute (~19,700 digits)


class TemplateLimit(Exception):
    """A bound of :class:`_Sandbox` reached: the message says which (shown after ``path:line:``)."""


_METHODS = (types.MethodType, types.BuiltinMethodType)


@functools.cache
def _sandbox_class() -> type[jinja2.sandbox.ImmutableSandboxedEnvironment]:
    """:class:`_Sandbox`, made on first use (jinja2 is imported only by a command that renders)."""
    from jinja2 import nodes
    from jinja2.compiler import CodeGenerator, Frame
    from jinja2.runtime import Context
    from jinja2.sandbox import ImmutableSandboxedEnvironment

    class BoundedCodeGenerator(CodeGenerator):
        def visit_Concat(self, node: nodes.Concat, frame: Frame) -> None:
            """``a ~ b``, through :func:`_bounded_join` (jinja2 joins in place, out of the sandbox's reach)."""
            self.write("environment.bounded_join((")
            for arg in node.nodes:
                self.visit(arg, frame)
                self.write(", ")
            self.write("), ")
            if frame.eval_ctx.volatile:
                self.write("(markup_join if context.eval_ctx.volatile else str_join))")
            else:
                self.write("markup_join)" if frame.eval_ctx.autoescape else "str_join)")

    class Sandbox(ImmutableSandboxedEnvironment):
        """jinja2's immutable sandbox, where no operator, call, filter or join makes a value over the bounds."""

        code_generator_class = BoundedCodeGenerator
        intercepted_binops = frozenset({"*", "**", "+", "%"})
        concat = staticmethod(lambda parts: _bounded_join(parts, "".join))
        bounded_join = staticmethod(_bounded_join)

        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            self.safe_attributes: dict[tuple[type, str], bool] = {}

        def is_safe_attribute(self, obj: Any, attr: str, value: Any) -> bool:
            """jinja2's answer, remembered per (type, attribute), on which alone it depends: a report of 10,000
            phases asks it half a million times about ~50 attributes of ~10 types (an object whose
            ``__class__`` is not its type is asked afresh every time)."""
            kind = type(obj)
            key = (kind, attr)
            known = self.safe_attributes.get(key)
            if known is None:
                known = super().is_safe_attribute(obj, attr, value)
                if obj.__class__ is kind and len(self.safe_attributes) < 4096:
                    self.safe_attributes[key] = known
            return known

        def getattr(self, obj: Any, attribute: str) -> Any:
            """jinja2's, without its ``str.format`` check for a value that is no method (the check's own first test)."""
            try:
                value = getattr(obj, attribute)
            except AttributeError:
                return super().getattr(obj, attribute)  # an item of that name, or undefined
            if isinstance(value, _METHODS):
                return super().getattr(obj, attribute)
            if self.is_safe_attribute(obj, attribute, value):
                return value
            return self.unsafe_undefined(obj, attribute)

        def call_binop(self, context: Context, operator: str, left: Any, right: Any) -> Any:
            _check_binop(operator, left, right)
            return _checked(self.binop_table[operator](left, right))

        def call(__self, __context: Context, __obj: Any, *args: Any, **kwargs: Any) -> Any:
            args = _check_call(__obj, args, kwargs)
            return _checked(super().call(__context, __obj, *args, **kwargs))

        def wrap_str_format(self, value: Any) -> Callable[..., str] | None:
            wrapper = super().wrap_str_format(value)
            if wrapper is None:
                return None
            text = str(value.__self__)
            checked = wrapper

            def bounded(*args: Any, **kwargs: Any) -> str:
                _check_format(text, (*args, *kwargs.values()), braces=True)
                return str(_checked(checked(*args, **kwargs)))

            return bounded

    return Sandbox


def _too_large(what: str) -> TemplateLimit:
    limit = f"the limit is {MAX_OUTPUT} characters or items, {MAX_INT_BITS}-bit numbers"
    return TemplateLimit(f"too large: {what} ({limit})")


def _checked(value: Any) -> Any:
    """``value``, once it is within the bounds."""
    if isinstance(value, (str, bytes, list, tuple, dict, set)) and len(value) > MAX_OUTPUT:
        raise _too_large(f"a value of {len(value)} characters or items")
    if isinstance(value, int) and value.bit_length() > MAX_INT_BITS:
        raise _too_large(f"a {value.bit_length()}-bit number")
    return value


def _bounded_join(parts: tuple[Any, ...] | list[Any], join: Callable[[Any], str]) -> str:
    """``join(parts)`` (``~``, a block's text), refused when the strings among ``parts`` already make too much."""
    total = sum(len(p) for p in parts if isinstance(p, str))
    if total > MAX_OUTPUT:
        raise _too_large(f"joining {total} characters")
    return str(_checked(join(parts)))


_SEQUENCE = (str, bytes, list, tuple)


def _check_binop(operator: str, left: Any, right: Any) -> None:
    """Refuse ``left operator right`` before it is computed when its result would be over the bounds."""
    ints = isinstance(left, int) and isinstance(right, int)
    if operator == "**" and ints and right > 0 and abs(left) > 1:
        if abs(left).bit_length() * right > MAX_INT_BITS:
            raise _too_large(f"{left} ** {right}")
    elif operator == "*" and ints:
        if left.bit_length() + right.bit_length() > MAX_INT_BITS:
            raise _too_large(f"a product of {left.bit_length()}- and {right.bit_length()}-bit numbers")
    elif operator == "*" and isinstance(left, _SEQUENCE) != isinstance(right, _SEQUENCE):
        seq, times = (left, right) if isinstance(left, _SEQUENCE) else (right, left)
        if isinstance(times, int) and len(seq) * times > MAX_OUTPUT:
            raise _too_large(f"{len(seq)} characters or items * {times}")
    elif operator == "+" and isinstance(left, _SEQUENCE) and isinstance(right, _SEQUENCE):
        if len(left) + len(right) > MAX_OUTPUT:
            raise _too_large(f"{len(left)} + {len(right)} characters or items")
    elif operator == "%" and isinstance(left, str):
        _check_format(left, right if isinstance(right, tuple) else (right,), braces=False)


# A ``%`` conversion's flags, width and precision; a ``{}`` field's format spec (after the ``:``).
_PERCENT_SPEC = re.compile(r"%(?:\([^)]*\))?[#0\- +]*(\*|\d+)?(?:\.(\*|\d+))?")
_BRACE_FIELD = re.compile(r"\{[^{}]*(?:\{[^{}]*\}[^{}]*)*\}")


def _check_format(text: str, args: tuple[Any, ...], *, braces: bool) -> None:
    """Refuse a format string whose widths or precisions (written, or ``*``/nested fields taken from ``args``)
    would make more than :data:`MAX_OUTPUT` characters."""
    fields = _BRACE_FIELD.findall(text) if braces else [m.group(0) for m in _PERCENT_SPEC.finditer(text)]
    for field in fields:
        spec = field.partition(":")[2] if braces else field
        if any(int(n) > MAX_OUTPUT for n in re.findall(r"\d+", spec)):
            raise _too_large(f"the format {field!r}")
        if "*" in spec if not braces else "{" in spec:
            _check_ints(args, {})


def _check_ints(args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
    for value in (*args, *kwargs.values()):
        if isinstance(value, int) and not isinstance(value, bool) and abs(value) > MAX_OUTPUT:
            raise _too_large(f"an argument of {value}")


_STR_WIDTHS = frozenset({"ljust", "rjust", "center", "zfill", "expandtabs"})


def _check_call(obj: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> tuple[Any, ...]:
    """Refuse a call of a template that would make a value over the bounds; its arguments (a join's items listed)."""
    owner = getattr(obj, "__self__", None)
    name = getattr(obj, "__name__", "")
    if isinstance(owner, str):
        if name in _STR_WIDTHS:
            _check_ints(args, kwargs)
            size = kwargs.get("tabsize", args[0] if args else 8) if name == "expandtabs" else 0
            if isinstance(size, int) and len(owner) + owner.count("\t") * size > MAX_OUTPUT:  # N per tab
                raise _too_large(f"expanding {owner.count(chr(9))} tabs to {size} columns")
        elif name == "replace" and len(args) >= 2:
            _check_replace(owner, *args[:3])
        elif name == "join" and args:
            items = list(args[0])
            _check_join(owner, items)
            return (items, *args[1:])
    elif name == "generate_lorem_ipsum":
        n, big = kwargs.get("n", args[0] if args else 5), kwargs.get("max", args[3] if len(args) > 3 else 100)
        if isinstance(n, int) and isinstance(big, int) and n * big * 8 > MAX_OUTPUT:
            raise _too_large(f"lipsum of {n} paragraphs of up to {big} words")
    return args


def _check_replace(text: Any, old: Any, new: Any, count: Any = None) -> None:
    if not (isinstance(text, str) and isinstance(old, str) and isinstance(new, str)):
        return
    hits = len(text) + 1 if old == "" else text.count(old)
    if isinstance(count, int) and count >= 0:
        hits = min(hits, count)
    if len(text) + hits * (len(new) - len(old)) > MAX_OUTPUT:
        raise _too_large(f"replacing {hits} times with {len(new)} characters")


def _check_join(sep: str, items: list[Any]) -> None:
    total = len(sep) * max(len(items) - 1, 0) + sum(len(x) for x in items if isinstance(x, str))
    if total > MAX_OUTPUT:
        raise _too_large(f"joining {total} characters")


def _bounded_filter(name: str, f: Callable[..., Any]) -> Callable[..., Any]:
    """Filter ``f`` refusing what would make a value over the bounds: an integer argument over
    :data:`MAX_OUTPUT` (a width, a count; the filtered value itself may be any number)."""
    skip = 1 if getattr(f, "jinja_pass_arg", None) is not None else 0  # the context ahead of the value

    @functools.wraps(f)
    def bounded(*args: Any, **kwargs: Any) -> Any:
        value, rest = (args[skip], args[skip + 1 :]) if len(args) > skip else (None, ())
        if name == "format" and isinstance(value, str):
            _check_format(value, (*rest, *kwargs.values()), braces=False)
        else:
            _check_ints(rest, kwargs)
        if name == "replace" and len(rest) >= 2:
            _check_replace(str(value), *rest[:3])
        elif name == "join" and value is not None:
            items = list(value)
            _check_join(str(rest[0]) if rest else str(kwargs.get("d", "")), items)
            args = (*args[:skip], items, *rest)
        return _checked(f(*args, **kwargs))

    return bounded
