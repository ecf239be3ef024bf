#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
# SPDX-FileCopyrightText: 2026 The libspawn authors
"""spawn-gi.py COMMAND...: libspawn from Python, through PyGObject.

Runs each COMMAND (a shell command line) with a Spawn.Process, all at once,
collecting their output with communicate_utf8_async() under one
GLib.MainLoop, and prints how each ended. Then starts `sleep 0.2` with the
lower-level Spawn.async_fd_with_pipes() and waits for it with a child watch.

    $ GI_TYPELIB_PATH=build/libspawn LD_LIBRARY_PATH=build/libspawn \\
        /usr/bin/python3 examples/spawn-gi.py 'echo hello' 'exit 3' 'kill -TERM $$'

With libspawn installed, GI_TYPELIB_PATH and LD_LIBRARY_PATH are not needed.
Exit status: 0 if every command exited with status 0, else 1.
"""
import sys

import gi

gi.require_version("Spawn", "1")
from gi.repository import GLib, Spawn  # noqa: E402


def describe(proc):
    if proc.get_if_exited():
        return "exited with status %d" % proc.get_exit_code()
    if proc.get_if_signaled():
        return "killed by signal %d" % proc.get_term_sig()
    return "status lost"


def main(commands):
    print("libspawn backend: %s" % Spawn.backend_to_string(Spawn.get_backend()))
    loop = GLib.MainLoop()
    pending = len(commands)
    results = {}

    def done(proc, res, command):
        nonlocal pending
        try:
            _, out, err = proc.communicate_utf8_finish(res)
            results[command] = (describe(proc), out, err, proc.get_successful())
        except GLib.Error as e:
            results[command] = ("failed: %s" % e.message, "", "", False)
        pending -= 1
        if pending == 0:
            loop.quit()

    procs = []
    for command in commands:
        proc = Spawn.Process.new(["sh", "-c", command])
        try:
            proc.start()
        except GLib.Error as e:
            results[command] = ("did not start: %s" % e.message, "", "", False)
            pending -= 1
            continue
        print("started pid %d (%s backend): %s"
              % (proc.get_pid(), Spawn.backend_to_string(proc.get_backend()), command))
        proc.communicate_utf8_async(None, None, done, command)
        procs.append(proc)
    if pending:
        loop.run()
    ok = True
    for command in commands:
        how, out, err, success = results[command]
        ok = ok and success
        print("%s: %s" % (command, how))
        for line in (out or "").splitlines():
            print("    out| %s" % line)
        for line in (err or "").splitlines():
            print("    err| %s" % line)

    # The lower level: a SpawnChild and a watch on its descriptor.
    # No pipes asked for, so none made: the three fds returned are -1.
    child, _, _, _ = Spawn.async_fd_with_pipes(None, ["sleep", "0.2"], None,
                                               GLib.SpawnFlags.SEARCH_PATH,
                                               Spawn.ChildFlags.FLAGS_NONE,
                                               Spawn.PipeFlags.FLAGS_NONE,
                                               -1, -1, -1, None, None)
    ended = []

    def watch(c, info, error):
        ended.append((info.kind, info.status, info.utime_usec + info.stime_usec))
        loop.quit()

    child.watch_add(watch)
    loop.run()
    kind, status, cpu = ended[0]
    print("spawn_async_fd_with_pipes: pid %d (%s backend) ended: %s %d, %d us of CPU"
          % (child.get_pid(), Spawn.backend_to_string(child.get_backend()),
             kind.value_nick, status, cpu))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:] or ["echo hello from $$", "echo oops >&2; exit 3", "kill -TERM $$"]))
