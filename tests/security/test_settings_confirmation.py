"""The Settings view asks, in plain words, before an e-mail password or an API key travels
unencrypted, and resends the same form with the user's yes."""

from __future__ import annotations

import asyncio

import pytest
from PySide6.QtCore import QObject, QTimer, Signal
from PySide6.QtWidgets import QMessageBox

from backend.config import AppSettings
from desktop.client import ApiRequestError
from desktop.views.settings_view import SettingsView

pytestmark = pytest.mark.desktop

CODE = "insecure_transport_not_confirmed"


class _Client:
    """The API as the view sees it: refuses an unconfirmed unencrypted password."""

    def __init__(self):
        self.patches: list[dict] = []

    async def patch_settings(self, **changes):
        self.patches.append(changes)
        if not changes["smtp"].get("insecureTransportConfirmed"):
            raise ApiRequestError(422, CODE, "Your e-mail password would travel unencrypted.",
                                  fields=["smtp.security", "smtp.insecureTransportConfirmed"])
        saved = AppSettings().model_dump(mode="json", by_alias=True)
        return {**saved, "smtp": {**saved["smtp"], **changes["smtp"]}}


class _Controller(QObject):
    views_invalidated = Signal(object)
    runtime_ready = Signal(object)

    def __init__(self):
        super().__init__()
        self.client = _Client()

    def call(self, request, on_done, on_error=None, *, name=""):
        try:
            result = asyncio.run(request(self.client))
        except Exception as error:  # noqa: BLE001 - handed to the view, as the shell does
            on_error(error)
        else:
            on_done(result)


@pytest.fixture
def view(qtbot):
    controller = _Controller()
    widget = SettingsView(controller)
    qtbot.addWidget(widget)
    widget.smtp_host.setText("mail.example.com")
    widget.smtp_security.setCurrentIndex(widget.smtp_security.findData("none"))
    widget.smtp_user.setText("ada")
    widget.smtp_from.setText("ada@example.com")
    return widget


def the_question(view) -> QMessageBox:
    boxes = [box for box in view.findChildren(QMessageBox) if box.isVisible()]
    assert len(boxes) == 1, "Save returned with the question open: no nested event loop"
    return boxes[0]


@pytest.mark.parametrize("answer", ["Send it anyway", "Don't save"])
def test_an_unencrypted_password_is_asked_about_and_resent_only_with_a_yes(qtbot, view, answer):
    view.loaded = {"smtp": {"insecureTransportConfirmed": True}}  # an old yes is not reused
    # A nested event loop (exec) would hold the click until this closes the question.
    QTimer.singleShot(3000, lambda: [box.reject() for box in view.findChildren(QMessageBox)])
    view.save_button.click()  # as the user saves: the button passes its checked state
    patches = view.controller.client.patches
    assert "insecureTransportConfirmed" not in patches[0]["smtp"]
    question = the_question(view)
    assert "Your e-mail password would travel unencrypted to mail.example.com" in question.text()
    assert "Send it anyway?" in question.text()
    assert view.status.text() == "Waiting for your answer…"
    next(button for button in question.buttons() if button.text() == answer).click()
    qtbot.waitUntil(lambda: view.status.text() != "Waiting for your answer…", timeout=5000)
    if answer == "Send it anyway":
        assert len(patches) == 2 and patches[1]["smtp"]["insecureTransportConfirmed"] is True
        assert view.status.text() == "Saved."
    else:
        assert len(patches) == 1
        assert view.status.text() == ("Nothing was saved: the password or key would travel "
                                      "unencrypted.")
        assert not any(label.isVisibleTo(view) and label.text() for label in view.errors.values()), (
            "an allowed security choice is not marked wrong")
