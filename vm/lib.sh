# shellcheck shell=bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# SPDX-FileCopyrightText: 2026 The libspawn authors
# shellcheck disable=SC2034 # variables used by the scripts that source this
# Shared helpers for the vm/ scripts. Sourced, never executed.

LIBSPAWN_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
LIBSPAWN_CACHE=${LIBSPAWN_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/libspawn}
LIBSPAWN_VARIANTS=(unpatched patched noclonefd debug coverage systemd distro modern modern-patched modern-debug lts612)
_vm_t0=$(date +%s)
# The unprivileged, lingering user of the systemd guest (vm/build-systemd-root).
SYSTEMD_GUEST_USER=spawnuser
SYSTEMD_GUEST_UID=1000

die() {
	printf '%s: error: %s\n' "${0##*/}" "$*" >&2
	exit 2
}

# step MESSAGE: progress line with the time elapsed since the script started.
# MESSAGE is also the step that a failure is blamed on (see on_error).
_vm_step='starting'
step() {
	local t=$(( $(date +%s) - _vm_t0 ))
	_vm_step=$*
	printf '[%s %02d:%02d] %s\n' "${0##*/}" $((t / 60)) $((t % 60)) "$*" >&2
}

# step_failed NAME STATUS LOG COMMAND...: say which step failed, with what
# command and status, show the last 20 lines of its log, and exit 2.
step_failed() {
	local name=$1 rc=$2 log=$3
	shift 3
	{
		printf '%s: error: step "%s" failed (exit status %s)\n' "${0##*/}" "$name" "$rc"
		printf '  command: %s\n' "$*"
		if [ -s "$log" ]; then
			printf '  last lines of %s:\n' "$log"
			tail -n 20 "$log" | sed 's/^/  | /'
		fi
	} >&2
	exit 2
}

# run_step [--show] NAME LOG CMD...: run CMD with its output appended to
# LOG (with --show, on the terminal too); if it fails, step_failed.
run_step() {
	local show=0 name log rc=0
	[ "$1" != --show ] || { show=1; shift; }
	name=$1 log=$2
	shift 2
	mkdir -p "$(dirname "$log")"
	if [ "$show" = 1 ]; then
		"$@" 2>&1 | tee -a "$log" || rc=$?
	else
		"$@" >>"$log" 2>&1 || rc=$?
	fi
	[ "$rc" = 0 ] || step_failed "$name" "$rc" "$log" "$*"
}

# require_commands CMD...: stop before any work when a tool is missing,
# naming it, rather than failing minutes later in a build rule.
require_commands() {
	local c absent=()
	for c in "$@"; do
		command -v "$c" >/dev/null 2>&1 || absent+=("$c")
	done
	[ "${#absent[@]}" = 0 ] ||
		die "missing command(s): ${absent[*]} (vm/install-deps installs them)"
}

# A command that fails outside run_step still says where: the step, the
# line and the command (set -e would otherwise exit without a word).
# shellcheck disable=SC2317 # called through trap
on_error() {
	local rc=$1 line=$2 cmd=$3
	[ "$BASH_SUBSHELL" = 0 ] || return 0
	printf '%s: error: step "%s" failed (exit status %s) at line %s: %s\n' \
		"${0##*/}" "$_vm_step" "$rc" "$line" "$cmd" >&2
}
set -o errtrace
trap 'on_error "$?" "$LINENO" "$BASH_COMMAND"' ERR

check_variant() {
	local v
	for v in "${LIBSPAWN_VARIANTS[@]}"; do
		[ "$1" = "$v" ] && return 0
	done
	die "unknown kernel variant '$1' (known: ${LIBSPAWN_VARIANTS[*]})"
}

# with_lock FILE CMD...: run CMD holding an exclusive lock on FILE, so two
# builds of the same thing wait for each other instead of sharing a tree.
# Not in a subshell, so that CMD's progress and failures are this script's.
with_lock() {
	local lock=$1 fd
	shift
	mkdir -p "$(dirname "$lock")"
	exec {fd}>"$lock"
	flock "$fd"
	# Plain call: under "|| …" set -e would be off inside CMD. A failure
	# exits the script, which releases the lock.
	"$@"
	exec {fd}>&-
}

# kernel_series [DIR]: the patch files of DIR (default kernel/patches, the
# 6.1 series; kernel/patches-7.2 is the 7.2 one), in order, without the
# cover letter (0000), which carries no diff.
kernel_series() {
	local p dir=${1:-$LIBSPAWN_ROOT/kernel/patches}
	for p in "$dir"/[0-9][0-9][0-9][0-9]-*.patch; do
		[ -e "$p" ] || continue
		case "${p##*/}" in
		0000-*) ;;
		*) printf '%s\n' "$p" ;;
		esac
	done
}
