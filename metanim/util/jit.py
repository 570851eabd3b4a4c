"""numba's `njit`, deferred: a kernel module imports no numba until a kernel runs compiled.

`@njit(...)` here returns a `Kernel`: calling it compiles the function with numba's
`njit` and the same options on the first call (or loads it from numba's on-disk cache)
and runs it; `kernel.py_func` is the plain function. A kernel may call another `Kernel`
from inside compiled code: numba types it as the dispatcher it stands for. So
`import metanim`, `metanim --help` and every command that runs no kernel never import
numba (0.3 s), and one that runs a few pays only for those (`docs/benchmarks.md`,
"Start-up").

`interpreted(kernel)` is the same function run by Python, every kernel it calls too:
a small table costs less interpreted than numba takes to compile it, or to load it from
its cache, in a fresh process. `run` and `Tiered` call it as numba would run it: NumPy's
fixed-width integers wrap around there too, silently (`np.errstate`).
"""

from __future__ import annotations

import sys
import types
from collections.abc import Callable
from typing import Any

import numpy as np

__all__ = ["INTERPRET_WORK", "Kernel", "Tiered", "interpreted", "load_numba", "njit", "run"]

#: Successor visits up to which a table is cheaper run by Python than compiled, or
#: loaded from numba's cache, in a fresh process: a few hundredths of a second
#: interpreted, where numba's first use costs half a second and more (importing it,
#: loading its cache). Each table scales it by what one of its steps costs in Python.
INTERPRET_WORK = 50_000


class Kernel:
    """A function compiled by numba on its first call (`njit` with `options`)."""

    def __init__(self, py_func: Callable[..., Any], options: dict[str, Any]) -> None:
        self.py_func = py_func
        self.options = options
        self._compiled: Any = None
        self.__name__ = py_func.__name__
        self.__qualname__ = py_func.__qualname__
        self.__doc__ = py_func.__doc__
        self.__wrapped__ = py_func

    @property
    def compiled(self) -> Any:
        """The numba dispatcher (made on first use; it compiles per signature on call)."""
        if self._compiled is None:
            numba = load_numba()
            self._compiled = numba.njit(**self.options)(self.py_func)
        return self._compiled

    def __call__(self, *args: Any) -> Any:
        return self.compiled(*args)

    def __repr__(self) -> str:
        return f"<Kernel {self.__qualname__} ({'compiled' if self._compiled else 'deferred'})>"


def run(kernel: Kernel, *args: Any, compiled: bool) -> Any:
    """`kernel(*args)` compiled, or run by Python (`interpreted`)."""
    if compiled:
        return kernel(*args)
    with np.errstate(over="ignore"):  # fixed-width integers wrap, as in numba
        return interpreted(kernel)(*args)


class Tiered:
    """A kernel run by Python for its first `calls` calls, compiled after: a process
    that asks a few small queries never loads numba, one that asks many pays for it
    once, when the interpreted calls would start to cost more. In a process that has
    loaded numba already (another kernel ran compiled) it runs compiled from the start:
    what is left to pay is this kernel's own compile, or its load from numba's cache."""

    __slots__ = ("_left", "_plain", "kernel")

    def __init__(self, kernel: Kernel, calls: int) -> None:
        self.kernel = kernel
        self._left = calls
        self._plain = interpreted(kernel)

    def __call__(self, *args: Any) -> Any:
        if self._left > 0 and "numba" not in sys.modules:
            self._left -= 1
            with np.errstate(over="ignore"):  # fixed-width integers wrap, as in numba
                return self._plain(*args)
        return self.kernel.compiled(*args)


def njit(*args: Any, **options: Any) -> Any:
    """`numba.njit`, deferred to the first call: `@njit` or `@njit(cache=True, ...)`."""
    if args and callable(args[0]) and not options:
        return Kernel(args[0], {})
    if args:
        raise TypeError("njit takes keyword options only (signatures: use numba directly)")
    return lambda fn: Kernel(fn, options)


_REGISTERED = False


def load_numba() -> Any:
    """numba, with `Kernel` known to its type inference (once per process): a module
    compiling with numba directly whose functions call kernels imports it this way."""
    global _REGISTERED
    import numba

    if not _REGISTERED:
        from numba.extending import typeof_impl

        @typeof_impl.register(Kernel)
        def _typeof_kernel(value: Kernel, context: Any) -> Any:
            return typeof_impl(value.compiled, context)

        _REGISTERED = True
    return numba


def interpreted(kernel: Kernel | Callable[..., Any]) -> Callable[..., Any]:
    """`kernel`'s plain function with every `Kernel` it reaches through its module's
    globals replaced by its own plain function, recursively: nothing compiles."""
    fn = kernel.py_func if isinstance(kernel, Kernel) else kernel
    found = _INTERPRETED.get(fn)
    if found is None:
        found = _INTERPRETED[fn] = _plain(fn, {})
    return found


#: Plain functions by the function they interpret (kernels live as long as their module).
_INTERPRETED: dict[Callable[..., Any], Callable[..., Any]] = {}


def _plain(fn: Callable[..., Any], done: dict[int, Any]) -> Callable[..., Any]:
    found = done.get(id(fn))
    if found is not None:
        return found
    module_globals = fn.__globals__  # type: ignore[attr-defined]
    namespace = dict(module_globals)
    plain = types.FunctionType(
        fn.__code__,  # type: ignore[attr-defined]
        namespace,
        fn.__name__,
        fn.__defaults__,  # type: ignore[attr-defined]
        fn.__closure__,  # type: ignore[attr-defined]
    )
    done[id(fn)] = plain
    for name in fn.__code__.co_names:  # type: ignore[attr-defined]
        value = module_globals.get(name)
        if isinstance(value, Kernel):
            namespace[name] = _plain(value.py_func, done)
    return plain
