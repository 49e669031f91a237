"""The desktop shell on a data folder written by a newer JobCtrl: the real Supervisor
refuses it before starting any service, and the window's start-failure banner says why
and what to do."""

from __future__ import annotations

import pytest

from backend.store.db import _migration_files, migrate
from desktop.shell import ShellController
from desktop.views.main_window import MainWindow
from tests.app_db import connect_db

pytestmark = pytest.mark.desktop


def test_a_database_from_a_newer_jobctrl_is_shown_in_the_start_banner(qtbot, qloop, tmp_path):
    database = tmp_path / "jobctrl.db"
    migrate(database)
    conn = connect_db(database, isolation_level=None)
    try:
        conn.execute("INSERT INTO schema_migrations VALUES (9999, '9999_future.sql',"
                     " '2030-01-01T00:00:00.000Z')")
    finally:
        conn.close()

    controller = ShellController(tmp_path)
    window = MainWindow(controller)
    qtbot.addWidget(window)
    window.show()
    with qtbot.waitSignal(controller.start_failed, timeout=30_000) as failed:
        controller.start()

    known = _migration_files()[-1][0]
    expected = (f"This data folder was written by a newer JobCtrl (database version 9999);"
                f" this JobCtrl knows up to {known}. Install the newer version again.")
    assert expected in failed.args[0]
    assert window.banner.isVisible()
    assert expected in window.banner.message.text()
    assert not window.discover_button.isEnabled()
    assert controller.info is None
    with qtbot.waitSignal(controller.stopped, timeout=10_000):
        controller.shutdown()
