/* SPDX-License-Identifier: LGPL-2.1-or-later
 * SPDX-FileCopyrightText: 2026 The libspawn authors
 */
/*
 * libspawn-vm-exit STATUS: the last thing the guest's /init runs.
 *
 * Drains the serial ports that carry the command's stdout and stderr,
 * reports STATUS on the kernel log (where vm/run looks for it) and stops
 * QEMU through its isa-debug-exit port.  If the port cannot be reached
 * (no CONFIG_X86_IOPL_IOPERM), it reboots, which ends QEMU under
 * -no-reboot; the status line is what counts either way.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/io.h>
#include <sys/reboot.h>
#include <termios.h>
#include <unistd.h>

#define DEBUG_EXIT_PORT 0xf4
#define DEBUG_EXIT_DONE 0x10 /* QEMU exits with (0x10 << 1) | 1 = 33 */

static void drain(const char *tty)
{
	int fd = open(tty, O_WRONLY | O_NOCTTY | O_NONBLOCK);

	if (fd >= 0) {
		tcdrain(fd);
		close(fd);
	}
}

int main(int argc, char **argv)
{
	char line[64];
	int fd, n;

	if (argc != 2)
		return 2;
	drain("/dev/ttyS1");
	drain("/dev/ttyS2");

	n = snprintf(line, sizeof(line), "libspawn-vm: exit status %d\n", atoi(argv[1]));
	fd = open("/dev/kmsg", O_WRONLY);
	if (fd < 0 || write(fd, line, n) != n) {
		fd = open("/dev/ttyS0", O_WRONLY | O_NOCTTY);
		if (fd >= 0 && write(fd, line, n) == n)
			tcdrain(fd);
	}
	sync();

	if (ioperm(DEBUG_EXIT_PORT, 4, 1) == 0)
		outb(DEBUG_EXIT_DONE, DEBUG_EXIT_PORT);
	reboot(RB_AUTOBOOT);
	return 1;
}
