"""The discovery schedule picker: days (every day / weekdays / chosen days) and a time, in
the user's local time; the UTC cron the API keeps is under "Technical details".

What it saves comes from ``desktop/presenters/schedule.py``: an untouched schedule is
saved back exactly as it was read, and a cron the picker cannot express shows as "Custom
schedule" (its next runs in local time) and is kept unless the user picks something else.
"""

from __future__ import annotations

from datetime import datetime, tzinfo

from PySide6.QtCore import QTime, Signal
from PySide6.QtWidgets import (
    QComboBox,
    QHBoxLayout,
    QLabel,
    QTimeEdit,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from desktop.plain_text import PlainLabel
from desktop.presenters.schedule import (
    EVERY_DAY,
    WEEKDAY_NAMES,
    WEEKDAYS,
    SchedulePick,
    clock_change_note,
    cron_from_pick,
    describe_custom,
    describe_pick,
    pick_from_cron,
)
from desktop.views.partials.settings_form import HINT_STYLE
from desktop.views.partials.technical_disclosure import TechnicalDisclosure

DAY_CHOICES = (("every_day", "Every day"), ("weekdays", "Weekdays (Mon–Fri)"),
               ("chosen", "Chosen days"))
CUSTOM = "custom"
CUSTOM_LABEL = "Custom schedule (kept as it is)"
DEFAULT_CRON = "0 8 * * 1-5"
# A chosen day must read as chosen at a glance (the default checked look is a faint shade).
DAY_BUTTON_STYLE = ("QToolButton { padding: 2px 8px; border: 1px solid palette(mid);"
                    " border-radius: 4px; }"
                    " QToolButton:checked { background: #1f6feb; color: white;"
                    " border-color: #1a5fcc; }")


class SchedulePicker(QWidget):
    edited = Signal()  # the user changed the days or the time

    def __init__(self, parent: QWidget | None = None, *, zone: tzinfo | None = None,
                 at: datetime | None = None):
        super().__init__(parent)
        # None: the system's zone, now. Tests pass a fixed zone and instant.
        self.zone, self.at = zone, at
        self._loaded_cron = DEFAULT_CRON
        self._loaded_pick: SchedulePick | None = None
        self._setting = False
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(4)
        row = QHBoxLayout()
        self.days_choice = QComboBox(self)
        self.days_choice.setObjectName("scheduleDays")
        for value, label in DAY_CHOICES:
            self.days_choice.addItem(label, value)
        self.time = QTimeEdit(self)
        self.time.setObjectName("scheduleTime")
        self.time.setDisplayFormat("HH:mm")
        self.at_label = QLabel("at", self)
        row.addWidget(self.days_choice)
        row.addWidget(self.at_label)
        row.addWidget(self.time)
        row.addStretch(1)
        layout.addLayout(row)
        self.day_buttons: list[QToolButton] = []
        days_row = QHBoxLayout()
        days_row.setSpacing(2)
        for day, name in enumerate(WEEKDAY_NAMES):
            button = QToolButton(self)
            button.setObjectName(f"scheduleDay{name}")
            button.setText(name)
            button.setCheckable(True)
            button.setStyleSheet(DAY_BUTTON_STYLE)
            button.toggled.connect(lambda on, day=day: self._day_toggled(day, on))
            self.day_buttons.append(button)
            days_row.addWidget(button)
        days_row.addStretch(1)
        self.days_box = QWidget(self)
        self.days_box.setLayout(days_row)
        days_row.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.days_box)
        self.summary = PlainLabel(self)
        self.summary.setObjectName("scheduleSummary")
        self.summary.setWordWrap(True)
        self.summary.setStyleSheet(HINT_STYLE)
        layout.addWidget(self.summary)
        self.technical = TechnicalDisclosure(self)
        self.technical.setObjectName("scheduleTechnical")
        layout.addWidget(self.technical)
        self.days_choice.currentIndexChanged.connect(self._on_user_edit)
        self.time.timeChanged.connect(self._on_user_edit)
        self.set_cron(DEFAULT_CRON)

    # -- the value ------------------------------------------------------------------------

    def set_cron(self, cron: str | None) -> None:
        """Show a saved cron: as a pick when the picker can express it, else as custom."""
        self._loaded_cron = (cron or DEFAULT_CRON).strip()
        self._loaded_pick = pick_from_cron(self._loaded_cron, self.zone, self.at)
        self._setting = True
        try:
            custom_index = self.days_choice.findData(CUSTOM)
            if self._loaded_pick is None:
                if custom_index < 0:
                    self.days_choice.addItem(CUSTOM_LABEL, CUSTOM)
                self.days_choice.setCurrentIndex(self.days_choice.findData(CUSTOM))
            else:
                if custom_index >= 0:
                    self.days_choice.removeItem(custom_index)
                self._show_pick(self._loaded_pick)
        finally:
            self._setting = False
        self._refresh()

    def pick(self) -> SchedulePick | None:
        """What the inputs say now (None while "Custom schedule" is chosen)."""
        choice = self.days_choice.currentData()
        if choice == CUSTOM:
            return None
        days = {"every_day": EVERY_DAY, "weekdays": WEEKDAYS}.get(choice) or frozenset(
            day for day, button in enumerate(self.day_buttons) if button.isChecked())
        time = self.time.time()
        return SchedulePick(days or WEEKDAYS, time.hour(), time.minute())

    def cron(self) -> str:
        """The cron to save: the one read, unless the user picked something else."""
        pick = self.pick()
        if pick is None or pick == self._loaded_pick:
            return self._loaded_cron
        return cron_from_pick(pick, self.zone, self.at)

    def description(self) -> str:
        pick = self.pick()
        if pick is None:
            return describe_custom(self._loaded_cron, self.zone, self.at)
        return f"{describe_pick(pick)}, your time"

    # -- inputs ---------------------------------------------------------------------------

    def _show_pick(self, pick: SchedulePick) -> None:
        self.days_choice.setCurrentIndex(self.days_choice.findData(pick.kind))
        for day, button in enumerate(self.day_buttons):
            button.setChecked(day in pick.days)
        self.time.setTime(QTime(pick.hour, pick.minute))

    def _day_toggled(self, day: int, on: bool) -> None:
        if self._setting:
            return
        if not on and not any(button.isChecked() for button in self.day_buttons):
            self.day_buttons[day].setChecked(True)  # at least one day stays chosen
            return
        self._on_user_edit()

    def _on_user_edit(self, *_args) -> None:
        if self._setting:
            return
        if self.days_choice.currentData() == "chosen" and not any(
                button.isChecked() for button in self.day_buttons):
            # "Chosen days" starts from the saved days, else from the weekdays.
            start = self._loaded_pick.days if self._loaded_pick else WEEKDAYS
            self._setting = True
            try:
                for day, button in enumerate(self.day_buttons):
                    button.setChecked(day in start)
            finally:
                self._setting = False
        self._refresh()
        self.edited.emit()

    def _refresh(self) -> None:
        choice = self.days_choice.currentData()
        custom = choice == CUSTOM
        self.time.setVisible(not custom)
        self.at_label.setVisible(not custom)
        self.days_box.setVisible(choice == "chosen")
        pick = self.pick()
        note = clock_change_note(pick, self.zone, self.at) if pick else None
        self.summary.setText(self.description() + (f". {note}" if note else "."))
        self.technical.set_rows([("Saved as (cron, UTC)", self.cron())])
