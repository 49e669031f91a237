"""The materials review set (tests/materials_review.py): every job seeker of the fit
evaluation set and their three best-labelled postings, prepared as the pipeline prepares a
job offline and rendered as PDF and Word. Every item of every document's checklist passes:
no sentence over 45 words, none said twice, none without a purpose for this posting, every
claim traced to the profile, and the files reading back."""

from __future__ import annotations

import pytest

from backend.pipeline import material_checks
from backend.pipeline.documents import LetterParagraph
from tests.fit_evaluation import TODAY, load_postings, load_seekers
from tests.materials_review import PER_SEEKER, best_postings, review, review_pairs

SEEKERS = load_seekers()


def test_the_set_spans_the_lines_of_work_and_countries():
    pairs = list(review_pairs())
    assert len(pairs) == PER_SEEKER * len(SEEKERS) >= 36
    assert len({s.line_of_work for s in SEEKERS}) >= 11
    assert len({s.country for s in SEEKERS}) >= 9
    postings = load_postings()
    for seeker in SEEKERS:  # the best labels: no "acceptable" before a "good"
        labels = [p.labels[seeker.id]["label"] for p in best_postings(seeker, postings)]
        assert labels == sorted(labels, key=("good", "acceptable").index), (seeker.id, labels)


@pytest.mark.parametrize("seeker_id", [s.id for s in SEEKERS])
def test_every_item_passes_for_every_document(seeker_id, tmp_path):
    for seeker, posting in review_pairs():
        if seeker.id != seeker_id:
            continue
        reviewed = review(seeker, posting, tmp_path / posting.id)
        for check in (reviewed.resume_check, reviewed.letter_check):
            failed = {item: problems for item, problems in check.problems.items() if problems}
            assert not failed, (seeker_id, posting.id, check.document, failed)
            assert set(check.problems) == set(material_checks.ITEMS)


def test_the_checklist_finds_what_it_looks_for(tmp_path):
    seeker = next(s for s in SEEKERS if s.id == "rn_houston")
    posting = best_postings(seeker, load_postings())[0]
    reviewed = review(seeker, posting, tmp_path)
    made, job = reviewed.materials, posting.job
    rambling = "Then " + " ".join(["more"] * 50) + "."
    aside = LetterParagraph(text="I enjoy hiking with my dog on weekends. " + rambling, evidence=[])
    said_twice = made.letter.paragraphs[0]
    letter = made.letter.model_copy(update={"paragraphs": [
        *made.letter.paragraphs[:-1], aside, said_twice, made.letter.paragraphs[-1]]})
    check = material_checks.letter_checklist(letter, made.resume, seeker.profile, made.fit, job, TODAY,
                                             files={"pdf": reviewed.files["cover_letter_pdf"].read_bytes()})
    assert check.problems["short_sentences"] and check.problems["no_repeats"]
    assert "I enjoy hiking with my dog on weekends." in check.problems["purposeful"]
    assert any("cites no profile item" in p for p in check.problems["traced"])
    assert check.problems["ats"]  # the file is the letter without them
