"""Safe file handling shared by every reader and writer of the Python layer.

* :func:`excerpt` — the one way an error message quotes file content: at most
  a bounded number of characters, control characters and escapes made
  visible, so a 50 MB line or a terminal escape sequence in a hostile file
  never reaches the terminal as such. The Rust readers use the same rule
  (``ibcloud_fabric::excerpt``).
* :func:`read_text` — UTF-8 text (a leading byte-order mark dropped); bytes
  that are not UTF-8 become a :class:`~ibcloud.ParseError` naming the file,
  line and column, not a bare ``UnicodeDecodeError``.
* :func:`atomic_write` / :func:`atomic_path` — every file is written under a
  temporary name in its own folder and renamed over the target only when
  complete, so an interrupted write never leaves a truncated file where a
  good one was.

>>> excerpt("ab\\x1b[2Jcd")
"'ab\\\\x1b[2Jcd'"
>>> len(excerpt("x" * 10_000)) < 120
True
"""

from __future__ import annotations

import contextlib
import os
import stat
import tempfile
from pathlib import Path
from typing import Iterator, Union

from ibcloud.exceptions import ParseError

__all__ = ["EXCERPT_CHARS", "excerpt", "bounded", "read_text", "atomic_write", "atomic_path", "checked_ints",
           "IntRangeError", "finite_json", "dumps_json"]

#: Characters of file content an error message quotes at most.
EXCERPT_CHARS = 60
#: Characters of a whole error message at most (messages quote excerpts; this is the backstop).
MESSAGE_CHARS = 2000

PathLike = Union[str, "os.PathLike[str]"]


def _escape(text: str, backslash: bool = True) -> str:
    out = []
    for ch in text:
        code = ord(ch)
        if ch == "\\" and backslash:
            out.append("\\\\")
        elif code < 0x20 or 0x7F <= code < 0xA0 or ch in "\u2028\u2029\ufeff" or 0xD800 <= code < 0xE000:
            out.append({"\t": "\\t", "\n": "\\n", "\r": "\\r"}.get(ch, f"\\x{code:02x}" if code < 0x100
                                                                   else f"\\u{code:04x}"))
        else:
            out.append(ch)
    return "".join(out)


def excerpt(text: Union[str, bytes], limit: int = EXCERPT_CHARS) -> str:
    """``text`` quoted for an error message: escaped, at most ``limit``
    characters of it, and the full length when cut.

    >>> excerpt("0x0001 2")
    "'0x0001 2'"
    >>> excerpt("A" * 100, limit=5)
    "'AAAAA'... (100 characters)"
    >>> excerpt(b"\\xff\\x00ok")
    "'\\\\xff\\\\x00ok'"
    """
    if isinstance(text, bytes):
        shown = "".join(chr(b) if 0x20 <= b < 0x7F and b != 0x5C else f"\\x{b:02x}" for b in text[:limit])
        more = f"... ({len(text):,} bytes)" if len(text) > limit else ""
        return f"'{shown}'{more}"
    shown = _escape(text[:limit])
    more = f"... ({len(text):,} characters)" if len(text) > limit else ""
    return f"'{shown}'{more}"


def bounded(message: str, limit: int = MESSAGE_CHARS) -> str:
    """A whole message made safe for a terminal: control characters escaped
    (newlines kept), at most ``limit`` characters.

    >>> bounded("a\\x1b]0;x\\x07\\nb")
    'a\\\\x1b]0;x\\\\x07\\nb'
    >>> bounded("y" * 50, limit=10)
    'yyyyyyyyyy... (50 characters)'
    """
    # Backslashes stay as they are: the message may quote an excerpt already.
    lines = [_escape(line, backslash=False) for line in message[:limit].split("\n")]
    more = f"... ({len(message):,} characters)" if len(message) > limit else ""
    return "\n".join(lines) + more


def read_text(path: PathLike) -> str:
    """The UTF-8 text of ``path`` without a leading byte-order mark.

    Raises :class:`~ibcloud.ParseError` ``file:line: ...`` for bytes that are
    not UTF-8, and the usual :class:`OSError` (naming the file) when it
    cannot be read.

    >>> import tempfile, pathlib
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "x.txt"
    >>> _ = p.write_bytes(b"\\xef\\xbb\\xbfok\\nbad \\xff here\\n")
    >>> read_text(p)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ibcloud.exceptions.ParseError: .../x.txt:2: not UTF-8 text: byte 0xff at column 5
    """
    data = Path(path).read_bytes()
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as err:
        raise ParseError(decode_problem(path, data, err)) from None


def decode_problem(path: PathLike, data: bytes, err: UnicodeDecodeError) -> str:
    """``file:line: not UTF-8 text: byte 0x.. at column N`` for a decode error in ``data``.

    >>> data = b"a\\n\\x80"
    >>> try:
    ...     data.decode()
    ... except UnicodeDecodeError as e:
    ...     decode_problem("f", data, e)
    'f:2: not UTF-8 text: byte 0x80 at column 1'
    """
    line = data.count(b"\n", 0, err.start) + 1
    column = err.start - (data.rfind(b"\n", 0, err.start) + 1) + 1
    return f"{os.fspath(path)}:{line}: not UTF-8 text: byte 0x{data[err.start]:02x} at column {column}"


@contextlib.contextmanager
def atomic_path(path: PathLike, keep_suffix: bool = False) -> Iterator[Path]:
    """Yields a temporary path beside ``path``; when the block ends without
    an error, the temporary file replaces ``path`` in one rename, otherwise
    it is removed and ``path`` is left as it was.

    For libraries that write by name (``DataFrame.to_parquet``,
    ``Figure.savefig`` with ``keep_suffix=True``).

    >>> import tempfile, pathlib
    >>> target = pathlib.Path(tempfile.mkdtemp()) / "t.txt"
    >>> with atomic_path(target) as tmp:
    ...     _ = tmp.write_text("done")
    >>> target.read_text(), sorted(p.name for p in target.parent.iterdir())
    ('done', ['t.txt'])
    """
    target = Path(path)
    try:
        special = not stat.S_ISREG(os.stat(target).st_mode) and not target.is_dir()
    except OSError:
        special = False
    if special:
        # /dev/null, a FIFO, a terminal: written in place; renaming over one
        # would replace a device node with a regular file (as root).
        yield target
        return
    if target.parent != Path(""):
        target.parent.mkdir(parents=True, exist_ok=True)
    # A hidden name ending in .tmp, so that no reader globbing for the target's
    # kind (*.parquet) takes a half-written file; keep_suffix for writers that
    # choose the format by the suffix (Figure.savefig).
    suffix = f".tmp{target.suffix}" if keep_suffix else ".tmp"
    fd, name = tempfile.mkstemp(prefix=f".{target.name}.", suffix=suffix, dir=target.parent)
    os.close(fd)
    tmp = Path(name)
    try:
        yield tmp
        if target.exists():
            # keep the mode of a file we replace (mkstemp makes 0600)
            os.chmod(tmp, target.stat().st_mode & 0o7777)
        else:
            umask = os.umask(0)
            os.umask(umask)
            os.chmod(tmp, 0o666 & ~umask)
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(OSError):
            tmp.unlink()
        raise


def atomic_write(path: PathLike, data: Union[str, bytes]) -> Path:
    """Writes ``data`` (text as UTF-8) to ``path`` through :func:`atomic_path`.

    >>> import tempfile, pathlib
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "sub" / "a.json"
    >>> atomic_write(p, "{}\\n").read_text()
    '{}\\n'
    """
    with atomic_path(path) as tmp:
        with open(tmp, "wb") as fh:
            fh.write(data.encode() if isinstance(data, str) else data)
            fh.flush()
            if stat.S_ISREG(os.fstat(fh.fileno()).st_mode):
                os.fsync(fh.fileno())
    return Path(path)


def load_json(path: PathLike) -> object:
    """The JSON value in ``path``; bad JSON is a :class:`~ibcloud.ParseError`
    ``file:line: not JSON: ...`` (an empty file included).

    >>> import tempfile, pathlib
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "e.json"
    >>> _ = p.write_text('[1,\\n 2,,]')
    >>> load_json(p)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ibcloud.exceptions.ParseError: .../e.json:2: not JSON: Expecting value (column 4)
    """
    import json

    text = read_text(path)
    if not text.strip():
        raise ParseError(f"{os.fspath(path)}:1: empty file, expected JSON")
    try:
        return json.loads(text, parse_constant=_no_constant)
    except json.JSONDecodeError as err:
        raise ParseError(f"{os.fspath(path)}:{err.lineno}: not JSON: {err.msg} (column {err.colno})") from None
    except ValueError as err:
        raise ParseError(f"{os.fspath(path)}: {err}") from None


def finite_json(value: object) -> object:
    """``value`` with every float that is not finite (NaN, ±infinity; numpy's
    included) replaced by ``None``, through dicts, lists and tuples.

    JSON has no NaN or infinity: Python's ``json`` writes ``NaN`` and
    ``Infinity``, which strict readers (``jq``, JavaScript, our own
    :func:`load_json`) refuse. An undefined ratio or an unbounded mean is
    ``null`` in our JSON, and the text reports say in words why.

    >>> finite_json({"r": float("nan"), "xs": [1.5, float("inf")], "n": 3})
    {'r': None, 'xs': [1.5, None], 'n': 3}
    """
    if isinstance(value, float) or type(value).__name__ in ("float64", "float32", "float16"):
        f = float(value)  # type: ignore[arg-type]
        return f if f == f and f not in (float("inf"), float("-inf")) else None
    if isinstance(value, dict):
        return {k: finite_json(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [finite_json(v) for v in value]
    return value


def dumps_json(value: object, **kwargs) -> str:
    """``json.dumps`` for every JSON document ibcloud prints or writes: strict
    JSON (non-finite floats become ``null``, see :func:`finite_json`);
    other keyword arguments as for ``json.dumps`` (``default=str`` unless
    given).

    >>> dumps_json({"ratio": float("inf"), "ok": True})
    '{"ratio": null, "ok": true}'
    """
    import json

    kwargs.setdefault("default", str)

    def default(obj: object) -> object:
        # Objects the caller's ``default`` turns into floats are checked too.
        return finite_json(kwargs["default"](obj))

    rest = {k: v for k, v in kwargs.items() if k != "default"}
    return json.dumps(finite_json(value), allow_nan=False, default=default, **rest)


def _no_constant(name: str) -> float:
    raise ValueError(f"{name} is not a JSON number")


class IntRangeError(ValueError, OverflowError):
    """An integer argument outside what its parameter accepts, named:
    ``radix=-1 is out of range (0 to 2**64-1)``. Both a ``ValueError`` (bad
    input; the CLI exits 2) and an ``OverflowError`` (what the bare
    conversion raised before, so old handlers still catch it)."""


#: Default range of an integer handed to the Rust core: u64/usize.
_U64 = (0, (1 << 64) - 1)


def _range_text(low: int, high: int) -> str:
    def one(v: int) -> str:
        return f"2**{v.bit_length()}-1" if v > 1 << 32 and (v + 1) & v == 0 else str(v)

    return f"{one(low)} to {one(high)}"


def _check_int_tree(name: str, value: object, low: int, high: int, depth: int = 0) -> None:
    """Raises IntRangeError for the first integer in ``value`` (an int, or
    ints nested in lists, tuples, sets, dict keys and values, integer numpy
    arrays) outside ``low..high``; other values (floats, strings, paths,
    objects) pass untouched, for Rust to judge."""
    if isinstance(value, bool):
        return
    if isinstance(value, int):
        if not low <= value <= high:
            raise IntRangeError(f"{name}={value} is out of range ({_range_text(low, high)})")
        return
    if depth > 3 or isinstance(value, (str, bytes, os.PathLike)):
        return
    kind = getattr(getattr(value, "dtype", None), "kind", None)
    if kind in ("i", "u") and getattr(value, "size", 0):
        lo, hi = int(value.min()), int(value.max())  # type: ignore[attr-defined]
        for v in (lo, hi):
            if not low <= v <= high:
                raise IntRangeError(f"{name} holds {v}, out of range ({_range_text(low, high)})")
        return
    if isinstance(value, dict):
        for k, v in value.items():
            _check_int_tree(f"{name} key", k, low, high, depth + 1)
            _check_int_tree(f"{name}[{k!r}]", v, low, high, depth + 1)
    elif isinstance(value, (list, tuple, set, frozenset, range)):
        if isinstance(value, range):
            value = [value.start, value.stop - 1] if len(value) else []
        for i, v in enumerate(value):
            _check_int_tree(f"{name}[{i}]", v, low, high, depth + 1)


def checked_ints(func=None, **ranges):
    """Decorator for the public functions that hand integers to the Rust
    core: before the call, every argument whose annotation mentions ``int``
    (scalars, and the integers inside sequences, tuples and dicts) is
    checked against its range, and an :class:`IntRangeError` names the
    parameter. The range is 0 to 2**64-1 (u64/usize) unless given as
    ``name=(low, high)``. A narrower Rust type that still overflows (a u8
    given 300) is caught after the call and named the same way. Missing
    arguments do not stop the check (the call then fails as usual).

    >>> @checked_ints(radix=(1, 254))
    ... def f(spec: str, radix: int = 1, ids: "list[int]" = ()):
    ...     return radix
    >>> f("x", radix=-1)
    Traceback (most recent call last):
    ...
    ibcloud.safeio.IntRangeError: radix=-1 is out of range (1 to 254)
    >>> f("x", ids=[1, 2**70])
    Traceback (most recent call last):
    ...
    ibcloud.safeio.IntRangeError: ids[1]=1180591620717411303424 is out of range (0 to 2**64-1)
    >>> f("x", radix=7)
    7
    """
    if func is None:
        return lambda f: checked_ints(f, **ranges)
    import functools
    import inspect
    import re

    signature = inspect.signature(func)
    checked = {}
    for name, param in signature.parameters.items():
        annotation = param.annotation if isinstance(param.annotation, str) else repr(param.annotation)
        if name in ranges or re.search(r"\bint\b", annotation):
            checked[name] = ranges.get(name, _U64)
    unknown = set(ranges) - set(signature.parameters)
    if unknown:
        raise TypeError(f"checked_ints: {func.__qualname__} has no parameter {sorted(unknown)}")

    # Positions of the checked parameters, for a fast bind (no Signature.bind
    # per call: these wrap hot accessors such as ForwardingTables.get).
    positional = [n for n, p in signature.parameters.items()
                  if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    at = [(i, n) for i, n in enumerate(positional) if n in checked]

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        bound = {n: args[i] for i, n in at if i < len(args)}
        for name in checked:
            if name in kwargs:
                bound[name] = kwargs[name]
        for name, value in bound.items():
            low, high = checked[name]
            if type(value) is int and low <= value <= high:
                continue  # the common case, without the tree walk
            _check_int_tree(name, value, low, high)
        try:
            return func(*args, **kwargs)
        except IntRangeError:
            raise
        except OverflowError as err:
            # A Rust type narrower than the range checked above.
            ints = {n: v for n, v in bound.items() if n in checked and isinstance(v, int) and not isinstance(v, bool)}
            named = ", ".join(f"{n}={v}" for n, v in ints.items()) or ", ".join(checked) or "an argument"
            raise IntRangeError(f"{named} is out of range ({err})") from None

    wrapper.__ibcloud_checked_ints__ = dict(checked)  # type: ignore[attr-defined]
    return wrapper

