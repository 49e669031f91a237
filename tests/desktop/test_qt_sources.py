"""PySide6's import hook must not keep every imported module's source (issue 18)."""

from __future__ import annotations

import importlib
import linecache
import sys
import traceback

import PySide6.QtCore  # loads PySide6's import hook
import pytest

from desktop.qt_sources import CHECK, FEATURE_MODULE, forget_module_sources

pytestmark = pytest.mark.desktop

USES_QT = "from PySide6.QtCore import QObject\n\n\ndef fails():\n    raise ValueError('line kept')\n"
PLAIN = "def fails():\n    raise ValueError('line kept')\n"


@pytest.fixture
def feature(monkeypatch, tmp_path):
    """PySide6's feature module, its check restored after the test; tmp_path importable."""
    module = sys.modules[FEATURE_MODULE]
    monkeypatch.setattr(module, CHECK, getattr(module, CHECK))
    monkeypatch.syspath_prepend(str(tmp_path))
    yield module
    for name in [name for name in sys.modules if name.startswith("qt_sources_probe_")]:
        del sys.modules[name]


def fresh_module(tmp_path, name: str, text: str):
    path = tmp_path / f"{name}.py"
    path.write_text(text, encoding="utf-8")
    importlib.invalidate_caches()
    # An import statement: PySide6 hooks builtins.__import__, not importlib.import_module.
    return str(path), __import__(name)


def test_without_the_wrapper_pyside_keeps_the_source(feature, tmp_path):
    path, _module = fresh_module(tmp_path, "qt_sources_probe_before", PLAIN)
    assert path in linecache.cache  # what the wrapper is for: PySide6 6.11 does this


def test_imports_leave_no_source_behind_and_pyside_gets_the_same_answer(feature, tmp_path):
    assert forget_module_sources()
    assert linecache.cache == {}
    qt_path, qt_module = fresh_module(tmp_path, "qt_sources_probe_qt", USES_QT)
    plain_path, plain_module = fresh_module(tmp_path, "qt_sources_probe_plain", PLAIN)
    assert qt_path not in linecache.cache and plain_path not in linecache.cache
    assert feature.pyside_feature_dict["qt_sources_probe_qt"] == 0      # uses PySide6
    assert feature.pyside_feature_dict["qt_sources_probe_plain"] == -1  # does not
    # A traceback still shows the line: linecache reads the file again when asked.
    with pytest.raises(ValueError) as raised:
        plain_module.fails()
    assert "raise ValueError('line kept')" in "".join(traceback.format_tb(raised.tb))
    assert qt_module.QObject is PySide6.QtCore.QObject


def test_installing_twice_wraps_once(feature):
    assert forget_module_sources() and forget_module_sources()
    check = getattr(feature, CHECK)
    assert check.forgets_sources
    assert not getattr(check.__closure__[0].cell_contents, "forgets_sources", False)
