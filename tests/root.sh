# shellcheck shell=bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# SPDX-FileCopyrightText: 2026 The libspawn authors
# A clean Debian 12 root for tests/debian: made as tests/fresh-machine makes
# its root (debootstrap --variant=minbase bookworm from this machine's
# mirror, this machine's apt sources), kept as a tarball so that the next
# run unpacks it instead, entered with /proc, /sys and /dev mounted, and
# removed only when nothing is mounted in it. Sourced after vm/lib.sh.

# root_mounts_under DIR: mount points at or below DIR, deepest first.
root_mounts_under() {
	awk -v d="$1" '$2 == d || index($2, d "/") == 1 { print $2 }' /proc/self/mounts |
		awk '{ print length($0), $0 }' | sort -rn | cut -d' ' -f2-
}

# root_unmount DIR: stop what runs in DIR and unmount everything in it.
root_unmount() {
	local root=$1 m pid
	for pid in /proc/[0-9]*; do
		[ "$(readlink "$pid/root" 2>/dev/null)" = "$root" ] && kill -9 "${pid#/proc/}" 2>/dev/null
	done
	while read -r m; do
		umount "$m" 2>/dev/null || umount -l "$m" || true
	done < <(root_mounts_under "$root")
}

# root_remove DIR: unmount, and remove DIR only when nothing is mounted
# there any more (a bind mount could be this machine's own files).
root_remove() {
	local root=$1 left
	[ -d "$root" ] || return 0
	root_unmount "$root"
	left=$(root_mounts_under "$root")
	if [ -n "$left" ]; then
		printf '%s: still mounted, NOT removing %s:\n%s\n' "${0##*/}" "$root" "$left" >&2
		return 1
	fi
	rm -rf --one-file-system "$root"
}

# root_remove_stale BASE: roots (BASE/root-PID) of runs that are gone.
root_remove_stale() {
	local old
	for old in "$1"/root-*; do
		[ -d "$old" ] || continue
		kill -0 "${old##*-}" 2>/dev/null && continue
		echo "${0##*/}: removing the stale root $old" >&2
		root_remove "$old" || die "cannot clean up $old"
	done
}

# root_mirror: this machine's Debian mirror, as fresh-machine finds it.
root_mirror() {
	local mirror
	mirror=$(sed -nE 's/^URIs: *([^ ]+).*/\1/p; s/^deb +(\[[^]]*\] +)?([^ ]+) +bookworm .*/\2/p' \
		/etc/apt/sources.list.d/*.sources /etc/apt/sources.list 2>/dev/null | head -n 1 || true)
	echo "${mirror:-http://deb.debian.org/debian}"
}

# root_make DIR TARBALL LOG: DIR becomes a minimal bookworm root with this
# machine's apt sources. From TARBALL when there is one younger than
# ROOT_MAX_AGE days (default 14), else by debootstrap, then saved there.
# Prints "cached" or "debootstrap", what it did.
root_make() {
	local dir=$1 tarball=$2 log=$3 f
	mkdir -p "$dir"
	if [ -s "$tarball" ] && [ -n "$(find "$tarball" -mtime -"${ROOT_MAX_AGE:-14}")" ]; then
		tar -xpf "$tarball" -C "$dir" >>"$log" 2>&1 || return 1
		echo cached
		return 0
	fi
	debootstrap --variant=minbase bookworm "$dir" "$(root_mirror)" >>"$log" 2>&1 || return 1
	for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.sources /etc/apt/sources.list.d/*.list; do
		[ -e "$f" ] && cp "$f" "$dir$f"
	done
	# Our own archive lines replace debootstrap's (same archive, plus updates).
	if ls "$dir"/etc/apt/sources.list.d/*.sources >/dev/null 2>&1; then
		rm -f "$dir/etc/apt/sources.list"
	fi
	rm -rf "$dir"/var/cache/apt/archives/*.deb "$dir"/var/lib/apt/lists/*
	mkdir -p "$(dirname "$tarball")"
	tar -cpf "$tarball.tmp" -C "$dir" . >>"$log" 2>&1 || return 1
	mv "$tarball.tmp" "$tarball"
	echo debootstrap
}

# root_enter DIR: mount /proc, /sys and /dev (a slave: an unmount in the
# root never reaches ours) and give it this machine's resolver.
root_enter() {
	local dir=$1
	cp /etc/resolv.conf "$dir/etc/resolv.conf"
	mount -t proc proc "$dir/proc"
	mount -t sysfs sysfs "$dir/sys"
	mount --rbind /dev "$dir/dev"
	mount --make-rslave "$dir/dev"
}
