# shellcheck shell=bash
# shellcheck disable=SC2034 # variables used by the scripts that source this
# Shared helpers for the vm/ scripts. Sourced, never executed.

LIBSPAWN_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
LIBSPAWN_CACHE=${LIBSPAWN_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/libspawn}
LIBSPAWN_VARIANTS=(unpatched patched noclonefd debug distro)
_vm_t0=$(date +%s)

die() {
	printf '%s: error: %s\n' "${0##*/}" "$*" >&2
	exit 2
}

# step MESSAGE: progress line with the time elapsed since the script started.
step() {
	local t=$(( $(date +%s) - _vm_t0 ))
	printf '[%s %02d:%02d] %s\n' "${0##*/}" $((t / 60)) $((t % 60)) "$*" >&2
}

check_variant() {
	local v
	for v in "${LIBSPAWN_VARIANTS[@]}"; do
		[ "$1" = "$v" ] && return 0
	done
	die "unknown kernel variant '$1' (known: ${LIBSPAWN_VARIANTS[*]})"
}

# with_lock FILE CMD...: run CMD holding an exclusive lock on FILE, so two
# builds of the same thing wait for each other instead of sharing a tree.
with_lock() {
	local lock=$1
	shift
	mkdir -p "$(dirname "$lock")"
	(
		flock 9
		"$@"
	) 9>"$lock"
}

# kernel_series: the patch files of kernel/patches, in order, without the
# cover letter (0000), which carries no diff.
kernel_series() {
	local p
	for p in "$LIBSPAWN_ROOT"/kernel/patches/[0-9][0-9][0-9][0-9]-*.patch; do
		[ -e "$p" ] || continue
		case "${p##*/}" in
		0000-*) ;;
		*) printf '%s\n' "$p" ;;
		esac
	done
}
