"""Posting text is shown as text, never as Qt rich text.

Every text that comes from a posting, a board, a model, a file or a server's error
message is untrusted. Qt renders a label (``Qt.AutoText``) and a tooltip as HTML as soon
as ``Qt.mightBeRichText`` guesses it is markup, and its HTML loads ``<img src>`` from local
files: a posting whose location was ``<img src="/dev/zero">Berlin`` made the window read
/dev/zero until it aborted with std::bad_alloc.

Each view of the window is fed a hostile posting (every free-text field carries an
``<img>`` of a local canary file, bold, a link and a table) the way the other desktop tests
feed it (``apply`` with an API-shaped answer, ``show_error`` with an API error, events), and
then the whole window is walked generically (``hostile_findings``): every label, tooltip,
item model cell and rich text view under it, shown or not. A new tab of ``VIEW_TABS`` fails
``test_every_view_is_fed`` until this file feeds it.
"""

from __future__ import annotations

import html
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import QAbstractItemModel, QAbstractListModel, QModelIndex, Qt
from PySide6.QtGui import Qt as GuiQt
from PySide6.QtGui import QTextDocument
from PySide6.QtWidgets import (
    QAbstractItemView,
    QApplication,
    QComboBox,
    QHeaderView,
    QLabel,
    QSystemTrayIcon,
    QTabBar,
    QTextEdit,
    QWidget,
)

from desktop.client import ApiRequestError, StreamedEvent
from desktop.notifications import tray_sink
from desktop.plain_text import plain_tooltip
from desktop.shell import ShellController
from desktop.views.main_window import VIEW_TABS, MainWindow
from desktop.views.partials.jobs_table_model import COLUMNS as JOB_COLUMNS
from desktop.views.partials.jobs_table_model import LOCATION
from tests.desktop.recorded_operations import recorded
from tests.desktop.sample_events import sample_events

pytestmark = pytest.mark.desktop

might_be_rich_text = GuiQt.mightBeRichText

# The hostile posting's markup: any of these, unescaped, in a text Qt renders as rich text
# is a finding (the window's own markup uses none of them).
RAW_TAGS = ("<img", "<b>bold</b>", '<a href="http://evil.example/">', "<td>cell</td>")
JOB_KEY = "job_" + "c" * 24
ROLES = (Qt.ItemDataRole.DisplayRole, Qt.ItemDataRole.ToolTipRole)
MAX_ROWS = 50


def hostile(canary: Path, what: str = "text") -> str:
    """A field of a hostile posting: an image of a local file, bold, a link and a table
    (``what`` names the field, so a finding says which one leaked)."""
    return (f'<img src="file://{canary}">{what} <b>bold</b> '
            f'<a href="http://evil.example/">link</a> <table><tr><td>cell</td></tr></table>')


def _raw(text: str) -> bool:
    return any(tag in text for tag in RAW_TAGS)


def rendered_as_rich(text: str, text_format: Qt.TextFormat) -> bool:
    """Whether Qt renders ``text`` as HTML in a widget with ``text_format``."""
    if text_format == Qt.TextFormat.PlainText:
        return False
    return text_format == Qt.TextFormat.RichText or might_be_rich_text(text)


def _model_findings(name: str, model: QAbstractItemModel) -> tuple[list[str], list[str]]:
    findings, texts = [], []
    # A list model's columnCount is private in PySide6 (QListWidget's): one column.
    columns = 1 if isinstance(model, QAbstractListModel) else max(model.columnCount(QModelIndex()), 1)
    for row in range(min(model.rowCount(QModelIndex()), MAX_ROWS)):
        for column in range(columns):
            index = model.index(row, column, QModelIndex())
            texts.append(str(index.data(Qt.ItemDataRole.DisplayRole) or ""))
            tip = str(index.data(Qt.ItemDataRole.ToolTipRole) or "")
            texts.append(tip)
            if might_be_rich_text(tip) and _raw(tip):
                findings.append(f"{name}: cell ({row}, {column}) tooltip renders {tip!r}")
    return findings, texts


def widget_findings(widget: QWidget) -> tuple[list[str], list[str]]:
    """(findings, texts) of one widget: what of it Qt would render as the posting's HTML,
    and every text it shows (to check the walk saw the hostile text at all)."""
    name = f"{type(widget).__name__}#{widget.objectName() or '?'}"
    findings: list[str] = []
    texts = [widget.toolTip(), widget.whatsThis()]
    for kind, tip in (("tooltip", widget.toolTip()), ("what's this", widget.whatsThis())):
        if might_be_rich_text(tip) and _raw(tip):
            findings.append(f"{name}: {kind} renders {tip!r}")
    if isinstance(widget, QLabel):
        text = widget.text()
        texts.append(text)
        if rendered_as_rich(text, widget.textFormat()) and _raw(text):
            findings.append(f"{name}: label renders {text!r} ({widget.textFormat().name})")
    if isinstance(widget, QTextEdit):  # QTextBrowser too; QPlainTextEdit is plain
        document = widget.document()
        texts.append(document.toPlainText())
        if "<img" in document.toHtml():
            findings.append(f"{name}: its document holds an image: {document.toHtml()[:300]!r}")
    if isinstance(widget, QComboBox):
        for i in range(widget.count()):
            tip = str(widget.itemData(i, Qt.ItemDataRole.ToolTipRole) or "")
            texts += [widget.itemText(i), tip]
            if might_be_rich_text(tip) and _raw(tip):
                findings.append(f"{name}: item {i} tooltip renders {tip!r}")
    if isinstance(widget, QTabBar):
        for i in range(widget.count()):
            tip = widget.tabToolTip(i)
            texts.append(tip)
            if might_be_rich_text(tip) and _raw(tip):
                findings.append(f"{name}: tab {i} tooltip renders {tip!r}")
    if isinstance(widget, QAbstractItemView) and not isinstance(widget, QHeaderView) \
            and widget.model() is not None:
        found, shown = _model_findings(name, widget.model())
        findings += found
        texts += shown
    return findings, [text for text in texts if text]


def hostile_findings(root: QWidget) -> tuple[list[str], list[str]]:
    """Every widget under ``root`` (shown or not: a hidden label is shown later)."""
    findings, texts = [], []
    for widget in [root, *root.findChildren(QWidget)]:
        found, shown = widget_findings(widget)
        findings += found
        texts += shown
    return list(dict.fromkeys(findings)), texts


# -- the hostile posting, as each API answer carries it ----------------------------------------


def hostile_job(h: Callable[[str], str]) -> dict[str, Any]:
    ledger = {
        "method": "rules-v1",
        "cap": {"score": 15, "reason": h("cap reason")},
        "requirements": [
            {"kind": "skill", "label": h("requirement"), "importance": "must",
             "status": "met", "evidence": h("evidence"), "detail": None, "dealBreaker": False},
            {"kind": "location", "label": h("location requirement"), "importance": "must",
             "status": "missing", "evidence": None, "detail": h("detail"), "dealBreaker": True},
        ],
    }
    score = {"version": 2, "score": 15, "rationale": h("rationale"), "matched": [h("matched")],
             "missing": [h("missing")], "provider": "offline", "model": "offline-heuristic",
             "ledger": ledger}
    stages = [{"stage": "enrich", "status": "failed", "errorCode": h("error code")},
              {"stage": "score", "status": "succeeded"},
              *({"stage": s, "status": "skipped", "blockedReason": "below_min_fit_score"}
                for s in ("tailor", "cover", "pdf"))]
    return {"jobId": JOB_KEY, "title": h("title"), "company": h("company"),
            "location": h("location"), "remote": "remote", "url": "https://example.com/job",
            "score": score, "stages": stages, "fitThreshold": {"minFitScore": 50, "below": True},
            "resume": {"content": {"name": h("résumé name"), "sections": []}},
            "coverLetter": None, "artifacts": [], "userStatus": None,
            "materialRejections": [{"kind": "resume", "claim": h("rejected claim")}]}


def hostile_row(h: Callable[[str], str]) -> dict[str, Any]:
    return {"jobId": JOB_KEY, "title": h("title"), "company": h("company"),
            "location": h("location"), "remote": "remote", "score": 15, "minFitScore": 50,
            "stages": {"enrich": "succeeded", "score": "succeeded"}, "userStatus": None,
            "salaryMin": None, "salaryMax": None, "salaryCurrency": None,
            "fitReasons": [h("fit reason"), "✓ Python — Northwind"]}


def feed_jobs(view, h, qtbot) -> None:
    view.apply({"params": view.query(), "total": 1, "items": [hostile_row(h)]})
    detail = view.detail
    detail.set_job(JOB_KEY)
    detail.apply({"job": hostile_job(h), "profileSample": False})
    contacts = detail.contacts_panel
    if contacts is not None:
        contacts.apply((JOB_KEY, {
            "candidates": [{"contactId": "contact-1", "name": h("contact name"), "title": h("contact title"),
                            "email": "a@example.com", "confidence": 0.5,
                            "evidence": h("evidence"), "sourceUrl": h("source url")}],
            "tasks": [{"status": "failed", "candidateCount": 1,
                       "failure": {"code": h("failure code")},
                       "sourceAttempts": [{"sourceId": h("source"), "status": "failed",
                                           "errorCode": h("attempt error")}]}]}))


def feed_apply(view, h, qtbot) -> None:
    item = {"jobKey": JOB_KEY, "title": h("title"), "company": h("company"), "fitScore": 15,
            "status": "failed", "updatedAt": "2026-01-01T00:00:00Z",
            "target": {"kind": "email", "recipient": h("recipient"), "url": None},
            "packet": {"answers": {"coverNote": h("answer")}},
            "approval": {"recipient": h("recipient")},
            "failure": {"code": "x", "message": h("failure message")}}
    view.apply(({"items": [item]}, {"state": "failed", "enabled": False, "reason": h("reason")}))
    view.table.selectRow(0)
    view._set_detail(item)


def feed_applications(view, h, qtbot) -> None:
    card = {"jobKey": JOB_KEY, "title": h("title"), "company": h("company"),
            "stage": "applied", "appliedOn": "2026-01-02", "via": "email",
            "noReplyText": h("no reply"),
            "lastMove": {"stage": "applied", "date": "2026-01-02", "note": h("move note")},
            "followUp": {"status": "scheduled", "dueOn": "2026-01-09", "due": True}}
    detail = {**card, "moves": [{"stage": "applied", "at": "2026-01-02T10:00:00Z",
                                 "note": h("move note")}],
              "interviews": [{"startsAt": "2026-01-05T10:00:00Z", "location": h("interview place"),
                              "notes": h("interview notes")}],
              "emails": [{"status": "sent", "recipient": h("recipient"),
                          "at": "2026-01-03T10:00:00Z"}],
              "posting": {"title": h("title"), "company": h("company"), "location": h("location"),
                          "url": "https://example.com/job", "descriptionHtml":
                          f"<p>{h('description')}</p>" + h("description html")}}
    view.apply(({"items": [card], "total": 1, "followUpsDue": 1}, detail))


def feed_runs(view, h, qtbot) -> None:
    run = {"runId": "run-1", "workflowId": "wf-1", "workflowType": "JobPreparationWorkflow",
           "displayName": h("run name"), "status": "failed",
           "startedAt": "2026-01-01T00:00:00Z", "durationMs": 1000,
           "relatedJob": {"jobId": JOB_KEY, "title": h("title"), "company": h("company")},
           "error": h("run error"),
           "timeline": [{"occurredAt": "2026-01-01T00:00:00Z", "type": "StageFailed",
                         "payload": {"stage": "enrich", "message": h("timeline")}}]}
    view.selected_run_id = "run-1"
    view.apply({"query": view.query, "page": {"total": 1, "items": [run]}, "detail": run})


def feed_pipelines(view, h, qtbot) -> None:
    snapshot = recorded("failed")
    for family in snapshot["sourceFamilies"]["families"]:
        family["errorCode"] = h("family error")
    sources = [{"kind": "json_file", "id": "board", "name": h("source name"),
                "path": f"/tmp/{h('file')}.json", "enabled": True}]
    view.apply({"snapshot": snapshot, "sources": sources,
                "profile": {"profile": {"basics": {"name": h("profile name")}}}})


def feed_spend(view, h, qtbot) -> None:
    today = {"day": "2026-01-01", "spentUsd": 1.0, "ceilingUsd": 5.0, "remainingUsd": 4.0,
             "unlimited": False, "exhausted": False, "resetsAt": "2026-01-02T00:00:00Z"}
    view.apply({"today": today, "byDay": [],
                "byModel": [{"provider": h("provider"), "model": h("model"), "calls": 1,
                             "inputTokens": 1, "outputTokens": 1, "costUsd": 1.0}]})


def feed_insights(view, h, qtbot) -> None:
    group = {"label": h("group"), "applications": 6, "replyRate": 0.5, "interviewRate": 0.1,
             "medianDaysToFirstReply": 2, "ghostedRate": 0.2}
    view.apply({"overall": {"applications": 6, "withheld": h("withheld")},
                "caption": h("caption"),
                "dimensions": [{"key": "source", "title": h("dimension"), "groups": [group]}]})


def feed_settings(view, h, qtbot) -> None:
    settings = {"sources": [{"kind": "json_file", "id": "board", "name": h("source name"),
                             "path": f"/tmp/{h('file')}.json", "enabled": True}],
                "minFitScore": 0}
    view.apply({"settings": settings, "scheduleError": h("schedule error"),
                "profile": {"revision": 1, "resumeText": h("résumé text"),
                            "profile": {"basics": {"name": h("profile name"),
                                                   "label": h("headline")},
                                        "skills": [{"name": h("skill")}]}}})


def feed_activity(view, h, qtbot) -> None:
    for event in sample_events():
        payload = {key: h(key) if isinstance(value, str) and value.startswith("sample-")
                   else value for key, value in event.payload.items()}
        view.append(StreamedEvent(event.id, event.type, payload))
    view.list_view.setCurrentIndex(view.model.index(0))


FEEDERS = {"jobs": feed_jobs, "apply": feed_apply, "applications": feed_applications,
           "runs": feed_runs, "pipelines": feed_pipelines, "spend": feed_spend,
           "insights": feed_insights, "settings": feed_settings, "activity": feed_activity}


@pytest.fixture
def canary(tmp_path) -> Path:
    path = tmp_path / "canary.png"
    path.write_bytes(b"not an image: Qt must never be asked to read it")
    return path


@pytest.fixture
def window(qtbot, tmp_path):
    app_dir = tmp_path / "app"
    app_dir.mkdir()
    win = MainWindow(ShellController(app_dir))
    qtbot.addWidget(win)
    win.resize(1240, 860)
    win.show()
    return win


def test_every_view_is_fed():
    assert set(FEEDERS) == {tab.key for tab in VIEW_TABS}


@pytest.mark.parametrize("key", sorted(FEEDERS))
def test_a_hostile_posting_is_shown_as_text(qtbot, window, canary, key):
    def h(what: str) -> str:
        return hostile(canary, what)

    view = window.show_view(key)
    FEEDERS[key](view, h, qtbot)
    error = ApiRequestError(500, "server_error", h("server error"))
    for live in [view, *view.findChildren(QWidget)]:
        if hasattr(live, "show_error") and callable(live.show_error):
            live.show_error(error)
    QApplication.processEvents()
    findings, texts = hostile_findings(window)
    assert findings == [], "\n".join(findings)
    assert any("canary.png" in text for text in texts), f"{key}: the walk saw no hostile text"


def test_an_image_location_is_read_as_text_in_the_detail_and_the_tooltip(qtbot, window,
                                                                         canary):
    """The crash the review found: the location ``<img src="/dev/zero">Berlin`` (a canary file
    here). The job opens and its tooltip is asked for without Qt reading the file, and both
    show the characters of the posting."""
    location = f'<img src="{canary}">Berlin'
    jobs = window.show_view("jobs")
    row = {**hostile_row(lambda what: what), "location": location}
    jobs.apply({"params": jobs.query(), "total": 1, "items": [row]})
    jobs.detail.set_job(JOB_KEY)
    job = hostile_job(lambda what: what)
    job["location"] = location
    job["score"]["ledger"]["cap"]["reason"] = location
    jobs.detail.apply({"job": job, "profileSample": False})
    QApplication.processEvents()

    tip = jobs.proxy.index(0, LOCATION).data(Qt.ItemDataRole.ToolTipRole)
    assert JOB_COLUMNS[LOCATION].title == "Location"
    shown = QTextDocument()
    if might_be_rich_text(tip):
        shown.setHtml(tip)
    else:
        shown.setPlainText(tip)
    assert location in shown.toPlainText()
    assert "<img" not in shown.toHtml()

    detail = jobs.detail
    for label in (detail.title_label, detail.cap_label):
        document = QTextDocument()
        if rendered_as_rich(label.text(), label.textFormat()):
            document.setHtml(label.text())
        else:
            document.setPlainText(label.text())
        assert location in document.toPlainText(), label.objectName()
    assert detail.cap_label.text() == f"Capped at 15: {location}"
    assert detail.cap_label.textFormat() == Qt.TextFormat.PlainText
    assert html.escape(location) in detail.title_label.text()


@pytest.mark.parametrize("text", ['<img src="/dev/zero">Berlin', "a <b>b</b>\nline 2  spaced",
                                  "&lt;img&gt; & more", "plain words"])
def test_a_plain_tooltip_shows_the_characters(qapp, text):
    tip = plain_tooltip(text)
    document = QTextDocument()
    if might_be_rich_text(tip):
        document.setHtml(tip)
    else:
        document.setPlainText(tip)
    assert document.toPlainText() == text
    assert "<img" not in document.toHtml()
    assert plain_tooltip("plain words") == "plain words"  # plain text stays as it was


def test_a_notification_carries_no_markup_to_the_platform(qapp):
    """Some Linux notification servers read markup (``<img>`` included) in a message's
    body: what the tray hands them has no tag left, and reads the same."""
    shown: list[tuple[str, str]] = []

    class Icon(QSystemTrayIcon):
        def isVisible(self) -> bool:  # noqa: N802 - Qt naming
            return True

        def showMessage(self, title, text, *args) -> None:  # noqa: N802 - Qt naming
            shown.append((title, text))

    source = '<img src="/dev/zero">Acme <b>board</b>'
    if not QSystemTrayIcon.supportsMessages():
        pytest.fail("this platform plugin offers no tray messages to test")
    assert tray_sink(Icon())(f"Discover: {source}", f"1 source could not be read: {source}",
                             QSystemTrayIcon.MessageIcon.Information)
    assert shown and all("<" not in part and ">" not in part for pair in shown for part in pair)
    assert "Acme" in shown[0][1] and "board" in shown[0][1]
