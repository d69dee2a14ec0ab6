#!/usr/bin/env bash
# Installs the browser the end-to-end browser test drives
# (examples/live-list): Debian's chromium package, never a downloaded
# browser build. The test runs it headless through the DevTools protocol
# (chromedp), so nothing is started here. Idempotent: a second run only
# checks that the installed browser renders a page headless (about 2 s).
set -euo pipefail
SERVICE=browser
# shellcheck source=scripts/services/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

install_chromium() {
	if [[ -x ${CHROMIUM_BIN} ]]; then
		log "chromium already installed"
		return
	fi
	log "installing chromium from Debian packages"
	# --no-install-recommends (apt_install) keeps out the desktop extras;
	# headless Chromium needs none of them.
	apt_install chromium
}

# check_headless renders a page headless, so a browser that cannot start
# (a missing library, a broken install) fails here and not in the tests.
check_headless() {
	local profile out
	profile=$(mktemp -d)
	# Debian's launcher and Chromium log harmless noise (D-Bus, a memory
	# check in /etc/chromium.d) on stderr: only the page's DOM counts.
	out=$("${CHROMIUM_BIN}" --headless --no-sandbox --disable-gpu --user-data-dir="${profile}" \
		--dump-dom 'data:text/html,<p>cms-headless-ok</p>' 2>/dev/null) || true
	rm -rf "${profile}"
	[[ ${out} == *cms-headless-ok* ]] || die "${CHROMIUM_BIN} is installed but does not render a page headless"
}

main() {
	require_root
	local t
	t=$(now)
	install_chromium
	record_timing install "${t}"
	t=$(now)
	check_headless
	record_timing start "${t}"
	log "ready: $("${CHROMIUM_BIN}" --version 2>/dev/null)"
}

main "$@"
