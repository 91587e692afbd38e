"""Which names a pickle may import: allow list, training libraries, deny list (SPEC A7, E5).

Loading a pickle imports every name its GLOBAL / STACK_GLOBAL / INST opcodes name and calls
what REDUCE / NEWOBJ / OBJ / BUILD find on the stack. Each imported name gets one of four
levels, and two of them are hazards of different weight:

* `safe`: the allow list of `torch.load(weights_only=True)` (read from torch 2.13's
  `torch/_weights_only_unpickler.py`: tensor rebuild functions, storages, dtypes, `Size`,
  `device`, `OrderedDict`, `Counter`, `set`, `complex`, `bytearray`, `_codecs.encode`) plus
  plain-data types that construct values and run no user code (the other builtin data types,
  `defaultdict`, `deque`, numpy's array reconstruction, `datetime`, `Decimal`, `pathlib`,
  `uuid.UUID`);
* `library`: classes of the training libraries that write checkpoints (transformers'
  `TrainingArguments`, accelerate's enums, DCP metadata). Loading them runs that library's
  constructor, which the same installation wrote; they are listed in the notes;
* `dangerous` (deny list): a callable known to run code, load other code or touch files,
  processes and the network (`os.system`, `builtins.eval`, `subprocess.*`, `runpy`, ...):
  always a stop factor, hazard `dangerous_pickle`;
* `untrusted`: any other import. It is outside the allow list, so `torch.load(weights_only=
  True)` refuses it and loading it means trusting that code (a whole-model `torch.save` of
  `torch.nn.modules.linear.Linear`, `builtins.len`, `ast.parse`): hazard `untrusted_pickle_import`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

__all__ = [
    "GlobalRef",
    "Level",
    "classify",
]

Level = Literal["safe", "library", "dangerous", "untrusted"]

# torch.load(weights_only=True) allow list (torch 2.13 `_get_allowed_globals`).
_TORCH_DTYPES = {
    "float32", "float", "float64", "double", "float16", "half", "bfloat16", "complex32",
    "complex64", "complex128", "cfloat", "cdouble", "uint8", "uint16", "uint32", "uint64",
    "int8", "int16", "short", "int32", "int", "int64", "long", "bool", "qint8", "quint8",
    "qint32", "quint4x2", "quint2x4", "float8_e4m3fn", "float8_e5m2", "float8_e4m3fnuz",
    "float8_e5m2fnuz", "float8_e8m0fnu", "float4_e2m1fn_x2", "bits8", "bits16", "bits1x8",
    "bits2x4", "bits4x2", "uint1", "uint2", "uint3", "uint4", "uint5", "uint6", "uint7",
    "int1", "int2", "int3", "int4", "int5", "int6", "int7", "per_tensor_affine",
    "per_tensor_symmetric", "per_channel_affine", "per_channel_symmetric",
    "per_channel_affine_float_qparams",
}  # fmt: skip
_REBUILD = {
    "_rebuild_tensor", "_rebuild_tensor_v2", "_rebuild_tensor_v3", "_rebuild_parameter",
    "_rebuild_parameter_with_state", "_rebuild_sparse_tensor", "_rebuild_nested_tensor",
    "_rebuild_device_tensor_from_numpy", "_rebuild_device_tensor_from_cpu_tensor",
    "_rebuild_meta_tensor_no_storage", "_rebuild_qtensor", "_rebuild_wrapper_subclass",
}  # fmt: skip
_WEIGHTS_ONLY: dict[str, set[str]] = {
    "collections": {"OrderedDict", "Counter"},
    "torch.nn.parameter": {"Parameter"},
    "torch.serialization": {"_get_layout"},
    "torch": {"Size", "Tensor", "device", *_TORCH_DTYPES},
    "_codecs": {"encode"},
    "builtins": {"bytearray", "set", "complex"},
    "torch._utils": _REBUILD,
    "torch._tensor": {"_rebuild_from_type_v2"},
    "torch.storage": {"TypedStorage", "UntypedStorage"},
}
_TORCH_CLASS = re.compile(r"^[A-Za-z0-9]*(Storage|Tensor)$")
_TORCH_CLASS_MODULES = {"torch", "torch.cuda", "torch.sparse", "torch.cuda.sparse"}

# Plain data: constructs values, runs no user code (picklescan treats these as innocuous).
_DATA_BUILTINS = {
    "set", "frozenset", "bytearray", "bytes", "complex", "slice", "range", "object", "int",
    "float", "str", "list", "dict", "tuple", "bool",
}  # fmt: skip
_PLAIN_DATA: dict[str, set[str]] = {
    "builtins": _DATA_BUILTINS,
    "__builtin__": _DATA_BUILTINS,
    "collections": {"OrderedDict", "defaultdict", "deque", "Counter"},
    "copyreg": {"_reconstructor"},
    "copy_reg": {"_reconstructor"},
    "numpy": {"dtype", "ndarray"},
    "numpy.core.multiarray": {"_reconstruct", "scalar"},
    "numpy._core.multiarray": {"_reconstruct", "scalar"},
    "numpy.core.numeric": {"_frombuffer"},
    "numpy._core.numeric": {"_frombuffer"},
    "pathlib": {"PosixPath", "PurePosixPath", "WindowsPath", "PureWindowsPath", "Path"},
    "datetime": {"datetime", "date", "time", "timedelta", "timezone"},
    "decimal": {"Decimal"},
    "uuid": {"UUID"},
}
_NUMPY_DTYPES = re.compile(r"^[A-Za-z0-9]+DType$")

# Training libraries whose checkpoint files pickle their own classes. Only class names (an
# initial capital, no dotted attribute) count: a function of the same module is untrusted.
_LIBRARY_PREFIXES = (
    "transformers.", "accelerate.", "peft.", "trl.", "lightning.", "pytorch_lightning.",
    "lightning_fabric.", "deepspeed.", "torch.distributed.checkpoint.",
    "torch.optim.lr_scheduler", "torch.amp.grad_scaler", "torch.cuda.amp.grad_scaler",
    "omegaconf.", "argparse",
)  # fmt: skip
_CLASS_NAME = re.compile(r"^_?[A-Z][A-Za-z0-9_]*$")

# Deny list: known code execution, code loading, or file/process/network access. A union of
# picklescan 1.0.5's and modelscan's lists with this project's own.
_DENY_MODULES = {
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
    "torch.utils.collect_env", "torch.utils.bottleneck", "yaml", "imaplib", "test",
    "_osx_support", "_aix_support", "_pyrepl", "logging",
}  # fmt: skip
_DENY_NAMES = {
    ("functools", "partial"), ("functools", "reduce"), ("operator", "attrgetter"),
    ("operator", "itemgetter"), ("operator", "methodcaller"), ("_operator", "attrgetter"),
    ("_operator", "itemgetter"), ("_operator", "methodcaller"), ("torch", "load"),
    ("torch.serialization", "load"), ("torch.storage", "_load_from_bytes"), ("numpy", "load"),
    ("numpy", "loads"), ("numpy", "fromfile"), ("pandas", "read_pickle"),
    ("torch.fx.experimental.symbolic_shapes", "ShapeEnv"),
    ("torch.utils._config_module", "ConfigModule"),
    ("torch.utils.data.datapipes.utils.decoder", "basichandlers"), ("uuid", "_popen"),
    ("uuid", "_get_command_stdout"),
}  # fmt: skip
_DENY_BUILTINS = {
    "eval", "exec", "compile", "open", "__import__", "getattr", "setattr", "delattr",
    "globals", "locals", "vars", "input", "breakpoint", "exit", "quit", "help", "apply",
    "execfile", "file", "reload",
}  # fmt: skip
_IDENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*$")


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

    @property
    def importable(self) -> bool:
        """Both parts are Python identifiers (anything else fails to import at load time)."""
        return bool(_IDENT.match(self.module) and _IDENT.match(self.name))


def _denied(module: str, name: str) -> str | None:
    parts = module.split(".")
    for i in range(len(parts), 0, -1):
        if ".".join(parts[:i]) in _DENY_MODULES:
            return f"deny list: {module} can run commands or touch files and the network"
    head = name.split(".")[0]
    if (module, name) in _DENY_NAMES or (module, head) in _DENY_NAMES:
        return f"deny list: {module}.{name} loads or calls other code"
    if module in ("builtins", "__builtin__") and head in _DENY_BUILTINS:
        return f"deny list: builtins.{head} can evaluate code or reach any object"
    if module == "uuid" and head != "UUID":
        return "deny list: uuid helpers run commands"
    return None


def _allowed(module: str, name: str) -> bool:
    if name in _WEIGHTS_ONLY.get(module, ()) or name in _PLAIN_DATA.get(module, ()):
        return True
    if module in _TORCH_CLASS_MODULES and _TORCH_CLASS.match(name):
        return True
    return module == "numpy.dtypes" and _NUMPY_DTYPES.match(name) is not None


def classify(module: str, name: str) -> tuple[Level, str]:
    """Classify one imported name (see the module docstring)."""
    if _allowed(module, name):
        return "safe", ""
    denied = _denied(module, name)
    if denied:
        return "dangerous", denied
    if _CLASS_NAME.match(name) and any(
        module == p.rstrip(".") or module.startswith(p) for p in _LIBRARY_PREFIXES
    ):
        return "library", f"class of {module.split('.')[0]}: loading runs its constructor"
    return (
        "untrusted",
        "outside the weights-only allow list (not on the allowlist): torch.load("
        "weights_only=True) refuses it; loading it runs code that must be trusted",
    )
