#!/usr/bin/env bash
# Runs before `npm test`: the image tests read our QR codes back with decoders that are not ours,
# zbarimg (Debian zbar-tools) and rsvg-convert (Debian librsvg2-bin), and the quota test starts and
# stops a Redis of its own (redis-server); the console's browser suite drives Debian's Chromium
# (/usr/bin/chromium) through playwright-core. Installs what is missing when this machine can (root
# with apt-get); otherwise says what to install. No Redis needs to be running: the test starts its own.
set -euo pipefail
missing=()
command -v zbarimg >/dev/null || missing+=(zbar-tools)
command -v rsvg-convert >/dev/null || missing+=(librsvg2-bin)
command -v redis-server >/dev/null || missing+=(redis-server)
[ -x /usr/bin/chromium ] || missing+=(chromium)
[ ${#missing[@]} -eq 0 ] && exit 0
if [ "$(id -u)" -eq 0 ] && command -v apt-get >/dev/null; then
  echo "installing ${missing[*]} for the tests" >&2
  # The browser alone comes without recommends: it needs no desktop around it.
  install() {
    local browser=() others=()
    for package in "$@"; do [ "$package" = chromium ] && browser+=("$package") || others+=("$package"); done
    { [ ${#others[@]} -eq 0 ] || DEBIAN_FRONTEND=noninteractive apt-get install -y -q "${others[@]}" >/dev/null; } &&
      { [ ${#browser[@]} -eq 0 ] || DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${browser[@]}" >/dev/null; }
  }
  install "${missing[@]}" || { apt-get update -q >/dev/null && install "${missing[@]}"; }
else
  echo "The tests need: ${missing[*]} (Debian/Ubuntu package names). Install them and run npm test again." >&2
  exit 1
fi
