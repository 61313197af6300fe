"""Client harness manifests (docs/CLIENTS.md): ``clients/<language>/<name>/manifest.json``
found in kvperf's shipped folder and in the user's folders, validated, and their
placeholders (``{src}``, ``{install}``, ``{python}``, ``{cache}``) expanded.

A client's install directory is ``~/.cache/kvperf/clients/<name>-<12 hex of a sha256>`` over
the manifest and every source file of its language folder (``clients/<language>/``: the
harness and the shared code beside it, which Go, Java and C compile at install time): a
changed manifest or harness gets a fresh one. It is installed when its ``.installed`` stamp
holds that hash.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import sys
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from kvperf.core.errors import ConfigError, UsageError
from kvperf.core.kinds import Concurrency

LANGUAGES = ("python", "node", "go", "java", "c", "ruby")
STAMP = ".installed"
CLIENTS_DIR_ENV = "KVPERF_CLIENTS_DIR"  # extra folders of manifests (os.pathsep-separated)
CACHE_ENV = "KVPERF_CLIENTS_CACHE"  # the clients' cache instead of ~/.cache/kvperf/clients
_NAME = re.compile(r"^[a-z0-9][a-z0-9._-]*$")
_KEYS = {"name", "language", "library", "version", "summary", "models", "install", "run",
         "env", "requires", "checkout"}
_CHECKOUT_KEYS = {"install", "run", "env"}
_REQUIRED = ("name", "language", "library", "version", "summary", "install", "run")
_PLACEHOLDER = re.compile(r"\{(\w+)\}")
PLACEHOLDERS = ("src", "install", "python", "cache", "kits")
# only in a manifest's "checkout" section: the library's source at a commit, and the
# release's install directory (what the checkout's build reuses: a venv, a module cache)
CHECKOUT_PLACEHOLDERS = (*PLACEHOLDERS, "checkout", "release")


def cache_root() -> Path:
    """Where clients are installed: ``$KVPERF_CLIENTS_CACHE`` or ~/.cache/kvperf/clients."""
    env = os.environ.get(CACHE_ENV)
    return Path(env) if env else Path.home() / ".cache" / "kvperf" / "clients"


@dataclass(frozen=True)
class Checkout:
    """A manifest's ``checkout`` section: how the harness runs its library built from a
    commit of the library's repository (``--client NAME@REF``, clients/checkout.py) instead
    of the pinned release. ``run`` None: the manifest's own."""

    install: tuple[tuple[str, ...], ...]
    run: tuple[str, ...] | None
    env: tuple[tuple[str, str], ...]


@dataclass(frozen=True)
class Source:
    """Where a checkout manifest's library comes from: the repository as the user gave it,
    the ref as given, its commit, and the release's install directory."""

    repo: str
    ref: str
    sha: str
    release_dir: Path


@dataclass(frozen=True)
class Manifest:
    """One client harness: what it measures, how it is installed and run."""

    name: str
    language: str
    library: str
    version: str
    summary: str
    install: tuple[tuple[str, ...], ...]
    run: tuple[str, ...]
    env: tuple[tuple[str, str], ...]
    requires: tuple[tuple[str, ...], ...]
    folder: Path  # {src}: the manifest's folder, absolute
    digest: str  # sha256 of the manifest and its language folder's sources
    # the concurrency models the harness runs; () when the manifest does not say (a user's
    # harness may leave it out: a model it lacks then fails its trials, not the plan)
    models: tuple[Concurrency, ...] = ()
    checkout: Checkout | None = None  # how to run the library at a commit (NAME@REF)
    source: Source | None = None  # set: this is the library at that commit

    @property
    def key(self) -> str:
        """``NAME``, or ``NAME@REF`` for the library at a commit."""
        return self.name + (f"@{self.source.ref}" if self.source else "")

    @property
    def install_dir(self) -> Path:
        return cache_root() / f"{self.name}-{self.digest[:12]}"

    @property
    def stamp(self) -> Path:
        return self.install_dir / STAMP

    @property
    def installed(self) -> bool:
        """The stamp holds this manifest's hash (a changed manifest is not installed)."""
        try:
            return self.stamp.read_text().strip() == self.digest
        except OSError:
            return False

    def values(self) -> dict[str, str]:
        values = {"src": str(self.folder), "install": str(self.install_dir),
                  "python": sys.executable, "cache": str(cache_root()),
                  "kits": str(next(iter(shipped_dirs()), ""))}
        if self.source is not None:
            values |= {"checkout": str(self.install_dir / "checkout"),
                       "release": str(self.source.release_dir)}
        return values

    def expand(self, argv: Sequence[str]) -> tuple[str, ...]:
        return tuple(expand(word, self.values()) for word in argv)

    def environment(self, base: Mapping[str, str] | None = None) -> dict[str, str]:
        """``base`` (default: kvperf's environment) with the manifest's env expanded."""
        values = self.values()
        return {**(os.environ if base is None else base),
                **{k: expand(v, values) for k, v in self.env}}

    def describe(self) -> str:
        return f"{self.key} ({self.library} {self.version}, {self.language})"

    def refuses(self, model: Concurrency) -> str | None:
        """Why this harness cannot run ``model`` (its manifest's ``models`` lack it); None
        when it can or the manifest does not say."""
        if not self.models or model in self.models:
            return None
        return (f"client {self.name} runs concurrency models "
                f"{', '.join(m.value for m in self.models)}, not {model.value} "
                "(its manifest's 'models')")


@dataclass(frozen=True)
class Subject:
    """A client as a run measures it: its manifest, the runtime found before it ran (the
    first line of its first ``requires`` command's output) and the concurrency model it was
    named with (``--client redis-py:pool``; None: the run's)."""

    manifest: Manifest
    runtime: str | None
    model: Concurrency | None = None

    @property
    def key(self) -> str:
        """How the user named it: ``NAME``, ``NAME@REF``, either with ``:MODEL``."""
        return self.manifest.key + (f":{self.model}" if self.model else "")

    def label(self, model: Concurrency | None = None) -> str:
        """``redis-py 8.1.0 pool`` (``redis-py@main git:0123456789ab pool`` at a commit): the
        client as tables and sides call it."""
        chosen = self.model or model
        return (f"{self.manifest.key} {self.manifest.version}"
                + (f" {chosen}" if chosen else ""))


def split_ref(name: str) -> tuple[str, str | None]:
    """``NAME@REF`` → (name, ref); ``NAME`` → (name, None); UsageError for an empty ref."""
    bare, at, ref = name.partition("@")
    if at and not ref:
        raise UsageError(f"--client {name}: a ref is missing after '@' (NAME@REF: a branch, "
                         "tag or commit of the library's repository, --client-repo)")
    return bare, ref or None


def split_key(text: str) -> tuple[str, Concurrency | None]:
    """``NAME[@REF][:MODEL]`` → (name with its ref, model); UsageError (exit 2) for an
    unknown model. A git ref cannot hold ':', so the last ':' starts the model."""
    name, _, model = text.rpartition(":") if ":" in text else (text, "", "")
    if not model:
        return name, None
    try:
        return name, Concurrency(model)
    except ValueError:
        known = ", ".join(c.value for c in Concurrency)
        raise UsageError(f"--client {text}: {model!r} is not a concurrency model "
                         f"({known})") from None


def expand(text: str, values: Mapping[str, str]) -> str:
    """``{name}`` placeholders replaced (every one was checked when the manifest loaded)."""
    return _PLACEHOLDER.sub(lambda m: values[m.group(1)], text)


def _argv(value: object, where: str, known: tuple[str, ...] = PLACEHOLDERS
          ) -> tuple[str, ...]:
    if (not isinstance(value, list) or not value
            or not all(isinstance(w, str) and w for w in value)):
        raise ValueError(f"{where} must be a non-empty list of non-empty strings (an argv)")
    for word in value:
        unknown = [p for p in _PLACEHOLDER.findall(word) if p not in known]
        if unknown:
            raise ValueError(f"{where}: unknown placeholder {{{unknown[0]}}} (known: "
                             + ", ".join(f"{{{p}}}" for p in known) + ")")
    return tuple(value)


def _steps(value: object, where: str, known: tuple[str, ...] = PLACEHOLDERS
           ) -> tuple[tuple[str, ...], ...]:
    if not isinstance(value, list):
        raise ValueError(f"{where} must be a list of argv lists")
    return tuple(_argv(step, f"{where}[{i}]", known) for i, step in enumerate(value))


def _env(value: object, where: str, known: tuple[str, ...] = PLACEHOLDERS
         ) -> tuple[tuple[str, str], ...]:
    if not isinstance(value, dict) or not all(isinstance(v, str) for v in value.values()):
        raise ValueError(f"'{where}' must be an object of strings")
    for key, text in value.items():
        _argv([text], f"{where}.{key}", known)
    return tuple(sorted(value.items()))


def _checkout(value: object) -> Checkout | None:
    """The ``checkout`` section (None when the manifest has none)."""
    if value is None:
        return None
    if not isinstance(value, dict):
        raise ValueError("'checkout' must be an object (install, run, env)")
    unknown = sorted(set(value) - _CHECKOUT_KEYS)
    if unknown:
        raise ValueError(f"checkout: unknown key {unknown[0]!r} (known: "
                         f"{', '.join(sorted(_CHECKOUT_KEYS))})")
    known = CHECKOUT_PLACEHOLDERS
    run = value.get("run")
    return Checkout(_steps(value.get("install", []), "checkout.install", known),
                    None if run is None else _argv(run, "checkout.run", known),
                    _env(value.get("env", {}), "checkout.env", known))


def _fields(data: Mapping[str, object]) -> dict[str, str]:
    missing = [k for k in _REQUIRED if k not in data]
    if missing:
        raise ValueError(f"missing key {missing[0]!r}")
    unknown = sorted(set(data) - _KEYS)
    if unknown:
        raise ValueError(f"unknown key {unknown[0]!r} (known: {', '.join(sorted(_KEYS))})")
    texts = {k: data[k] for k in ("name", "language", "library", "version", "summary")}
    bad = [k for k, v in texts.items() if not isinstance(v, str) or not v]
    if bad:
        raise ValueError(f"{bad[0]!r} must be a non-empty string")
    if not _NAME.match(str(texts["name"])):
        raise ValueError(f"name {texts['name']!r}: lower-case letters, digits, '.', '_', '-'")
    if texts["language"] not in LANGUAGES:
        raise ValueError(f"language {texts['language']!r} is not one of {', '.join(LANGUAGES)}")
    return {k: str(v) for k, v in texts.items()}


def parse_manifest(raw: bytes, folder: Path, sources: bytes = b"") -> Manifest:
    """A manifest's bytes → Manifest; ValueError naming the key that is wrong. ``sources``:
    what else the install hash covers (``source_bytes``)."""
    try:
        data = json.loads(raw)
    except (ValueError, UnicodeDecodeError) as exc:
        raise ValueError(f"not JSON: {exc}") from None
    if not isinstance(data, dict):
        raise ValueError("must be a JSON object")
    texts = _fields(data)
    return Manifest(texts["name"], texts["language"], texts["library"], texts["version"],
                    texts["summary"], _steps(data["install"], "install"),
                    _argv(data["run"], "run"), _env(data.get("env", {}), "env"),
                    _steps(data.get("requires", []), "requires"), folder.resolve(),
                    hashlib.sha256(raw + sources).hexdigest(),
                    _models(data.get("models", [])), _checkout(data.get("checkout")))


def _models(value: object) -> tuple[Concurrency, ...]:
    """The manifest's ``models``: distinct names of concurrency models."""
    known = [c.value for c in Concurrency]
    if (not isinstance(value, list) or not all(isinstance(m, str) for m in value)
            or len(set(value)) != len(value)):
        raise ValueError(f"'models' must be a list of distinct model names ({', '.join(known)})")
    wrong = [m for m in value if m not in known]
    if wrong:
        raise ValueError(f"models: {wrong[0]!r} is not a concurrency model ({', '.join(known)})")
    return tuple(Concurrency(m) for m in value)


def source_bytes(language_dir: Path) -> bytes:
    """Every file under a language folder (paths and contents, in path order; byte-code
    caches left out): what a harness is built from."""
    files = sorted(p for p in language_dir.rglob("*")
                   if p.is_file() and "__pycache__" not in p.parts)
    return b"".join(str(p.relative_to(language_dir)).encode() + b"\0" + p.read_bytes()
                    for p in files)


def load_manifest(path: Path) -> Manifest:
    """One manifest file; ConfigError (exit 2) naming the file and what is wrong."""
    try:
        return parse_manifest(path.read_bytes(), path.parent, source_bytes(path.parent.parent))
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read it: {exc.strerror or exc}") from None
    except ValueError as exc:
        raise ConfigError(f"{path}: {exc}") from None


def shipped_dirs() -> list[Path]:
    """kvperf's own harnesses: the package's copy (``kvperf/harnesses``, made by the
    build, setup.py) when installed from a wheel, else the source tree's ``clients/``."""
    package = Path(__file__).resolve().parents[1]
    candidates = [package / "harnesses", package.parents[1] / "clients"]
    return [d for d in candidates if d.is_dir()][:1]


def search_dirs(extra: Iterable[Path] = ()) -> list[Path]:
    """Folders holding ``<language>/<name>/manifest.json``: the shipped ones, then
    ``$KVPERF_CLIENTS_DIR``'s, then ``--clients-dir``'s (a later one may not reuse a name)."""
    env = [Path(p) for p in os.environ.get(CLIENTS_DIR_ENV, "").split(os.pathsep) if p]
    return [*shipped_dirs(), *env, *extra]


def discover(dirs: Iterable[Path]) -> dict[str, Manifest]:
    """Every manifest under ``dirs`` by name; ConfigError for a bad one, a missing folder
    or a name used twice."""
    found: dict[str, Manifest] = {}
    for root in dirs:
        if not root.is_dir():
            raise ConfigError(f"clients folder {root} does not exist (expected "
                              "<language>/<name>/manifest.json files in it)")
        for path in sorted(root.glob("*/*/manifest.json")):
            manifest = load_manifest(path)
            if manifest.name in found:
                raise ConfigError(f"{path}: client name {manifest.name!r} is also used by "
                                  f"{found[manifest.name].folder / 'manifest.json'}")
            found[manifest.name] = manifest
    return found


def select(known: Mapping[str, Manifest], names: Sequence[str],
           unique: bool = True) -> list[Manifest]:
    """The named clients in order (once each unless not ``unique``); UsageError (exit 2)
    naming an unknown one and every known name."""
    unknown = [n for n in names if n not in known]
    if unknown:
        listed = ", ".join(sorted(known)) or "none"
        raise UsageError(f"unknown client {unknown[0]!r}; known clients: {listed} "
                         "(kvperf clients lists them; --clients-dir adds your own)")
    return [known[n] for n in (dict.fromkeys(names) if unique else names)]
