#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
# SPDX-FileCopyrightText: 2026 The libspawn authors
"""pty-gi.py: programs on a pseudo-terminal, from Python through PyGObject.

First a Spawn.Process whose three channels are on one terminal
(Spawn.ChannelMode.PTY), driven as a user at a keyboard would drive it: it
prints the window size it was given, asks for a password with echo off
(answered from the "ready-read-stdout" handler), is resized (SIGWINCH, and
`stty size` shows the new size), and is interrupted with ^C.  Then, a layer
down, a Spawn.Pty that `tty` runs on, read with read_bytes() to its end of
file.

    $ GI_TYPELIB_PATH=build/libspawn LD_LIBRARY_PATH=build/libspawn \\
        /usr/bin/python3 examples/pty-gi.py

Exit status 0 if everything happened as described, else 1.
"""
import signal
import sys

import gi

gi.require_version("Spawn", "1")
from gi.repository import GLib, Spawn  # noqa: E402

# What a terminal user sees, and what the script answers to each prompt.
SCRIPT = r"""
echo "size $(stty size)"
stty -echo; printf 'Password: '; read pw; stty echo
echo; echo "got ${#pw} characters"
trap 'echo "resized to $(stty size)"' WINCH
echo ready; while :; do sleep 1; done
"""
ANSWERS = [
    ("Password: ", "secret\n"),                   # not echoed: stty -echo first
    ("ready\r\n", "RESIZE"),                      # set_window_size: SIGWINCH
    ("resized to 40 132\r\n", "\x03"),            # ^C: SIGINT to the group
]


def drive_process():
    proc = Spawn.Process.new(["sh", "-c", SCRIPT])
    for channel in (Spawn.ProcessChannel.STDIN, Spawn.ProcessChannel.STDOUT,
                    Spawn.ProcessChannel.STDERR):
        proc.set_channel_mode(channel, Spawn.ChannelMode.PTY)
    proc.set_window_size(30, 100)
    loop = GLib.MainLoop()
    seen = bytearray()
    answers = list(ANSWERS)

    def on_output(p):
        seen.extend(p.read_all(Spawn.ProcessChannel.STDOUT).get_data())
        while answers and answers[0][0].encode() in seen:
            answer = answers.pop(0)[1]
            if answer == "RESIZE":
                p.set_window_size(40, 132)
            else:
                p.write(answer.encode())

    proc.connect("ready-read-stdout", on_output)
    proc.connect("finished", lambda *args: loop.quit())
    GLib.timeout_add_seconds(30, loop.quit)
    proc.start()
    loop.run()
    # The terminal's output processing made each \n a \r\n, and it echoed
    # the ^C as "^C" (ECHOCTL).
    print(seen.decode(errors="replace").replace("\r\n", "\n").rstrip("\n"))
    interrupted = proc.get_if_signaled() and proc.get_term_sig() == signal.SIGINT
    print("-> %s" % ("interrupted by ^C (SIGINT)" if interrupted else "did not end by ^C"))
    return (interrupted and not answers and b"secret" not in seen
            and b"size 30 100" in seen and b"got 6 characters" in seen)


def lower_layer():
    pty = Spawn.Pty.new(24, 80)
    child = Spawn.Pty.spawn(pty, None, ["tty"], None, GLib.SpawnFlags.SEARCH_PATH,
                            Spawn.ChildFlags.FLAGS_NONE)
    out = b""
    while True:
        data = pty.read_bytes(4096).get_data()
        if not data:           # the master's EIO: end of file
            break
        out += data
    ok, info = child.wait(None)
    name = out.decode().strip()
    print("tty says %s, the terminal is %s" % (name, pty.get_slave_name()))
    return ok and info.status == 0 and name == pty.get_slave_name()


if __name__ == "__main__":
    good = drive_process()
    good = lower_layer() and good
    sys.exit(0 if good else 1)
