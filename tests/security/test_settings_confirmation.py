"""The Settings view asks, in plain words, before an e-mail password or an API key travels
unencrypted, and resends the same form with the user's yes."""

from __future__ import annotations

import asyncio

import pytest
from PySide6.QtCore import QObject, Signal

from backend.config import AppSettings
from desktop.client import ApiRequestError
from desktop.views import settings_view
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


@pytest.mark.parametrize("answer", [True, False])
def test_an_unencrypted_password_is_asked_about_and_resent_only_with_a_yes(view, monkeypatch,
                                                                          answer):
    asked = []

    def ask(parent, section, where):
        asked.append((section, where, settings_view.UNENCRYPTED_WORDS[section].format(
            where=where)))
        return answer

    monkeypatch.setattr(settings_view, "ask_to_send_unencrypted", ask)
    view.loaded = {"smtp": {"insecureTransportConfirmed": True}}  # an old yes is not reused
    view.save_button.click()  # as the user saves: the button passes its checked state
    patches = view.controller.client.patches
    assert "insecureTransportConfirmed" not in patches[0]["smtp"]
    assert [(section, where) for section, where, _words in asked] == [
        ("smtp", "mail.example.com")]
    assert "Your e-mail password would travel unencrypted" in asked[0][2]
    assert "Send it anyway?" in asked[0][2]
    if answer:
        assert len(patches) == 2 and patches[1]["smtp"]["insecureTransportConfirmed"] is True
        assert view.status.text() == "Saved."
    else:
        assert len(patches) == 1
        assert "Nothing was saved" in view.status.text()
