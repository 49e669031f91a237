"""The main window's menu bar with the platform's shortcuts.

Each command takes Qt's standard key for it on this platform (``QKeySequence.StandardKey``:
Cmd on macOS, Ctrl elsewhere; KDE's own Preferences key) and a fallback where the platform
has none (Settings: Ctrl+, - Cmd+, on macOS, where Qt maps Ctrl to Cmd; Quit: Ctrl+Q on
Windows, which defines no Quit key). Menu roles let macOS move Settings, Quit and About
into the application menu.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import QMainWindow, QMenu

Key = QKeySequence.StandardKey


def shortcut_keys(standard: QKeySequence.StandardKey, *fallbacks: str) -> list[QKeySequence]:
    """The platform's keys for ``standard`` plus the fallbacks it lacks, without repeats."""
    keys = list(QKeySequence.keyBindings(standard))
    for text in fallbacks:
        key = QKeySequence(text)
        if key not in keys:
            keys.append(key)
    return keys


@dataclass(frozen=True)
class MenuCommands:
    refresh: Callable[[], None]
    find: Callable[[], None]
    settings: Callable[[], None]
    quit: Callable[[], None]
    about: Callable[[], None]
    open_app_folder: Callable[[], None]


@dataclass(frozen=True)
class MenuActions:
    refresh: QAction
    find: QAction
    settings: QAction
    quit: QAction
    about: QAction
    open_app_folder: QAction


def _action(menu: QMenu, text: str, slot: Callable[[], None], keys: list[QKeySequence] = (),
            role: QAction.MenuRole = QAction.MenuRole.NoRole, name: str = "") -> QAction:
    action = QAction(text, menu)
    action.setObjectName(name)
    action.setShortcuts(list(keys))
    action.setMenuRole(role)
    action.triggered.connect(lambda _checked=False: slot())
    menu.addAction(action)
    return action


def build_menu_bar(window: QMainWindow, commands: MenuCommands) -> MenuActions:
    bar = window.menuBar()
    file_menu = bar.addMenu("&File")
    refresh = _action(file_menu, "&Refresh", commands.refresh,
                      shortcut_keys(Key.Refresh, "F5"), name="refreshAction")
    settings = _action(file_menu, "&Settings…", commands.settings,
                       shortcut_keys(Key.Preferences, "Ctrl+,"),
                       QAction.MenuRole.PreferencesRole, "settingsAction")
    file_menu.addSeparator()
    quit_action = _action(file_menu, "&Quit", commands.quit, shortcut_keys(Key.Quit, "Ctrl+Q"),
                          QAction.MenuRole.QuitRole, "quitAction")
    edit_menu = bar.addMenu("&Edit")
    find = _action(edit_menu, "&Find jobs…", commands.find, shortcut_keys(Key.Find, "Ctrl+F"),
                   name="findAction")
    help_menu = bar.addMenu("&Help")
    open_folder = _action(help_menu, "Open the &app folder", commands.open_app_folder,
                          name="openAppFolderAction")
    about = _action(help_menu, "&About JobCtrl", commands.about, role=QAction.MenuRole.AboutRole,
                    name="aboutAction")
    return MenuActions(refresh, find, settings, quit_action, about, open_folder)
