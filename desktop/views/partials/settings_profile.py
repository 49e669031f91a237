"""The profile editor: what every score, resume and letter is measured against.

Lists are typed comma-separated. Values go to ``PUT /v1/profile`` as typed (a salary floor
that is not a whole number comes back as an inline message). A JSON Resume document, if
one was uploaded through the API, is kept as it is.
"""

from __future__ import annotations

from typing import Any

from PySide6.QtWidgets import (
    QComboBox,
    QFormLayout,
    QLineEdit,
    QPlainTextEdit,
    QVBoxLayout,
    QWidget,
)

from desktop.views.partials.settings_form import ErrorLabel, hint

REMOTE_CHOICES = (("any", "Any"), ("remote_only", "Remote only"),
                  ("remote_or_hybrid", "Remote or hybrid"), ("onsite", "On-site"))
TEXT_FIELDS = (("name", "Name"), ("email", "Email"), ("phone", "Phone"),
               ("headline", "Headline"))
LIST_FIELDS = (("targetTitles", "Target titles"), ("locations", "Locations"),
               ("skills", "Skills"), ("mustHaveKeywords", "Must-have words"),
               ("dealBreakerKeywords", "Deal-breaker words"))


def split_list(text: str) -> list[str]:
    return [part.strip() for part in text.split(",") if part.strip()]


class ProfileEditor(QWidget):
    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self._loaded: dict[str, Any] = {}
        outer = QVBoxLayout(self)
        outer.setContentsMargins(0, 0, 0, 0)
        form = QFormLayout()
        outer.addLayout(form)
        self.inputs: dict[str, QLineEdit] = {}
        self.errors: dict[str, ErrorLabel] = {}
        for field, label in (*TEXT_FIELDS, *LIST_FIELDS):
            edit = QLineEdit(self)
            edit.setObjectName(f"profile.{field}")
            if (field, label) in LIST_FIELDS:
                edit.setPlaceholderText("comma-separated")
            self.inputs[field] = edit
            form.addRow(label, self._with_error(edit, field))
        self.remote = QComboBox(self)
        self.remote.setObjectName("profile.remotePreference")
        for value, text in REMOTE_CHOICES:
            self.remote.addItem(text, value)
        form.addRow("Remote", self._with_error(self.remote, "remotePreference"))
        self.salary_floor = QLineEdit(self)
        self.salary_floor.setObjectName("profile.salaryFloor")
        self.salary_floor.setPlaceholderText("yearly, e.g. 85000 (blank: none)")
        form.addRow("Salary floor", self._with_error(self.salary_floor, "salaryFloor"))
        self.salary_currency = QLineEdit(self)
        self.salary_currency.setObjectName("profile.salaryCurrency")
        self.salary_currency.setPlaceholderText("EUR, USD, …")
        self.salary_currency.setMaxLength(3)
        form.addRow("Currency", self._with_error(self.salary_currency, "salaryCurrency"))
        self.resume = QPlainTextEdit(self)
        self.resume.setObjectName("profile.resumeText")
        self.resume.setPlaceholderText("Paste your resume as plain text")
        self.resume.setMinimumHeight(110)
        form.addRow("Resume", self._with_error(self.resume, "resumeText"))

    def _with_error(self, widget: QWidget, field: str) -> QWidget:
        box = QWidget(self)
        layout = QVBoxLayout(box)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(2)
        layout.addWidget(widget)
        error = ErrorLabel(f"profile.{field}", box)
        self.errors[field] = error
        layout.addWidget(error)
        return box

    def set_profile(self, profile: dict[str, Any]) -> None:
        self._loaded = dict(profile)
        for field, _label in TEXT_FIELDS:
            self.inputs[field].setText(profile.get(field) or "")
        for field, _label in LIST_FIELDS:
            self.inputs[field].setText(", ".join(profile.get(field) or []))
        index = self.remote.findData(profile.get("remotePreference") or "any")
        self.remote.setCurrentIndex(max(index, 0))
        floor = profile.get("salaryFloor")
        self.salary_floor.setText("" if floor is None else str(floor))
        self.salary_currency.setText(profile.get("salaryCurrency") or "")
        self.resume.setPlainText(profile.get("resumeText") or "")

    def profile(self) -> dict[str, Any]:
        """The profile as typed; untouched parts (a JSON Resume) come from the loaded one."""
        result = dict(self._loaded)
        for field, _label in TEXT_FIELDS:
            text = self.inputs[field].text().strip()
            result[field] = text if text or field == "name" else None
        for field, _label in LIST_FIELDS:
            result[field] = split_list(self.inputs[field].text())
        result["remotePreference"] = self.remote.currentData()
        floor = self.salary_floor.text().strip().replace(",", "")
        result["salaryFloor"] = floor or None  # validated by the API
        result["salaryCurrency"] = self.salary_currency.text().strip().upper() or None
        resume = self.resume.toPlainText()  # exactly as written: the profile round-trips
        result["resumeText"] = resume if resume.strip() else None
        return result

    def show_errors(self, messages: dict[str, str]) -> None:
        for field, label in self.errors.items():
            label.show_message(messages.get(f"profile.{field}"))

    @staticmethod
    def note() -> QWidget:
        return hint("Saving a changed profile re-scores and re-writes materials for jobs "
                    "that need it; an unchanged save does nothing.")
