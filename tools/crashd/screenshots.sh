#!/bin/sh
# Remakes docs/img/crashd-*.png, the screenshots of crashd's pages that
# docs/crashd.md shows: crashd/server's TestBrowser takes them in Debian's
# Chromium over corpus crashes uploaded to a real collector, every page
# (login, home, signature, report, report with inlined frames, search,
# symbols, tokens, and the hostile report and signature) at 1280 px
# (crashd-PAGE.png) and at 390 px (crashd-PAGE-phone.png), after checking
# its layout (crashd/server/layout_test.go). Needs
# /usr/bin/chromium (or $GOBREAKPAD_CHROMIUM) and ../shared/corpus; shrinks
# them with pngquant and optipng when they are installed.
set -e
cd "$(dirname "$0")/../.."
mkdir -p docs/img
GOBREAKPAD_SCREENSHOTS="$PWD/docs/img" go test ./crashd/server -run '^TestBrowser$' -count=1 -v | grep -E '^(--- |ok|FAIL|PASS|\s+(browser|layout)_test|\s{8})' || true
if command -v pngquant >/dev/null; then pngquant --force --ext .png --quality 60-90 docs/img/crashd-*.png; fi
if command -v optipng >/dev/null; then optipng -quiet -o2 docs/img/crashd-*.png; fi
ls -l docs/img/crashd-*.png
