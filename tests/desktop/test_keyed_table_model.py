"""KeyedTableModel: refetched pages become precise row notifications, never a reset."""

from __future__ import annotations

import pytest
from PySide6.QtCore import QItemSelectionModel, QSortFilterProxyModel
from PySide6.QtWidgets import QTableView

from desktop.models.keyed_table_model import Column, KeyedTableModel, SortRole, field

pytestmark = pytest.mark.desktop


def rows(*pairs):
    return [{"id": key, "score": score} for key, score in pairs]


def model():
    return KeyedTableModel([Column("Id", field("id")),
                            Column("Score", field("score"), sort_value=lambda r: r["score"])],
                           key=lambda r: r["id"])


def record(m):
    seen = []
    m.modelReset.connect(lambda: seen.append("reset"))
    m.rowsInserted.connect(lambda _p, a, b: seen.append(("insert", a, b)))
    m.rowsRemoved.connect(lambda _p, a, b: seen.append(("remove", a, b)))
    m.dataChanged.connect(lambda a, b, _r=None: seen.append(("changed", a.row())))
    m.layoutChanged.connect(lambda *_: seen.append("layout"))
    return seen


def test_refetch_emits_only_the_differences(qtmodeltester):
    m = model()
    qtmodeltester.check(m)
    m.set_rows(rows(("a", 1), ("b", 2), ("c", 3)))
    seen = record(m)
    m.set_rows(rows(("a", 1), ("x", 9), ("c", 4), ("d", 5)))
    assert m.keys() == ["a", "x", "c", "d"]
    assert seen == [("remove", 1, 1), ("insert", 1, 1), ("insert", 3, 3), ("changed", 2)]
    assert m.data(m.index(2, 1)) == "4"
    qtmodeltester.check(m)


def test_unchanged_refetch_is_silent_and_patch_changes_one_row():
    m = model()
    m.set_rows(rows(("a", 1), ("b", 2)))
    seen = record(m)
    m.set_rows(rows(("a", 1), ("b", 2)))
    assert seen == []
    assert m.patch("b", {"score": 7}) is True
    assert m.patch("zz", {"score": 7}) is False
    assert seen == [("changed", 1)]


def test_reorder_keeps_the_selected_row_selected(qtbot):
    m = model()
    m.set_rows(rows(("a", 1), ("b", 2), ("c", 3)))
    view = QTableView()
    qtbot.addWidget(view)
    view.setModel(m)
    view.selectionModel().select(m.index(2, 0), QItemSelectionModel.SelectionFlag.ClearAndSelect
                                 | QItemSelectionModel.SelectionFlag.Rows)
    seen = record(m)
    m.set_rows(rows(("c", 3), ("a", 1), ("b", 2)))
    assert "reset" not in seen and "layout" in seen
    selected = {m.key_at(index.row()) for index in view.selectionModel().selectedRows()}
    assert selected == {"c"}


def test_a_sort_proxy_orders_by_the_sort_role():
    m = model()
    m.set_rows(rows(("a", 10), ("b", 2), ("c", 33)))
    proxy = QSortFilterProxyModel()
    proxy.setSourceModel(m)
    proxy.setSortRole(SortRole)
    proxy.sort(1)
    assert [proxy.data(proxy.index(r, 0)) for r in range(3)] == ["b", "a", "c"]
    m.patch("c", {"score": 0})
    assert proxy.data(proxy.index(0, 0)) == "c"
