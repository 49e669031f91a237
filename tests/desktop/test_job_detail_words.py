"""The job detail's Fit box: the scorer in plain words (not internal ids), the checklist of
what the posting asks against what the profile proves, the cap, the minimum-fit threshold
with "Prepare anyway", and materials from the sample profile marked."""

from __future__ import annotations

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QLabel

from desktop.client import ApiRequestError
from desktop.shell import ShellController
from desktop.views.job_detail import JobDetail, scored_by_text
from desktop.views.partials.fit_checklist import cap_text, checklist_rows, coverage_text, threshold_text

pytestmark = pytest.mark.desktop


def test_the_offline_scorer_is_the_built_in_offline_model():
    assert scored_by_text({"provider": "offline", "model": "offline-heuristic"}) == (
        "scored by the built-in offline model")


def test_a_real_provider_is_named_with_its_model_and_unknown_stays_unknown():
    assert scored_by_text({"provider": "anthropic", "model": "claude-3-5-haiku"}) == (
        "scored by Anthropic claude-3-5-haiku")
    assert scored_by_text({"provider": "openai_compat", "model": "llama3.1"}) == (
        "scored by llama3.1")
    assert scored_by_text({"provider": None, "model": None}) == "scorer unknown"


def test_the_fit_box_shows_no_internal_names(qtbot, tmp_path):
    detail = JobDetail(ShellController(tmp_path))
    qtbot.addWidget(detail)
    detail._show_score({"version": 1, "score": 25, "rationale": "Title fits.", "matched": ["Go"],
                        "missing": [], "provider": "offline", "model": "offline-heuristic"})
    text = detail.score_label.text()
    assert "built-in offline model" in text
    assert "offline-heuristic" not in text and "version" not in text
    assert detail.score_label.toolTip() == "Score version 1, scored by the built-in offline model"


# -- the fit checklist ----------------------------------------------------------------------

LEDGER = {
    "method": "rules-v1",
    "cap": {"score": 15, "reason": "on-site role, you want remote"},
    "requirements": [
        {"kind": "skill", "label": "Kubernetes", "importance": "nice", "status": "met",
         "evidence": "Platform Engineer, Contoso (2016–2020)", "detail": None,
         "dealBreaker": False},
        {"kind": "skill", "label": "Python", "importance": "must", "status": "met",
         "evidence": "Senior Backend Engineer, Northwind (2021–)", "detail": None,
         "dealBreaker": False},
        {"kind": "location", "label": "On-site in Munich", "importance": "must",
         "status": "missing", "evidence": None, "detail": "you want remote",
         "dealBreaker": True},
        {"kind": "language", "label": "German", "importance": "must", "status": "unknown",
         "evidence": None, "detail": None, "dealBreaker": False},
    ],
}
SCORE = {"version": 2, "score": 15, "rationale": "Strong backend match, but on-site.",
         "matched": ["Python"], "missing": [], "provider": "offline",
         "model": "offline-heuristic", "ledger": LEDGER}


def test_checklist_rows_put_must_haves_first_with_evidence_and_why():
    rows = checklist_rows(LEDGER)
    assert [(row.group, row.mark, row.label) for row in rows] == [
        ("must", "✓", "Python"), ("must", "✗", "On-site in Munich"), ("must", "?", "German"),
        ("nice", "✓", "Kubernetes")]
    assert rows[0].note == "Senior Backend Engineer, Northwind (2021–)"
    assert rows[1].note == "you want remote (deal-breaker)"
    assert rows[2].note == "not in the posting or your profile"
    assert cap_text(LEDGER) == "Capped at 15: on-site role, you want remote"
    assert cap_text({"requirements": [], "cap": None}) is None


def test_threshold_words_never_claim_materials_that_were_not_written():
    job = {"score": {"score": 15}, "fitThreshold": {"minFitScore": 50, "below": True}}
    assert threshold_text(job) == ("Below your threshold (fit 15 < 50) — no résumé or letter "
                                   "prepared")
    assert threshold_text({**job, "resume": {"content": {}}}).endswith("prepared anyway at "
                                                                       "your request")
    asked = {**job, "fitThreshold": {"minFitScore": 50, "below": True, "prepareAnyway": True}}
    assert threshold_text(asked).endswith("being prepared anyway at your request")
    assert threshold_text({**job, "fitThreshold": {"minFitScore": 50, "below": False}}) is None
    assert threshold_text({**job, "fitThreshold": None}) is None  # an older API: unknown


def _detail(qtbot, tmp_path) -> JobDetail:
    detail = JobDetail(ShellController(tmp_path))
    qtbot.addWidget(detail)
    detail.resize(520, 900)
    detail.show()
    return detail


def _job(**extra) -> dict:
    stages = [{"stage": "enrich", "status": "succeeded"},
              {"stage": "score", "status": "succeeded"},
              *({"stage": s, "status": "skipped", "blockedReason": "below_min_fit_score"}
                for s in ("tailor", "cover", "pdf"))]
    return {"jobId": "job_" + "a" * 24, "title": "Backend Engineer", "company": "Initech",
            "location": "Munich", "url": None, "score": SCORE, "stages": stages,
            "fitThreshold": {"minFitScore": 50, "below": True}, "resume": None,
            "coverLetter": None, "artifacts": [], "userStatus": None, **extra}


def test_the_fit_box_shows_the_checklist_the_cap_and_prepare_anyway(qtbot, tmp_path):
    detail = _detail(qtbot, tmp_path)
    detail.job_key = "job_" + "a" * 24
    detail.apply({"job": _job(), "profileSample": False})
    assert detail.checklist.isVisible()
    assert detail.checklist.lines() == [
        "✓ Python — Senior Backend Engineer, Northwind (2021–)",
        "✗ On-site in Munich — you want remote (deal-breaker)",
        "? German — not in the posting or your profile",
        "✓ Kubernetes — Platform Engineer, Contoso (2016–2020)"]
    assert detail.cap_label.isVisible()
    assert detail.cap_label.text() == "Capped at 15: on-site role, you want remote"
    assert detail.threshold_label.text() == ("Below your threshold (fit 15 < 50) — no résumé "
                                             "or letter prepared")
    assert detail.prepare_anyway_button.isVisible() and detail.prepare_anyway_button.isEnabled()
    assert "Matches:" not in detail.rationale_label.text()  # the checklist says it
    assert "fit score below your minimum" in detail.stage_labels["tailor"].text()
    assert "ready" not in detail.stage_labels["pdf"].text().lower()
    assert "below your threshold" in detail.materials.pages["resume"].empty.text()
    assert detail.materials_group.title() == "Materials"


def test_an_old_score_without_a_ledger_shows_its_rationale(qtbot, tmp_path):
    detail = _detail(qtbot, tmp_path)
    detail._show_score({**SCORE, "ledger": None})
    assert not detail.checklist.isVisible() and not detail.cap_label.isVisible()
    assert "<b>Matches:</b> Python" in detail.rationale_label.text()


def test_materials_from_the_sample_profile_say_so(qtbot, tmp_path):
    detail = _detail(qtbot, tmp_path)
    detail.job_key = "job_" + "a" * 24
    resume = {"content": {"name": "Sam Sample", "sections": []}}
    detail.apply({"job": _job(resume=resume, fitThreshold={"minFitScore": 50, "below": False}),
                  "profileSample": True})
    assert detail.materials_group.title() == "Materials — from the sample profile, not yours"
    assert not detail.threshold_label.isVisible()
    assert not detail.prepare_anyway_button.isVisible()


class _PrepareClient:
    def __init__(self, answer):
        self.answer = answer
        self.calls: list[tuple[str, str]] = []

    async def job_action(self, key, action, **body):
        self.calls.append((key, action))
        if isinstance(self.answer, Exception):
            raise self.answer
        return self.answer


@pytest.mark.parametrize(("answer", "words"), [
    ({"workflowId": "prep-1"}, "Preparing it anyway: the résumé, letter and PDFs are being "
                               "written."),
    (ApiRequestError(409, "preparation_running", "A preparation is running."),
     "This job is already being prepared."),
])
def test_prepare_anyway_asks_the_api_and_answers_in_plain_words(qtbot, qloop, tmp_path, answer,
                                                                 words):
    detail = _detail(qtbot, tmp_path)
    detail.job_key = "job_" + "a" * 24
    detail.apply({"job": _job(), "profileSample": False})
    client = _PrepareClient(answer)
    detail.controller.client = client
    detail.invalidate = lambda: None  # no refetch from the fake client
    with qtbot.waitSignal(detail.action_finished, timeout=5_000):
        qtbot.mouseClick(detail.prepare_anyway_button, Qt.MouseButton.LeftButton)
    assert client.calls == [(detail.job_key, "prepare-anyway")]
    assert detail.action_result.text() == words
    detail.apply({"job": _job(fitThreshold={"minFitScore": 50, "below": True,
                                            "prepareAnyway": True}), "profileSample": False})
    assert not detail.prepare_anyway_button.isVisible()  # asked for: not offered twice


def test_the_postings_terms_read_in_plain_words():
    assert coverage_text([{"term": "SQL", "proven": True, "inResume": True},
                          {"term": "Tableau", "proven": True, "inResume": False},
                          {"term": "Looker", "proven": True, "inResume": None},
                          {"term": "Spark", "proven": False, "inResume": False}]) == (
        "Terms the posting asks for: SQL ✓ in your résumé · Tableau — in your profile, not in this"
        " résumé · Looker ✓ in your profile · Spark ✗ not in your profile")
    assert coverage_text([]) is None and coverage_text(None) is None


def test_the_fit_box_shows_the_terms_as_plain_text(qtbot, tmp_path):
    detail = _detail(qtbot, tmp_path)
    detail.job_key = "job_" + "a" * 24
    terms = [{"term": "<b>SQL</b>", "proven": True, "inResume": True},
             {"term": "Spark", "proven": False, "inResume": False}]
    detail.apply({"job": _job(keywordCoverage=terms), "profileSample": False})
    label = detail.findChild(QLabel, "coverageLabel")
    assert label.isVisible() and label.textFormat() == Qt.TextFormat.PlainText
    assert label.text() == ("Terms the posting asks for: <b>SQL</b> ✓ in your résumé · "
                            "Spark ✗ not in your profile")
    detail.apply({"job": _job(), "profileSample": False})  # an answer without the list
    assert not label.isVisible()
