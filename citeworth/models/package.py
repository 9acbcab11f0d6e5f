"""``citeworth model package``: an exported model as a wheel, and the installed ones found again.

As spaCy ships pipelines (``spacy package``), a model is a versioned pip package:
``citeworth-model-<name>`` holds the exported folder as package data and declares it under the entry
point group ``citeworth.models``, where ``citeworth check`` and ``citeworth lsp`` find it without a
flag. The wheel is written directly (the format is a zip with three metadata files), deterministic:
the same folder and version give the same bytes.
"""

from __future__ import annotations

import base64
import hashlib
import importlib.metadata
import re
import zipfile
from dataclasses import dataclass
from pathlib import Path

from citeworth.core.version import tool_version
from citeworth.models.exported import CARD_FILE, SETTINGS_FILE, ExportError, read_settings, verify

ENTRY_POINTS = "citeworth.models"
PREFIX = "citeworth-model-"
MODEL_FOLDER = "model"  # the exported folder inside the package
_NAME = re.compile(r"^[a-z0-9]+(?:[-_.][a-z0-9]+)*$")
_VERSION = re.compile(r"^\d+(?:\.\d+)*$")
_ZIP_TIME = (1980, 1, 1, 0, 0, 0)  # the earliest a zip can say: no build time in the bytes


@dataclass(frozen=True)
class InstalledModel:
    """A model package found by its entry point: its name, distribution, version and folder."""

    name: str
    distribution: str
    version: str
    path: Path

    @property
    def installed_at(self) -> float:
        """When pip wrote it (its settings file's time): the newest is the default model."""
        return (self.path / SETTINGS_FILE).stat().st_mtime


def installed_models() -> list[InstalledModel]:
    """Every model package installed in this environment, by name."""
    found = []
    for entry in importlib.metadata.entry_points(group=ENTRY_POINTS):
        try:
            path = Path(entry.load()())
        except Exception as exc:  # a broken package must not hide the others; say which
            raise ExportError(f"the model package entry point {entry.name} ({entry.value}) fails to load: "
                              f"{exc}; reinstall it or `pip uninstall` it") from exc
        dist = entry.dist
        found.append(InstalledModel(entry.name, dist.name if dist else "?", dist.version if dist else "?",
                                    path))
    return sorted(found, key=lambda model: model.name)


def newest_installed() -> InstalledModel | None:
    models = installed_models()
    return max(models, key=lambda model: model.installed_at) if models else None


def package_model(folder: Path, dist: Path, version: str = "1.0.0", name: str | None = None) -> Path:
    """Write the wheel of the exported model in ``folder`` into ``dist``; its path."""
    folder = Path(folder)
    settings = read_settings(folder)
    verify(folder, settings, all_files=True)
    name = (name or settings.get("package") or settings["name"]).lower()
    if not _NAME.match(name):
        raise ExportError(f"model package name {name!r}: lower-case letters, digits and - _ . only "
                          "(--name NAME)")
    if not _VERSION.match(version):
        raise ExportError(f"version {version!r}: numbers separated by dots, e.g. 1.0.0")
    distribution = PREFIX + name
    module = distribution.replace("-", "_").replace(".", "_")
    dist_info = f"{module}-{version}.dist-info"
    files: dict[str, bytes] = {f"{module}/__init__.py": _init(distribution, settings).encode()}
    for path in sorted(folder.iterdir()):
        if path.is_file():
            files[f"{module}/{MODEL_FOLDER}/{path.name}"] = path.read_bytes()
    files[f"{dist_info}/METADATA"] = _metadata(distribution, version, (folder / CARD_FILE).read_text("utf-8"))
    files[f"{dist_info}/WHEEL"] = (b"Wheel-Version: 1.0\nGenerator: citeworth model package\n"
                                   b"Root-Is-Purelib: true\nTag: py3-none-any\n")
    files[f"{dist_info}/entry_points.txt"] = f"[{ENTRY_POINTS}]\n{name} = {module}:model_path\n".encode()
    record = [f"{path},sha256={_digest(content)},{len(content)}" for path, content in files.items()]
    files[f"{dist_info}/RECORD"] = ("\n".join([*record, f"{dist_info}/RECORD,,"]) + "\n").encode()
    dist.mkdir(parents=True, exist_ok=True)
    wheel = dist / f"{module}-{version}-py3-none-any.whl"
    partial = wheel.with_name(wheel.name + ".part")
    with zipfile.ZipFile(partial, "w", zipfile.ZIP_DEFLATED) as archive:
        for path, content in files.items():
            info = zipfile.ZipInfo(path, _ZIP_TIME)
            info.compress_type = zipfile.ZIP_DEFLATED
            info.external_attr = 0o644 << 16
            archive.writestr(info, content)
    partial.replace(wheel)
    return wheel


def _init(distribution: str, settings: dict) -> str:
    return (f'"""{distribution}: the citeworth model {settings["name"]!r} ({settings["kind"]}), exported for '
            f'ONNX Runtime; its card is {MODEL_FOLDER}/{CARD_FILE}."""\n\n'
            "from pathlib import Path\n\n\n"
            "def model_path() -> Path:\n"
            f'    """The exported model folder (``citeworth check --model`` takes it)."""\n'
            f'    return Path(__file__).parent / "{MODEL_FOLDER}"\n')


def _metadata(distribution: str, version: str, card: str) -> bytes:
    """Core metadata 2.1; the model card (without its YAML header) as the long description."""
    body = card.split("\n---\n", 1)[1] if card.startswith("---\n") and "\n---\n" in card else card
    head = (f"Metadata-Version: 2.1\nName: {distribution}\nVersion: {version}\n"
            f"Summary: A citeworth cite-worthiness model (ONNX Runtime), by citeworth {tool_version()}\n"
            "Requires-Python: >=3.11\nRequires-Dist: citeworth\nDescription-Content-Type: text/markdown\n\n")
    return (head + body.lstrip("\n")).encode()


def _digest(content: bytes) -> str:
    return base64.urlsafe_b64encode(hashlib.sha256(content).digest()).rstrip(b"=").decode()
