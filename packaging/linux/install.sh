#!/bin/sh
# Installs JobCtrl for the current user, per the freedesktop conventions:
#   program    ~/.local/opt/JobCtrl/            (--prefix DIR to choose another folder)
#   launcher   $XDG_DATA_HOME/applications/jobctrl.desktop   (~/.local/share/applications)
#   icon       $XDG_DATA_HOME/icons/hicolor/256x256/apps/jobctrl.png
#   command    ~/.local/bin/jobctrl          (a symlink)
# Your data (jobs, Temporal history, settings) lives in the app dir,
# $XDG_DATA_HOME/JobCtrl, never in the program folder: installing a newer version over an
# older one replaces the program and keeps the data.
#
#   ./install.sh                       install or upgrade
#   ./install.sh --uninstall           remove the program, launcher, icon and command; keep the data
#   ./install.sh --uninstall --purge   ... and delete the data too
set -eu

here="$(cd "$(dirname "$0")" && pwd)"
data_home="${XDG_DATA_HOME:-$HOME/.local/share}"
prefix="$HOME/.local/opt/JobCtrl"
bin_dir="$HOME/.local/bin"
app_dir="${JOBCTRL_APP_DIR:-$data_home/JobCtrl}"
mode=install
purge=no

while [ $# -gt 0 ]; do
  case "$1" in
    --prefix) prefix="$2"; shift 2 ;;
    --prefix=*) prefix="${1#--prefix=}"; shift ;;
    --uninstall) mode=uninstall; shift ;;
    --purge) purge=yes; shift ;;
    -h|--help) sed -n '2,15p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "install.sh: unknown option $1 (see --help)" >&2; exit 2 ;;
  esac
done

desktop_file="$data_home/applications/jobctrl.desktop"
icon_file="$data_home/icons/hicolor/256x256/apps/jobctrl.png"
command_link="$bin_dir/jobctrl"

abs_path() { (mkdir -p "$1" && cd "$1" && pwd -P); }
# The absolute, symlink-free path of a folder that may not exist yet (creates nothing).
soft_abs_path() {
  p="$1" rest=""
  case "$p" in /*) ;; *) p="$(pwd)/$p" ;; esac
  while [ ! -d "$p" ]; do rest="/$(basename "$p")$rest"; p="$(dirname "$p")"; done
  echo "$(cd "$p" && pwd -P)$rest"
}

refresh_caches() {
  # Both are optional: desktops rescan on their own, these only make it immediate.
  if command -v update-desktop-database >/dev/null 2>&1; then
    update-desktop-database -q "$data_home/applications" 2>/dev/null || true
  fi
  if command -v gtk-update-icon-cache >/dev/null 2>&1 && [ -f "$data_home/icons/hicolor/index.theme" ]; then
    gtk-update-icon-cache -q -t "$data_home/icons/hicolor" 2>/dev/null || true
  fi
}

refuse_while_running() {
  # runtime.json exists only while an instance runs (it is removed on a clean stop).
  runtime="$app_dir/runtime.json"
  [ -f "$runtime" ] || return 0
  for pid in $(tr -d '\n' < "$runtime" | sed -n 's/.*"pids"[^{]*{\([^}]*\)}.*/\1/p' | tr ',' '\n' | sed 's/.*://; s/[^0-9]//g'); do
    if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; then
      echo "JobCtrl is running (pid $pid). Quit it first, then run this again." >&2
      exit 1
    fi
  done
}

uninstall() {
  refuse_while_running
  if [ -L "$command_link" ] && [ "$(readlink "$command_link")" = "$prefix/jobctrl" ]; then
    rm -f "$command_link"
  fi
  rm -f "$desktop_file" "$icon_file"
  rm -rf "$prefix"
  refresh_caches
  if [ "$purge" = yes ]; then
    rm -rf "$app_dir"
    echo "JobCtrl and its data ($app_dir) are removed."
  else
    echo "JobCtrl is removed. Your data is kept in $app_dir (--uninstall --purge deletes it)."
  fi
}

install() {
  [ -x "$here/app/jobctrl" ] || { echo "install.sh: $here/app/jobctrl is missing" >&2; exit 1; }
  mkdir -p "$prefix"
  prefix="$(abs_path "$prefix")"
  app_abs="$(soft_abs_path "$app_dir")"
  # The app dir must never be inside the program folder (an upgrade replaces that folder),
  # nor the other way round.
  case "$app_abs/" in "$prefix"/*) echo "install.sh: the app dir $app_abs is inside $prefix; choose another --prefix" >&2; exit 1 ;; esac
  case "$prefix/" in "$app_abs"/*) echo "install.sh: $prefix is inside the app dir $app_abs; choose another --prefix" >&2; exit 1 ;; esac
  refuse_while_running

  # Copy beside the old version, then swap: a failed copy leaves the old one working.
  staging="$prefix.new.$$"
  rm -rf "$staging"
  cp -a "$here/app" "$staging"
  cp "$here/install.sh" "$staging/install.sh"
  old="$prefix.old.$$"
  mv "$prefix" "$old"
  mv "$staging" "$prefix"
  rm -rf "$old"

  mkdir -p "$(dirname "$desktop_file")" "$(dirname "$icon_file")" "$bin_dir"
  cp "$here/share/icons/hicolor/256x256/apps/jobctrl.png" "$icon_file"
  # The Exec line quotes the path (spaces); '%' would need doubling in a .desktop file.
  case "$prefix" in *%*|*\"*|*\`*|*\$*|*\\*) echo "install.sh: choose a --prefix without % \" \` \$ or \\" >&2; exit 1 ;; esac
  sed "s|@EXEC@|$prefix/jobctrl|g" "$here/share/applications/jobctrl.desktop" > "$desktop_file.tmp"
  chmod 644 "$desktop_file.tmp"
  mv "$desktop_file.tmp" "$desktop_file"
  ln -sfn "$prefix/jobctrl" "$command_link"
  refresh_caches

  echo "JobCtrl is installed in $prefix."
  echo "Start it from your desktop's application menu, or run: $command_link"
  echo "Your data lives in $app_dir. Uninstall with: $prefix/install.sh --uninstall"
}

"$mode"
