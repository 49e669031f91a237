"""The materials a job seeker checks before they go out, widget-level (no services): the
résumé and letter editors change exactly what was edited, edits survive refetches and job
switches, a save goes to the API (a refused one says why under the editor), Re-tailor asks
before replacing the user's version, the PDFs open, show in their folder or are saved as a
copy (and say so when no viewer is set up), a refused writer output is explained, and the
PDF settings are part of the settings form."""

from __future__ import annotations

import copy
from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QDesktopServices
from PySide6.QtWidgets import QFileDialog, QMessageBox

from desktop.client import ApiRequestError, StreamedEvent
from desktop.shell import ShellController
from desktop.views.apply_review_view import ApplyReviewView, edits_note, packet_files
from desktop.views.job_detail import JobDetail
from desktop.views.partials import materials_panel, pdf_files
from desktop.views.partials.materials_editor import RESTS_ON_PENDING, LetterEditor, ResumeEditor
from desktop.views.partials.materials_panel import (
    NEWER_WAITING,
    RENDER_DONE,
    SAVED_RENDERING,
    claim_words,
)
from desktop.views.partials.materials_words import (
    current_shape,
    dropped_summary,
    entry_heading,
    rejection_text,
    validation_words,
)
from desktop.views.settings_view import SettingsView

pytestmark = pytest.mark.desktop

JOB_KEY = "job_" + "b" * 24
RESUME = {
    "name": "Ada Example", "headline": "Backend engineer",
    "contact": {"email": "ada@example.org", "phone": None, "locations": ["Berlin, Germany"],
                "links": ["https://example.org/ada"]},
    "summary": "Eight years of Python services.",
    "skills": [{"group": "Languages", "items": ["Python", "Go"]}],
    "experience": [
        {"position": "Senior Backend Engineer", "employer": "Northwind", "location": "Berlin",
         "startDate": "2021-03", "endDate": None,
         "bullets": ["Cut p99 latency by 40%", "Led the billing rewrite"], "teamSize": 6},
        {"position": "Engineer", "employer": "Contoso", "location": None,
         "startDate": "2016", "endDate": "2020", "bullets": ["Built the search index"]},
    ],
    "education": [{"institution": "TU Berlin", "degree": "B.Sc. Computer Science",
                   "startDate": "2012", "endDate": "2016"}],
    "languages": ["German", "English"], "certifications": [],
    "dropped": [{"kind": "bullet", "text": "Ran the office band", "reason": "not relevant"},
                {"kind": "bullet", "text": "Wrote a Perl CMS", "reason": "too old"},
                {"kind": "skill", "text": "Perl", "reason": "not asked for"}],
    "edited": False, "futureKey": {"kept": True},
}
LETTER = {
    "senderName": "Ada Example", "senderContact": ["ada@example.org"],
    "dateLine": "3 March 2025", "recipientLines": ["Hiring team", "Northwind"],
    "salutation": "Dear hiring team,",
    "paragraphs": [{"text": "I build Python services.", "evidence": ["Northwind (2021–)"]},
                   {"text": "I led a billing rewrite.", "evidence": []}],
    "closing": "Kind regards,", "signature": "Ada Example", "edited": False,
}


def edit(editor, path: str, text: str) -> None:
    widget = editor.findChild(object, f"edit:{path}")
    assert widget is not None, path
    widget.setText(text)


# -- the words ------------------------------------------------------------------------------


def test_headings_left_out_and_refusals_in_plain_words():
    assert entry_heading(RESUME["experience"][0]) == (
        "Senior Backend Engineer — Northwind · Berlin · 2021-03 – present")
    assert entry_heading(RESUME["experience"][1]) == "Engineer — Contoso · 2016 – 2020"
    assert dropped_summary(RESUME["dropped"]) == "Left out: 2 bullets, 1 skill — why"
    assert dropped_summary([]) is None
    assert rejection_text({"kind": "resume", "errorCode": "materials_unsupported_claim",
                           "claim": "\"10 years of Go\" — your profile shows 3 years"}) == (
        "The résumé was not written: it claimed “10 years of Go”, your profile shows 3 years.")
    assert rejection_text({"kind": "cover_letter", "claim": "a PhD"}) == (
        "The cover letter was not written: it stated something your profile does not show: "
        "a PhD.")
    assert validation_words("experience.0.bullets.3: String should have at most 600 "
                            "characters") == (
        "Experience 1, bullets 4: String should have at most 600 characters")


def test_a_first_shape_resume_reads_as_the_current_one():
    old = {"name": "Sam", "contactLines": ["Sam", "sam@example.org", "Leeds"],
           "sections": [{"title": "Experience", "items": ["Did things"]}]}
    shaped = current_shape("resume", old)
    assert shaped["experience"][0]["bullets"] == ["Did things"]
    assert shaped["contact"]["email"] == "sam@example.org"
    assert current_shape("resume", RESUME) is RESUME


# -- the editors ----------------------------------------------------------------------------


def test_the_resume_editor_changes_exactly_what_was_edited(qtbot):
    editor = ResumeEditor()
    qtbot.addWidget(editor)
    editor.load(RESUME)
    assert editor.document() == RESUME and not editor.is_dirty()
    edit(editor, "experience.0.bullets", "Cut p99 latency by 40%\nRewrote billing in Go\n\n")
    edit(editor, "summary", "Nine years of Python services. ")
    assert editor.is_dirty()
    expected = copy.deepcopy(RESUME)
    expected["experience"][0]["bullets"] = ["Cut p99 latency by 40%", "Rewrote billing in Go"]
    expected["summary"] = "Nine years of Python services."
    assert editor.document() == expected  # unknown keys (teamSize, futureKey) too
    assert editor.baseline == RESUME  # the loaded document is not touched


def test_the_letter_editor_changes_one_paragraph_and_keeps_its_evidence(qtbot):
    editor = LetterEditor()
    qtbot.addWidget(editor)
    editor.load(LETTER)
    edit(editor, "paragraphs.0.text", "I build and run Python services.")
    expected = copy.deepcopy(LETTER)
    expected["paragraphs"][0]["text"] = "I build and run Python services."
    assert editor.document() == expected
    edit(editor, "paragraphs.1.text", "  ")
    assert [p["text"] for p in editor.document()["paragraphs"]] == [
        "I build and run Python services."]  # an emptied paragraph is taken out


# -- the job detail -------------------------------------------------------------------------


def _job(resume=None, letter=None, **extra) -> dict:
    stages = [{"stage": s, "status": "succeeded"}
              for s in ("enrich", "score", "tailor", "cover", "pdf")]
    return {"jobId": JOB_KEY, "title": "Backend Engineer", "company": "Northwind",
            "location": "Berlin", "url": None, "score": None, "stages": stages,
            "fitThreshold": {"minFitScore": 50, "below": False},
            "resume": {"generation": 1, "content": resume or RESUME},
            "coverLetter": {"generation": 1, "content": letter or LETTER},
            "artifacts": [], "materialRejections": [], "userStatus": None, **extra}


@pytest.fixture
def detail(qtbot, tmp_path):
    view = JobDetail(ShellController(tmp_path))
    qtbot.addWidget(view)
    view.resize(900, 600)
    view.show()
    view.invalidate = lambda: None  # no refetch: nothing is running
    view.job_key = JOB_KEY
    view.materials.set_job(JOB_KEY)
    view.apply({"job": _job(), "profileSample": False})
    return view


def summary_text(view: JobDetail) -> str:
    return view.materials.pages["resume"].editor.findChild(object, "edit:summary").text()


def test_edits_survive_a_refetch_and_a_job_switch(detail):
    page = detail.materials.pages["resume"]
    edit(page.editor, "summary", "My own summary.")
    newer = {**RESUME, "summary": "A newer tailored summary."}
    detail.apply({"job": _job(resume=newer), "profileSample": False})
    assert summary_text(detail) == "My own summary."
    assert page.status.text() == NEWER_WAITING
    assert detail.materials.tabs.tabText(0) == "Tailored résumé (not saved)"

    detail.materials.set_job("job_" + "c" * 24)  # another job, and back
    detail.materials.set_job(JOB_KEY)
    detail.apply({"job": _job(resume=newer), "profileSample": False})
    assert summary_text(detail) == "My own summary." and page.editor.is_dirty()

    page.undo()
    assert summary_text(detail) == "A newer tailored summary." and not page.editor.is_dirty()


def test_edited_materials_say_so_and_left_out_items_fold_away(detail):
    detail.apply({"job": _job(resume={**RESUME, "edited": True}), "profileSample": False})
    editor = detail.materials.pages["resume"].editor
    assert editor.findChild(object, "editedByYou").text() == "Edited by you"
    disclosure = editor.dropped_disclosure
    assert disclosure.toggle.text() == "Left out: 2 bullets, 1 skill — why"
    assert not disclosure.body.isVisible()
    assert "Perl — not asked for" in disclosure.details.text()
    assert detail.materials.pages["cover_letter"].editor.findChild(
        object, "editedByYou") is None


def test_a_refused_writer_output_is_explained(detail):
    rejection = {"kind": "resume", "errorCode": "materials_unsupported_claim",
                 "claim": "\"10 years of Go\" — your profile shows 3 years", "createdAt": "x"}
    detail.apply({"job": _job(materialRejections=[rejection]), "profileSample": False})
    label = detail.materials.rejections
    assert label.isVisible()
    assert label.text().startswith("The résumé was not written: it claimed “10 years of Go”, "
                                   "your profile shows 3 years.")
    assert "materials_unsupported_claim" not in label.text()


class FakeClient:
    """Answers in order; an exception is raised."""

    def __init__(self, *answers):
        self.answers = list(answers)
        self.calls: list[tuple] = []

    def _next(self):
        answer = self.answers.pop(0)
        if isinstance(answer, Exception):
            raise answer
        return answer

    async def put_material(self, key, kind, document, *, keep_unsupported=False):
        self.calls.append(("put", kind, document) + (("keep",) if keep_unsupported else ()))
        return self._next()

    async def job_action(self, key, action, **body):
        self.calls.append((action, body))
        return self._next()


def test_save_sends_the_edited_document_and_a_refusal_shows_under_the_editor(detail, qtbot,
                                                                              qloop):
    page = detail.materials.pages["cover_letter"]
    detail.materials.show_tab(1)
    edit(page.editor, "paragraphs.1.text", "I led the billing rewrite, on time.")
    refused = ApiRequestError(422, "validation_error", "paragraphs.1.text: String should have "
                              "at most 2000 characters")
    client = detail.controller.client = FakeClient(
        refused, ApiRequestError(503, "worker_runtime_unavailable", "No worker."),
        {"jobId": JOB_KEY, "stage": "pdf", "kind": "cover-letter", "generation": 2})
    for _attempt in range(2):
        with qtbot.waitSignal(detail.materials.saved, timeout=5_000):
            qtbot.mouseClick(page.save_button, Qt.MouseButton.LeftButton)
    assert page.status.text().startswith("Nothing was saved. JobCtrl's services are not ready")
    assert page.editor.is_dirty()  # nothing lost
    with qtbot.waitSignal(detail.materials.saved, timeout=5_000):
        qtbot.mouseClick(page.save_button, Qt.MouseButton.LeftButton)
    kind, document = client.calls[0][1:]
    assert kind == "cover-letter"
    assert document["paragraphs"][1]["text"] == "I led the billing rewrite, on time."
    assert document["paragraphs"][0] == LETTER["paragraphs"][0]
    assert page.status.text().startswith("Saved.") and not page.editor.is_dirty()


SPARK = "I have also used Spark for three years."
SPARK_CLAIM = {"claim": "I have also used Spark for three years",
               "why": "Spark is not in your profile"}


def _unsupported() -> ApiRequestError:
    return ApiRequestError(409, "unsupported_claims", "Your edit states what your profile does "
                           "not hold.", unsupported_claims=[SPARK_CLAIM])


def _saved(evidence: list[str]) -> dict:
    content = copy.deepcopy(LETTER)
    content["paragraphs"][1] = {"text": SPARK, "evidence": evidence}
    return {"jobId": JOB_KEY, "stage": "pdf", "workflowId": "prep-9", "kind": "cover-letter",
            "generation": 2, "content": {**content, "edited": True}, "keptClaims": [SPARK_CLAIM]}


def _event(detail, event_type: str, **payload) -> None:
    detail.controller.event_received.emit(StreamedEvent(7, event_type,
                                                        {"jobId": JOB_KEY, **payload}))


def _save_spark(detail, qtbot, client_answers, button="save"):
    page = detail.materials.pages["cover_letter"]
    detail.materials.show_tab(1)
    edit(page.editor, "paragraphs.1.text", SPARK)
    client = detail.controller.client = FakeClient(*client_answers)
    with qtbot.waitSignal(detail.materials.saved, timeout=5_000):
        qtbot.mouseClick(page.save_button, Qt.MouseButton.LeftButton)
    return page, client


def test_an_unsupported_claim_is_named_and_kept_only_when_the_user_says_so(detail, qtbot, qloop):
    assert claim_words(SPARK_CLAIM) == ("“I have also used Spark for three years”: Spark is not "
                                        "in your profile — add it to your profile, or remove it here.")
    page, client = _save_spark(detail, qtbot, [_unsupported(), _saved(["Skills: Spark"])])
    assert page.claims.isVisible() and page.editor.is_dirty()  # nothing saved, nothing lost
    words = page.claims_text.text()
    assert words.startswith("Not saved yet. Your profile does not hold this:\n• “I have also used "
                            "Spark for three years”: Spark is not in your profile — add it to your "
                            "profile, or remove it here.")
    assert page.keep_button.text() == "Keep it — I can back this up"
    assert not page.status.text().startswith("Saved")
    with qtbot.waitSignal(detail.materials.saved, timeout=5_000):
        qtbot.mouseClick(page.keep_button, Qt.MouseButton.LeftButton)
    assert [call[-1] for call in client.calls] == [client.calls[0][-1], "keep"]
    assert client.calls[1][2]["paragraphs"][1]["text"] == SPARK
    assert not page.claims.isVisible() and not page.editor.is_dirty()
    # "Rests on" is what the server worked out for the new words, not the old paragraph's.
    assert page.editor.findChild(object, "restsOn1").text() == "Rests on: Skills: Spark"
    assert page.status.text() == SAVED_RENDERING
    assert page.kept.isVisible() and page.kept.text() == (
        "You kept what your profile does not hold: “I have also used Spark for three years” "
        "(Spark is not in your profile).")
    _event(detail, "PdfRendered", workflowId="prep-9", kind="resume_pdf")
    _event(detail, "PdfRendered", workflowId="prep-0", kind="cover_letter_pdf")  # another run
    assert page.status.text() == SAVED_RENDERING
    _event(detail, "PdfRendered", workflowId="prep-9", kind="cover_letter_pdf")
    assert page.status.text() == RENDER_DONE and page.status.text().endswith("done.")
    saved = _saved(["Skills: Spark"])
    refetched = {**_job(), "coverLetter": {"generation": 2, "content": saved["content"],
                                          "keptClaims": [SPARK_CLAIM]}}
    detail.apply({"job": refetched, "profileSample": False})
    assert page.kept.text().startswith("You kept what your profile does not hold: ")
    detail.apply({"job": _job(), "profileSample": False})  # a re-tailored version kept nothing
    assert not page.kept.isVisible()


def test_edit_again_saves_nothing_and_a_rewritten_paragraph_says_its_note_is_redone(detail,
                                                                                   qtbot, qloop):
    page, client = _save_spark(detail, qtbot, [_unsupported()])
    assert page.editor.findChild(object, "restsOn1").text() == RESTS_ON_PENDING
    qtbot.mouseClick(page.edit_again_button, Qt.MouseButton.LeftButton)
    assert not page.claims.isVisible() and page.editor.is_dirty() and len(client.calls) == 1
    assert page.status.text() == "Not saved. Change the text, then save again."
    edit(page.editor, "paragraphs.0.text", "I build and run Python services.")
    assert page.editor.findChild(object, "restsOn0").text() == RESTS_ON_PENDING
    edit(page.editor, "paragraphs.0.text", LETTER["paragraphs"][0]["text"])
    assert page.editor.findChild(object, "restsOn0").text() == "Rests on: Northwind (2021–)"


def test_the_saving_message_ends_in_a_plain_error_when_the_pdf_fails_or_takes_too_long(
        detail, qtbot, qloop, monkeypatch):
    page, _client = _save_spark(detail, qtbot, [_saved([])])
    _event(detail, "StageFailed", workflowId="prep-9", stage="pdf", errorCode="pdf_render_failed",
           retryable=False)
    assert page.status.text().startswith("Saved, but the PDF was not made again: ")
    assert page.status.text().endswith("Try Re-render PDF below.")
    assert "pdf_render_failed" not in page.status.text()

    monkeypatch.setattr(materials_panel, "RENDER_WAIT_MS", 50)
    edit(page.editor, "paragraphs.1.text", SPARK + " Really.")
    detail.controller.client = FakeClient(_saved([]))
    with qtbot.waitSignal(detail.materials.saved, timeout=5_000):
        qtbot.mouseClick(page.save_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: page.status.text() != SAVED_RENDERING, timeout=5_000)
    assert page.status.text().startswith("Saved, but the PDF was not ready after 1 minute.")


def test_a_refused_save_names_the_field(detail, qtbot, qloop):
    page = detail.materials.pages["resume"]
    edit(page.editor, "name", "")
    detail.controller.client = FakeClient(
        ApiRequestError(422, "validation_error", "name: String should have at least 1 character"))
    with qtbot.waitSignal(detail.materials.saved, timeout=5_000):
        qtbot.mouseClick(page.save_button, Qt.MouseButton.LeftButton)
    assert page.status.text() == ("Nothing was saved. Some of it is not accepted:\n"
                                  "Name: String should have at least 1 character")


def _answer_question(monkeypatch, button) -> list[str]:
    asked: list[str] = []

    def question(_parent, _title, text, *_args):
        asked.append(text)
        return button

    monkeypatch.setattr(QMessageBox, "question", question)
    return asked


def test_retailor_asks_first_when_the_user_edited(detail, qtbot, qloop, monkeypatch):
    detail.apply({"job": _job(resume={**RESUME, "edited": True}), "profileSample": False})
    client = detail.controller.client = FakeClient({"workflowId": "prep-2"})
    asked = _answer_question(monkeypatch, QMessageBox.StandardButton.No)
    qtbot.mouseClick(detail.retailor_button, Qt.MouseButton.LeftButton)
    assert asked == ["You edited this résumé. Re-tailoring replaces your edits. "
                     "Re-tailor anyway?"]
    assert client.calls == [] and detail.action_result.text() == (
        "Not re-tailored: your edits are kept.")

    _answer_question(monkeypatch, QMessageBox.StandardButton.Yes)
    with qtbot.waitSignal(detail.action_finished, timeout=5_000):
        qtbot.mouseClick(detail.retailor_button, Qt.MouseButton.LeftButton)
    assert client.calls == [("retailor", {"discardEdits": True})]


def test_retailor_asks_when_the_api_says_the_materials_were_edited(detail, qtbot, qloop,
                                                                   monkeypatch):
    edited = ApiRequestError(409, "materials_edited", "You edited this résumé or letter.")
    client = detail.controller.client = FakeClient(edited, {"workflowId": "prep-2"})
    asked = _answer_question(monkeypatch, QMessageBox.StandardButton.Yes)
    with qtbot.waitSignal(detail.action_finished, timeout=5_000) as finished:
        qtbot.mouseClick(detail.retailor_button, Qt.MouseButton.LeftButton)
    assert client.calls == [("retailor", {}), ("retailor", {"discardEdits": True})]
    assert asked == ["You edited this résumé or letter. Re-tailoring replaces your edits. "
                     "Re-tailor anyway?"]
    assert finished.args == ["retailor", {"workflowId": "prep-2"}]
    assert detail.action_result.text().startswith("Re-tailoring")


def test_retailor_without_edits_shows_a_busy_job_plainly(detail, qtbot, qloop):
    detail.controller.client = FakeClient(
        ApiRequestError(409, "preparation_running", "A preparation is running."))
    with qtbot.waitSignal(detail.action_finished, timeout=5_000):
        qtbot.mouseClick(detail.retailor_button, Qt.MouseButton.LeftButton)
    assert detail.action_result.text() == "This job is already being prepared."


def test_re_render_pdf_asks_the_api_and_says_what_happens(detail, qtbot, qloop):
    client = detail.controller.client = FakeClient(
        {"workflowId": "prep-3"}, ApiRequestError(409, "preparation_running", "Running."))
    files = detail.materials.pdf_files
    with qtbot.waitSignal(detail.materials.rendered, timeout=5_000):
        qtbot.mouseClick(detail.materials.render_button, Qt.MouseButton.LeftButton)
    assert client.calls == [("render-pdf", {})]
    assert files.message.text() == "Making the PDFs again; they appear here when ready."
    with qtbot.waitSignal(detail.materials.rendered, timeout=5_000):
        qtbot.mouseClick(detail.materials.render_button, Qt.MouseButton.LeftButton)
    assert files.message.text() == ("The PDFs were not made again. This job is being prepared "
                                    "right now. Try again when it is done.")


# -- the PDF files --------------------------------------------------------------------------


@pytest.fixture
def with_pdfs(detail, tmp_path):
    folder = tmp_path / "materials"
    folder.mkdir()
    resume = folder / "Ada Example - Resume - Northwind.pdf"
    resume.write_bytes(b"%PDF-1.7 resume")
    artifacts = [{"kind": "resume_pdf", "generation": 2, "path": str(resume), "pages": 2,
                  "bytes": 15, "sha256": "x", "createdAt": "2025-03-03T10:00:00Z"}]
    detail.apply({"job": _job(artifacts=artifacts), "profileSample": False})
    return detail, resume


def test_the_pdfs_are_named_and_say_when_no_viewer_is_set_up(with_pdfs, qtbot, monkeypatch):
    detail, resume = with_pdfs
    files = detail.materials.pdf_files
    assert files.name_labels["resume_pdf"].text() == (
        "Résumé: Ada Example - Resume - Northwind.pdf · 2 pages")
    assert not files.open_buttons["cover_letter_pdf"].isEnabled()
    opened: list[str] = []
    monkeypatch.setattr(QDesktopServices, "openUrl",
                        lambda url: opened.append(url.toLocalFile()) or False)
    qtbot.mouseClick(files.open_buttons["resume_pdf"], Qt.MouseButton.LeftButton)
    assert opened == [str(resume)]
    assert files.message.isVisible() and files.message.text() == pdf_files.NO_VIEWER
    qtbot.mouseClick(files.findChild(object, "folder_resume_pdf"), Qt.MouseButton.LeftButton)
    assert opened[-1] == str(resume.parent)
    assert files.message.text().startswith("No program to show folders is set up")
    monkeypatch.setattr(QDesktopServices, "openUrl", lambda url: True)
    assert detail.open_pdf("resume_pdf") and not files.message.isVisible()


def test_save_as_copies_the_pdf_under_its_own_name(with_pdfs, qtbot, monkeypatch, tmp_path):
    detail, resume = with_pdfs
    target = tmp_path / "Downloads" / "copy.pdf"
    target.parent.mkdir()
    suggested: list[str] = []

    def ask(_parent, _caption, default, _filter):
        suggested.append(default)
        return str(target), "PDF files (*.pdf)"

    monkeypatch.setattr(QFileDialog, "getSaveFileName", ask)
    files = detail.materials.pdf_files
    qtbot.mouseClick(files.findChild(object, "saveAs_resume_pdf"), Qt.MouseButton.LeftButton)
    assert Path(suggested[0]).name == "Ada Example - Resume - Northwind.pdf"
    assert target.read_bytes() == resume.read_bytes()
    assert files.message.text() == f"Saved a copy as {target}."


@pytest.fixture
def with_word(detail, tmp_path):
    folder = tmp_path / "materials"
    folder.mkdir()
    files = {kind: folder / f"Ada Example - Resume - Northwind.{ext}"
             for kind, ext in (("resume_pdf", "pdf"), ("resume_docx", "docx"))}
    files["resume_pdf"].write_bytes(b"%PDF-1.7 resume")
    files["resume_docx"].write_bytes(b"PK word resume")
    artifacts = [{"kind": kind, "generation": 2, "path": str(path), "pages": 2 if kind.endswith("pdf")
                  else 0, "bytes": 15, "sha256": "x", "createdAt": "2025-03-03T10:00:00Z"}
                 for kind, path in files.items()]
    detail.apply({"job": _job(artifacts=artifacts, atsCheck={"ok": True, "missing": []}),
                  "profileSample": False})
    return detail, files


@pytest.mark.parametrize(("chosen", "typed", "saved_as"), [
    ("Word documents (*.docx)", "copy.pdf", "copy.docx"),  # the filter decides; the name follows
    ("PDF files (*.pdf)", "copy.docx", "copy.docx"),       # a .docx name asks for the Word file
    ("PDF files (*.pdf)", "copy.pdf", "copy.pdf"),
])
def test_save_as_offers_the_pdf_and_the_word_file(with_word, qtbot, monkeypatch, tmp_path,
                                                  chosen, typed, saved_as):
    detail, files = with_word
    target = tmp_path / "Downloads" / typed
    target.parent.mkdir()
    offered: list[str] = []

    def ask(_parent, _caption, _default, filters):
        offered.append(filters)
        return str(target), chosen

    monkeypatch.setattr(QFileDialog, "getSaveFileName", ask)
    panel = detail.materials.pdf_files
    qtbot.mouseClick(panel.findChild(object, "saveAs_resume_pdf"), Qt.MouseButton.LeftButton)
    assert offered == ["PDF files (*.pdf);;Word documents (*.docx)"]
    saved = target.parent / saved_as
    source = files["resume_docx"] if saved_as.endswith(".docx") else files["resume_pdf"]
    assert saved.read_bytes() == source.read_bytes()
    assert panel.message.text() == f"Saved a copy as {saved}."
    # The Word file is no row of its own: the PDF rows stay as they were.
    assert panel.name_labels["resume_pdf"].text() == (
        "Résumé: Ada Example - Resume - Northwind.pdf · 2 pages")


def test_the_ats_check_is_shown_as_plain_words(with_word, detail):
    label = detail.materials.ats_check
    assert label.isVisibleTo(detail) and label.text() == pdf_files.ATS_OK
    missing = ["the dates of 'Analyst <b>at</b> Shopify' (PDF, plain text)",
               *[f"bullet {n} of 'Analyst at Shopify' (Word file, read into entries)"
                 for n in range(1, 10)]]
    detail.apply({"job": _job(atsCheck={"ok": False, "missing": missing}), "profileSample": False})
    lines = label.text().split("\n")
    assert lines[0] == pdf_files.ATS_MISSING
    assert lines[1] == "• the dates of 'Analyst <b>at</b> Shopify' (PDF, plain text)"
    assert lines[-1] == "… and 2 more" and len(lines) == 1 + pdf_files.ATS_SHOWN + 1
    assert label.textFormat() == Qt.TextFormat.PlainText
    detail.apply({"job": _job(), "profileSample": False})  # rendered before the check
    assert not label.isVisibleTo(detail)


def test_the_apply_review_packet_shows_the_file_names_and_the_edits(qtbot, qloop, tmp_path):
    resume = tmp_path / "Ada Example - Resume - Northwind.pdf"
    letter = tmp_path / "Ada Example - Cover Letter - Northwind.pdf"
    for path in (resume, letter):
        path.write_bytes(b"%PDF")
    view = ApplyReviewView(ShellController(tmp_path))
    qtbot.addWidget(view)

    class JobClient:
        async def job(self, key):
            return _job(resume={**RESUME, "edited": True})

    view.controller.client = JobClient()
    view.model.set_rows([{"jobKey": JOB_KEY, "title": "Backend Engineer", "company": "Northwind",
                          "fitScore": 80, "status": "awaiting_approval",
                          "target": {"kind": "browser_form", "url": "https://x.test/apply"},
                          "packet": {"resumePdf": str(resume), "coverLetterPdf": str(letter),
                                     "targetUrl": "https://x.test/apply", "answers": {}},
                          "approval": None, "failure": None, "updatedAt": None}])
    assert view.select_job(JOB_KEY)
    files = view.pdf_files
    assert files.name_labels["resume_pdf"].text() == "Résumé: Ada Example - Resume - Northwind.pdf"
    assert view.open_resume.isEnabled() and view.open_cover.isEnabled()
    qtbot.waitUntil(lambda: view.edits_label.text() == "The résumé includes your edits.",
                    timeout=5_000)


def test_apply_review_names_the_packet_files_and_the_edits():
    packet = {"resumePdf": "/m/Ada Example - Resume - Northwind.pdf", "coverLetterPdf": None}
    assert packet_files(packet) == [{"kind": "resume_pdf", "path": packet["resumePdf"]}]
    assert edits_note(_job(letter={**LETTER, "edited": True})) == (
        "The cover letter includes your edits.")
    assert edits_note(_job()) == ""


# -- settings -------------------------------------------------------------------------------


def test_the_pdf_settings_are_saved_with_the_others(qtbot, tmp_path):
    view = SettingsView(ShellController(tmp_path))
    qtbot.addWidget(view)
    view.fill({"materials": {"template": "compact", "paper": "letter"}})
    assert view.template.currentText() == "Compact"
    assert view.paper.currentText() == "US Letter"
    view.paper.setCurrentIndex(view.paper.findData("auto"))
    assert view.dirty
    assert view.changes()["materials"] == {"template": "compact", "paper": "auto",
                                           "letterLanguage": "profile"}
    view.fill({})
    assert view.template.currentData() == "classic"
    assert view.paper.currentText() == "Automatic (from your country)"
