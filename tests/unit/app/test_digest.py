"""What an app is, for recording its whole answers: declared paths, globs and versions, or its module."""

from __future__ import annotations

from pathlib import Path

import pytest

from pytest_omk.app.digest import app_digest
from pytest_omk.errors import ConfigError


def project(tmp_path: Path) -> Path:
    (tmp_path / "app").mkdir()
    (tmp_path / "app" / "main.py").write_text("VERSION = 1\n")
    (tmp_path / "app" / "prompts.txt").write_text("Be brief.\n")
    (tmp_path / "app" / "__pycache__").mkdir()
    (tmp_path / "app" / "__pycache__" / "main.cpython-311.pyc").write_bytes(b"\0")
    return tmp_path


def test_a_change_to_any_declared_file_changes_the_digest(tmp_path: Path) -> None:
    root = project(tmp_path)
    before = app_digest(["app"], rootdir=root)
    assert app_digest(["app/*.py", "app/prompts.txt"], rootdir=root).of == ("app/*.py", "app/prompts.txt")
    (root / "app" / "__pycache__" / "main.cpython-311.pyc").write_bytes(b"\1")  # caches do not count
    assert app_digest(["app"], rootdir=root) == before
    (root / "app" / "prompts.txt").write_text("Be verbose.\n")
    after = app_digest(["app"], rootdir=root)
    assert after.sha256 != before.sha256 and len(after.sha256) == 16
    assert after.identity() == {"sha256": after.sha256, "of": ["app"]}


def test_a_version_line_is_part_of_the_digest(tmp_path: Path) -> None:
    one, two = (app_digest([f"version:{v}"], rootdir=tmp_path).sha256 for v in ("1.0", "1.1"))
    assert one != two


def test_without_a_declaration_the_callables_module_is_the_app(tmp_path: Path) -> None:
    digest = app_digest(
        [], rootdir=Path(__file__).parent, app=test_without_a_declaration_the_callables_module_is_the_app
    )
    assert digest.of == ("test_digest.py",)


@pytest.mark.parametrize(
    ("declared", "app", "message"),
    [
        (["missing/*.py"], None, r"'missing/\*\.py' matches no file"),
        ([], None, "omk_app_digest is needed"),
        ([], len, "omk_app_digest is needed"),  # a builtin has no source file
    ],
)
def test_what_cannot_be_digested_is_a_config_error(
    tmp_path: Path, declared: list[str], app: object, message: str
) -> None:
    with pytest.raises(ConfigError, match=message):
        app_digest(declared, rootdir=tmp_path, app=app)
