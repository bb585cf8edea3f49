"""No module imports an underscore name from another package of okl (a name private to its package
is not another package's API): ``from okl.runtime.base import _event_state`` in okl.engine would
fail here. Names from a private module (``okl._jit``, ``okl._compiled``) are that module's API."""

import ast
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src"


def _package_of(module: str, is_package: bool) -> str:
    return module if is_package else module.rpartition(".")[0]


def cross_package_private_imports(src: Path = SRC) -> list[str]:
    found = []
    for path in sorted((src / "okl").rglob("*.py")):
        rel = path.relative_to(src).with_suffix("")
        module = ".".join(rel.parts[:-1] if rel.name == "__init__" else rel.parts)
        here = _package_of(module, rel.name == "__init__")
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if not (isinstance(node, ast.ImportFrom) and node.module and node.module.split(".")[0] == "okl"):
                continue
            source = node.module
            there = _package_of(source, (src / Path(*source.split("."))).is_dir())
            for alias in node.names:
                if alias.name.startswith("_") and not alias.name.startswith("__") and there != here:
                    found.append(f"{module}:{node.lineno} imports {alias.name} from {source}")
    return found


def test_no_underscore_name_is_imported_across_packages():
    assert cross_package_private_imports() == []


def test_the_check_sees_such_an_import(tmp_path):
    """The scan itself: an engine module importing a runtime private is reported, a public name not."""
    for package in ("okl", "okl/engine", "okl/runtime"):
        (tmp_path / package).mkdir(parents=True, exist_ok=True)
        (tmp_path / package / "__init__.py").write_text("")
    (tmp_path / "okl" / "engine" / "core.py").write_text("from okl.runtime.base import _secret, public\n")
    assert cross_package_private_imports(tmp_path) == ["okl.engine.core:1 imports _secret from okl.runtime.base"]
