"""Pickle inspection by opcodes only: nothing is ever unpickled (DESIGN, SPEC A7, E5).

A pickle is a small stack program; loading it imports the names its GLOBAL / STACK_GLOBAL /
INST opcodes name and calls what REDUCE / NEWOBJ / OBJ / INST find on the stack. That is how
a "checkpoint" runs `os.system`. Here `pickletools.genops` decodes the opcodes and a tiny
abstract interpreter tracks which values are strings, which are imported names and which are
memoised, so that STACK_GLOBAL operands fetched from the memo are still resolved (the usual
evasion of naive scanners). Nothing is imported, nothing is called.

Each imported name is classified like picklescan / modelscan do:
* `safe`: the rebuild functions and containers torch / numpy / collections use for tensors
  and plain data (the same ground `torch.load(weights_only=True)` accepts);
* `library`: classes of the training libraries that write checkpoints (transformers'
  `TrainingArguments`, accelerate's enums, torch.distributed.checkpoint metadata). Loading
  them runs that library's constructor, not a command; they are listed, not flagged;
* `dangerous`: known code execution (os/posix/subprocess/builtins.eval/exec/..., a
  STACK_GLOBAL whose operands are computed, a call of a computed callable, copyreg
  extension codes);
* `unknown`: anything else. It is outside the allowlist, so it is reported as dangerous
  too: the scanner cannot vet what importing it does.

A byte string that is no valid pickle gives problems, never an exception.
"""

from __future__ import annotations

import io
import pickletools
import re
from dataclasses import dataclass, field
from typing import IO, Any, Literal, cast

Level = Literal["safe", "library", "dangerous", "unknown"]

MAX_OPS = 20_000_000
MAX_CONSTANTS = 200_000
MAX_PROBLEMS = 20

_SAFE_BUILTINS = {
    "set",
    "frozenset",
    "bytearray",
    "bytes",
    "complex",
    "slice",
    "range",
    "object",
    "int",
    "float",
    "str",
    "list",
    "dict",
    "tuple",
    "bool",
}

_TORCH_DTYPES = {
    "float32", "float", "float64", "double", "float16", "half", "bfloat16", "complex32",
    "complex64", "complex128", "cfloat", "cdouble", "uint8", "uint16", "uint32", "uint64",
    "int8", "int16", "short", "int32", "int", "int64", "long", "bool", "qint8", "quint8",
    "qint32", "quint4x2", "quint2x4", "float8_e4m3fn", "float8_e5m2", "float8_e4m3fnuz",
    "float8_e5m2fnuz", "float8_e8m0fnu", "float4_e2m1fn_x2", "bits8", "bits16",
}  # fmt: skip

_SAFE: dict[str, set[str] | Literal["*"]] = {
    "collections": {"OrderedDict", "defaultdict", "deque", "Counter"},
    "builtins": _SAFE_BUILTINS,
    "__builtin__": _SAFE_BUILTINS,
    "copyreg": {"_reconstructor"},
    "copy_reg": {"_reconstructor"},
    "_codecs": {"encode"},
    "torch._utils": {
        "_rebuild_tensor",
        "_rebuild_tensor_v2",
        "_rebuild_tensor_v3",
        "_rebuild_parameter",
        "_rebuild_parameter_with_state",
        "_rebuild_sparse_tensor",
        "_rebuild_nested_tensor",
        "_rebuild_device_tensor_from_numpy",
        "_rebuild_device_tensor_from_cpu_tensor",
        "_rebuild_meta_tensor_no_storage",
        "_rebuild_qtensor",
        "_rebuild_wrapper_subclass",
    },
    "torch._tensor": {"_rebuild_from_type_v2"},
    "torch.serialization": {"_get_layout"},
    "torch": {"Size", "device", "Tensor", *_TORCH_DTYPES},
    "torch.nn.parameter": {"Parameter"},
    "numpy": {"dtype", "ndarray"},
    "numpy.core.multiarray": {"_reconstruct", "scalar"},
    "numpy._core.multiarray": {"_reconstruct", "scalar"},
    "pathlib": {"PosixPath", "PurePosixPath", "WindowsPath", "PureWindowsPath", "Path"},
    "datetime": {"datetime", "date", "time", "timedelta", "timezone"},
    "decimal": {"Decimal"},
    "uuid": {"UUID"},
}
_TORCH_STORAGE = re.compile(r"^[A-Za-z0-9]*Storage$")
_NUMPY_DTYPES = re.compile(r"^[A-Za-z0-9]+DType$")

# Training libraries whose checkpoint files pickle their own classes. Only class names (an
# initial capital, no dotted attribute) count: a function of the same module is unknown.
_LIBRARY_PREFIXES = (
    "transformers.",
    "accelerate.",
    "peft.",
    "trl.",
    "lightning.",
    "pytorch_lightning.",
    "lightning_fabric.",
    "deepspeed.",
    "torch.distributed.checkpoint.",
    "torch.optim.lr_scheduler",
    "torch.amp.grad_scaler",
    "torch.cuda.amp.grad_scaler",
    "omegaconf.",
    "argparse",
)
_CLASS_NAME = re.compile(r"^_?[A-Z][A-Za-z0-9_]*$")

# Known code execution or file/network access (after picklescan's and modelscan's lists).
_DANGEROUS_MODULES = {
    "os", "posix", "nt", "subprocess", "_posixsubprocess", "_winapi", "sys", "pty", "commands",
    "socket", "ssl", "urllib", "http", "httplib", "ftplib", "smtplib", "telnetlib", "requests",
    "httpx", "aiohttp", "asyncio", "code", "codeop", "importlib", "runpy", "pkgutil",
    "pickle", "_pickle", "cPickle", "marshal", "shelve", "dill", "cloudpickle", "joblib",
    "ctypes", "cffi", "shutil", "tempfile", "glob", "io", "_io", "fileinput", "pdb", "bdb",
    "timeit", "trace", "cProfile", "profile", "pydoc", "webbrowser", "venv", "ensurepip",
    "pip", "setuptools", "distutils", "multiprocessing", "threading", "_thread", "signal",
    "types", "inspect", "linecache", "zipimport", "gc", "idlelib", "lib2to3", "doctest",
    "numpy.f2py", "numpy.testing", "numpy.distutils", "torch.hub", "torch.jit",
    "torch._inductor", "torch._dynamo", "torch.package", "torch.utils.cpp_extension",
    "torch.utils.collect_env", "torch.utils.bottleneck", "yaml",
}  # fmt: skip
_DANGEROUS_NAMES = {
    ("functools", "partial"),
    ("functools", "reduce"),
    ("operator", "attrgetter"),
    ("operator", "itemgetter"),
    ("operator", "methodcaller"),
    ("torch", "load"),
    ("torch.serialization", "load"),
    ("torch.storage", "_load_from_bytes"),
    ("numpy", "load"),
    ("numpy", "loads"),
    ("numpy", "fromfile"),
    ("pandas", "read_pickle"),
}


@dataclass(frozen=True)
class GlobalRef:
    """A name the pickle imports, with its classification."""

    module: str
    name: str
    level: Level
    reason: str = ""

    @property
    def dotted(self) -> str:
        """`module.name`."""
        return f"{self.module}.{self.name}"


def classify(module: str, name: str) -> tuple[Level, str]:
    """Classify one imported name (see the module docstring)."""
    parts = module.split(".")
    for i in range(len(parts), 0, -1):
        if ".".join(parts[:i]) in _DANGEROUS_MODULES:
            return "dangerous", f"{module} can run commands or touch files and the network"
    if (module, name) in _DANGEROUS_NAMES:
        return "dangerous", f"{module}.{name} loads or calls other code"
    if module in ("builtins", "__builtin__"):
        if name in _SAFE_BUILTINS:
            return "safe", ""
        return "dangerous", f"builtins.{name} can evaluate code or reach any object"
    allowed = _SAFE.get(module)
    if allowed == "*" or (allowed is not None and name in allowed):
        return "safe", ""
    if module == "torch" and _TORCH_STORAGE.match(name):
        return "safe", ""
    if module == "numpy.dtypes" and _NUMPY_DTYPES.match(name):
        return "safe", ""
    if _CLASS_NAME.match(name) and any(
        module == p.rstrip(".") or module.startswith(p) for p in _LIBRARY_PREFIXES
    ):
        return "library", f"class of {module.split('.')[0]}: loading runs its constructor"
    return "unknown", "not on the allowlist: importing it runs code the scan cannot vet"


class _Mark:
    pass


class _Opaque:
    pass


MARK = _Mark()
OPAQUE = _Opaque()

_STRING_OPS = {
    "STRING",
    "BINSTRING",
    "SHORT_BINSTRING",
    "UNICODE",
    "BINUNICODE",
    "SHORT_BINUNICODE",
    "BINUNICODE8",
}
_CONST_OPS = {
    "INT",
    "BININT",
    "BININT1",
    "BININT2",
    "LONG",
    "LONG1",
    "LONG4",
    "FLOAT",
    "BINFLOAT",
    "NEWTRUE",
    "NEWFALSE",
    "NONE",
}


@dataclass
class PickleReport:
    """What the opcodes of one or more pickles say."""

    globals: list[GlobalRef] = field(default_factory=list)
    findings: list[dict[str, str]] = field(default_factory=list)
    constants: list[Any] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    pickles: int = 0
    opcodes: int = 0
    protocol: int | None = None
    _seen: set[tuple[str, str]] = field(default_factory=set, repr=False)

    def add_global(self, ref: GlobalRef) -> None:
        """Record an import once."""
        key = (ref.module, ref.name)
        if key not in self._seen:
            self._seen.add(key)
            self.globals.append(ref)

    def add_finding(self, what: str, detail: str) -> None:
        """A dangerous construct that is not a plain import (bounded)."""
        item = {"what": what, "detail": detail}
        if item not in self.findings and len(self.findings) < MAX_PROBLEMS:
            self.findings.append(item)

    def add_problem(self, problem: str) -> None:
        """A reason the stream is not a valid pickle (bounded)."""
        if len(self.problems) < MAX_PROBLEMS:
            self.problems.append(problem)

    def merge(self, other: PickleReport) -> None:
        """Fold another stream's report in (several pickles of one file)."""
        for g in other.globals:
            self.add_global(g)
        for f in other.findings:
            self.add_finding(f["what"], f["detail"])
        room = MAX_CONSTANTS - len(self.constants)
        if room > 0:
            self.constants.extend(other.constants[:room])
        for p in other.problems:
            self.add_problem(p)
        self.pickles += other.pickles
        self.opcodes += other.opcodes
        if self.protocol is None:
            self.protocol = other.protocol

    @property
    def dangerous(self) -> list[str]:
        """Everything that makes loading this pickle unsafe, one line each."""
        out = [
            f"imports {g.dotted} ({g.reason})"
            for g in self.globals
            if g.level in ("dangerous", "unknown")
        ]
        out += [f"{f['what']}: {f['detail']}" for f in self.findings]
        return out

    @property
    def library(self) -> list[str]:
        """Library classes the pickle constructs (listed, not flagged)."""
        return [g.dotted for g in self.globals if g.level == "library"]

    @property
    def strings(self) -> list[str]:
        """String constants, in order (keys and values of the pickled dicts)."""
        return [c for c in self.constants if isinstance(c, str)]

    def value_after(self, key: str) -> Any:
        """The constant that follows `key` (a dict's value when it is a plain constant).

        An opcode-level read, not an evaluation: `{"global_step": 3}` pickles as the string
        then the int, so the constant after the key is its value. None when not found.
        """
        for i, c in enumerate(self.constants[:-1]):
            if c == key and isinstance(c, str):
                return self.constants[i + 1]
        return None

    def summary(self) -> dict[str, Any]:
        """Machine form for the audit's `formats`."""
        return {
            "pickles": self.pickles,
            "opcodes": self.opcodes,
            "protocol": self.protocol,
            "imports": [
                {"name": g.dotted, "level": g.level, **({"reason": g.reason} if g.reason else {})}
                for g in self.globals
            ],
            "dangerous": self.dangerous,
            "problems": list(self.problems),
        }


class BoundedReader:
    """A read-only view of a stream that never reads past `limit` bytes.

    pickletools trusts the lengths written in the stream; a hostile BINBYTES8 claiming
    2**63 bytes would otherwise make the scanner allocate that much. Reads are clamped to
    what is really left.
    """

    def __init__(self, raw: Any, limit: int) -> None:
        self._raw = raw
        self._left = limit
        self._pos = 0

    def read(self, n: int = -1) -> bytes:
        """Read at most `n` bytes (all that is left when negative), clamped to the limit."""
        if n is None or n < 0 or n > self._left:
            n = self._left
        data = self._raw.read(n) if n > 0 else b""
        self._left -= len(data)
        self._pos += len(data)
        return data

    def readline(self, size: int = -1) -> bytes:
        """One line, clamped to the limit (and to 1 MiB: no text opcode needs more)."""
        cap = min(self._left, 1 << 20)
        if size is not None and 0 <= size < cap:
            cap = size
        data: bytes = self._raw.readline(cap)
        self._left -= len(data)
        self._pos += len(data)
        return data

    def tell(self) -> int:
        """Bytes consumed so far."""
        return self._pos

    @property
    def left(self) -> int:
        """Bytes that may still be read."""
        return self._left


class _Malformed(Exception):
    pass


class _Interpreter:
    """Abstract stack machine: strings and imports are tracked, everything else is opaque."""

    def __init__(self, report: PickleReport) -> None:
        self.report = report
        self.stack: list[Any] = []
        self.memo: dict[Any, Any] = {}

    def pop(self) -> Any:
        if not self.stack:
            raise _Malformed("stack underflow (not a valid pickle)")
        return self.stack.pop()

    def top(self) -> Any:
        if not self.stack:
            raise _Malformed("memo store with an empty stack")
        return self.stack[-1]

    def pop_to_mark(self) -> list[Any]:
        items: list[Any] = []
        while True:
            if not self.stack:
                raise _Malformed("no MARK on the stack")
            value = self.stack.pop()
            if value is MARK:
                items.reverse()
                return items
            items.append(value)

    def note_import(self, module: str, name: str) -> GlobalRef:
        level, reason = classify(module, name)
        ref = GlobalRef(module, name, level, reason)
        self.report.add_global(ref)
        return ref

    def call(self, func: Any, opcode: str) -> None:
        if isinstance(func, GlobalRef):
            return  # the import itself was classified when it was pushed
        self.report.add_finding(
            f"{opcode} of a computed callable",
            "calls something that is not a plain import (a getattr/attribute chain)",
        )

    def const(self, value: Any) -> None:
        if len(self.report.constants) < MAX_CONSTANTS:
            self.report.constants.append(value)

    def step(self, op: Any, arg: Any) -> bool:
        """Apply one opcode; True at STOP."""
        name = op.name
        if name in _STRING_OPS:
            value = arg.decode("latin-1") if isinstance(arg, bytes) else arg
            self.stack.append(value)
            self.const(value)
        elif name in _CONST_OPS:
            self.stack.append(OPAQUE)
            self.const(arg)
        elif name == "MARK":
            self.stack.append(MARK)
        elif name == "GLOBAL":
            module, _, gname = str(arg).partition(" ")
            self.stack.append(self.note_import(module, gname))
        elif name == "INST":
            module, _, gname = str(arg).partition(" ")
            self.note_import(module, gname)
            self.pop_to_mark()
            self.stack.append(OPAQUE)
        elif name == "STACK_GLOBAL":
            gname, module = self.pop(), self.pop()
            if isinstance(module, str) and isinstance(gname, str):
                self.stack.append(self.note_import(module, gname))
            else:
                self.report.add_finding(
                    "STACK_GLOBAL with computed operands",
                    "the imported name is built at load time, so it cannot be vetted",
                )
                self.stack.append(OPAQUE)
        elif name in ("PUT", "BINPUT", "LONG_BINPUT"):
            self.memo[arg] = self.top()
        elif name == "MEMOIZE":
            self.memo[len(self.memo)] = self.top()
        elif name in ("GET", "BINGET", "LONG_BINGET"):
            if arg not in self.memo:
                raise _Malformed(f"memo key {arg!r} used before it was stored")
            self.stack.append(self.memo[arg])
        elif name == "REDUCE" or name == "NEWOBJ":
            self.pop()
            self.call(self.pop(), name)
            self.stack.append(OPAQUE)
        elif name == "NEWOBJ_EX":
            self.pop()
            self.pop()
            self.call(self.pop(), name)
            self.stack.append(OPAQUE)
        elif name == "OBJ":
            items = self.pop_to_mark()
            if not items:
                raise _Malformed("OBJ without a class")
            self.call(items[0], name)
            self.stack.append(OPAQUE)
        elif name in ("EXT1", "EXT2", "EXT4"):
            self.report.add_finding(
                f"{name} extension code {arg}",
                "imports a name from the copyreg extension registry, unknown here",
            )
            self.stack.append(OPAQUE)
        elif name == "DUP":
            self.stack.append(self.top())
        elif name == "PROTO":
            if self.report.protocol is None:
                self.report.protocol = int(arg)
        elif name == "FRAME":
            pass
        elif name == "STOP":
            self.pop()
            return True
        else:
            self.generic(op)
        return False

    def generic(self, op: Any) -> None:
        before, after = op.stack_before, op.stack_after
        if pickletools.markobject in before:
            k = before.index(pickletools.markobject)
            self.pop_to_mark()
            for _ in range(k):
                self.pop()
        else:
            for _ in before:
                self.pop()
        self.stack.extend(OPAQUE for _ in after)


def scan_one(stream: BoundedReader, report: PickleReport) -> bool:
    """Scan one pickle from the stream's position; True when it ended with STOP."""
    interp = _Interpreter(report)
    try:
        for op, arg, _pos in pickletools.genops(cast(IO[bytes], stream)):
            report.opcodes += 1
            if report.opcodes > MAX_OPS:
                report.add_problem(f"more than {MAX_OPS} opcodes: not scanned to the end")
                return False
            if interp.step(op, arg):
                report.pickles += 1
                return True
    except _Malformed as exc:
        report.add_problem(str(exc))
        return False
    except RecursionError:
        report.add_problem("not a valid pickle: nesting too deep")
        return False
    except MemoryError:
        report.add_problem("not a valid pickle: a length field asks for too much memory")
        return False
    except Exception as exc:  # pickletools raises ValueError, UnicodeError, struct.error, ...
        report.add_problem(f"not a valid pickle: {str(exc)[:160]}")
        return False
    report.add_problem("pickle ended without STOP (truncated?)")
    return False


def scan_stream(raw: IO[bytes], limit: int, *, max_pickles: int = 1) -> PickleReport:
    """Scan up to `max_pickles` consecutive pickles from a stream, reading at most `limit`."""
    report = PickleReport()
    stream = BoundedReader(raw, limit)
    for index in range(max_pickles):
        if index > 0 and stream.left <= 0:
            break
        if not scan_one(stream, report):
            break
    return report


def scan_all(raw: IO[bytes], limit: int, max_pickles: int = 64) -> PickleReport:
    """Scan a raw pickle file: the first pickle must be whole; more may follow it.

    `pickle.load` reads only the first, but a loader may call it again, so every pickle that
    follows is scanned too (as picklescan does). Bytes after the last pickle that are not
    a pickle are noted, not flagged as corruption.
    """
    report = PickleReport()
    stream = BoundedReader(raw, limit)
    if not scan_one(stream, report):
        return report
    for _ in range(max_pickles - 1):
        if stream.left <= 0:
            break
        head = stream.read(1)
        if not head:
            break
        rest = PickleReport()
        chained = BoundedReader(_Prefixed(head, stream), stream.left + 1)
        ok = scan_one(chained, rest)
        for g in rest.globals:
            report.add_global(g)
        for f in rest.findings:
            report.add_finding(f["what"], f["detail"])
        if not ok:
            report.add_problem("bytes after the first pickle are not a complete pickle")
            break
        report.pickles += rest.pickles
        report.opcodes += rest.opcodes
    return report


class _Prefixed:
    """A stream with a few bytes pushed back in front of it."""

    def __init__(self, head: bytes, tail: BoundedReader) -> None:
        self._head = head
        self._tail = tail

    def read(self, n: int = -1) -> bytes:
        if self._head:
            if n is None or n < 0:
                data, self._head = self._head + self._tail.read(-1), b""
                return data
            data, self._head = self._head[:n], self._head[n:]
            if len(data) < n:
                data += self._tail.read(n - len(data))
            return data
        return self._tail.read(n)

    def readline(self, size: int = -1) -> bytes:
        if self._head:
            if b"\n" in self._head:
                idx = self._head.index(b"\n") + 1
                data, self._head = self._head[:idx], self._head[idx:]
                return data
            data, self._head = self._head, b""
            return data + self._tail.readline(size)
        return self._tail.readline(size)


def scan_bytes(data: bytes, max_pickles: int = 64) -> PickleReport:
    """Scan pickle bytes held in memory (tests, fuzzing)."""
    return scan_all(io.BytesIO(data), len(data), max_pickles)
