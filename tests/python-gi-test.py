#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
# SPDX-FileCopyrightText: 2026 The libspawn authors
"""libspawn from Python through PyGObject: the typelib loads, a
SpawnProcess runs communicate_utf8_async() under a GLib.MainLoop, a
spawn_async_fd_with_pipes() child is watched (and leaks no fd), properties
notify, the enums and the finished signal's boxed SpawnExitInfo come
through, a non-UTF-8 argv element reaches the child, and a wait_async
callback finishes the wait from its source object, and examples/pty-gi.py
drives programs on a pseudo-terminal.

    python-gi-test.py LIBDIR [TYPELIBDIR]
        (LIBDIR holds libspawn-1.so.N, TYPELIBDIR Spawn-1.typelib; by default LIBDIR)

TAP on stdout. Run by tests/python-gi-test, which skips without Python's gi.
"""
import os
import sys

import gi

gi.require_version("GIRepository", "2.0")
from gi.repository import GIRepository  # noqa: E402

# LIBDIR [TYPELIBDIR]: the build tree has both in one directory, an
# installed copy (tests/install-test) has the typelib in its own.
repo = GIRepository.Repository.get_default()
repo.prepend_search_path(sys.argv[2] if len(sys.argv) > 2 else sys.argv[1])
repo.prepend_library_path(sys.argv[1])
gi.require_version("Spawn", "1")
from gi.repository import GLib, Spawn  # noqa: E402

results = []


def case(name):
    def wrap(fn):
        try:
            fn()
            results.append((True, name, ""))
        except Exception as e:  # a failed check or an error from the library
            results.append((False, name, "%s: %s" % (type(e).__name__, e)))
        return fn
    return wrap


def run_loop(loop, seconds=60):
    """Runs loop until something quits it; fails if that takes @seconds."""
    timed_out = []

    def timeout():
        timed_out.append(True)
        loop.quit()
        return GLib.SOURCE_REMOVE
    tid = GLib.timeout_add_seconds(seconds, timeout)
    loop.run()
    if timed_out:
        raise AssertionError("main loop still waiting after %d s" % seconds)
    GLib.source_remove(tid)


# In a guest whose kernel has CLONE_FD (tests/run-guest sets
# CLONEFD_EXPECT=on), the point is the clonefd path from Python: insist on it.
want_clonefd = os.environ.get("CLONEFD_EXPECT") == "on"


def check_backend(backend):
    assert backend != Spawn.Backend.AUTO, backend
    if want_clonefd:
        assert backend == Spawn.Backend.CLONEFD, \
            "backend %s, but this kernel has CLONE_FD" % Spawn.backend_to_string(backend)


@case("Spawn.check_version(): None for the typelib's own version, a reason for a later one")
def _():
    mine = (Spawn.MAJOR_VERSION, Spawn.MINOR_VERSION, Spawn.MICRO_VERSION)
    assert Spawn.check_version(*mine) is None, Spawn.check_version(*mine)
    later = Spawn.check_version(mine[0], mine[1] + 1, 0)
    assert later is not None and later.startswith("libspawn version too old"), later


@case("SpawnProcess communicate_utf8_async under GLib.MainLoop, with finished and notify::state")
def _():
    proc = Spawn.Process.new(["sh", "-c", "read x; echo got $x; echo err >&2; exit 3"])
    states, finished = [], []
    proc.connect("notify::state", lambda p, _pspec: states.append(p.props.state))
    proc.connect("finished", lambda p, code, status, info: finished.append((code, status, info.kind, info.status)))
    loop = GLib.MainLoop()
    got = {}

    def done(p, res):
        got["result"] = p.communicate_utf8_finish(res)
        loop.quit()

    assert proc.start()
    assert proc.props.backend == proc.get_backend()
    check_backend(proc.get_backend())
    proc.communicate_utf8_async("hello\n", None, done)
    run_loop(loop)
    ok, out, err = got["result"]
    assert ok and out == "got hello\n" and err == "err\n", got
    assert proc.props.exit_code == 3 and proc.get_exit_code() == 3
    assert proc.props.exit_status == Spawn.ProcessExitStatus.NORMAL
    assert finished == [(3, Spawn.ProcessExitStatus.NORMAL, Spawn.ExitKind.EXITED, 3)], finished
    assert proc.get_if_exited() and not proc.get_if_signaled() and not proc.get_successful()
    assert proc.get_status() == 3 << 8 and proc.get_term_sig() == 0
    assert states == [Spawn.ProcessState.STARTING, Spawn.ProcessState.RUNNING,
                      Spawn.ProcessState.NOT_RUNNING], states


@case("spawn_async_fd_with_pipes() and a child watch: the exit status reaches the callback")
def _():
    child, _in, _out, _err = Spawn.async_fd_with_pipes(None, ["sh", "-c", "exit 5"], None,
                                                       GLib.SpawnFlags.SEARCH_PATH,
                                                       Spawn.ChildFlags.FLAGS_NONE,
                                                       Spawn.PipeFlags.FLAGS_NONE,
                                                       -1, -1, -1, None, None)
    assert (_in, _out, _err) == (-1, -1, -1), (_in, _out, _err)
    assert child.get_pid() > 0
    check_backend(child.get_backend())
    loop = GLib.MainLoop()
    seen = []

    def watch(c, info, error):
        seen.append((c.get_pid(), info.kind, info.status, error))
        loop.quit()

    child.watch_add(watch)
    run_loop(loop)
    assert seen == [(child.get_pid(), Spawn.ExitKind.EXITED, 5, None)], seen


@case("shared watches from Python: the status reaches the callback; a removed one is never called")
def _():
    loop = GLib.MainLoop()
    seen = []

    def watch(c, info, error):
        seen.append((c.get_pid(), info.kind, info.status, error))
        loop.quit()

    def never(c, info, error):
        raise AssertionError("a removed shared watch was called")

    child, _in, _out, _err = Spawn.async_fd_with_pipes(None, ["sh", "-c", "exit 6"], None,
                                                       GLib.SpawnFlags.SEARCH_PATH,
                                                       Spawn.ChildFlags.FLAGS_NONE,
                                                       Spawn.PipeFlags.FLAGS_NONE,
                                                       -1, -1, -1, None, None)
    removed = Spawn.Child.watch_add_shared(GLib.PRIORITY_DEFAULT, child, never)
    assert removed > 0
    assert Spawn.Child.watch_remove_shared(removed)
    assert not Spawn.Child.watch_remove_shared(removed)
    Spawn.Child.watch_add_shared(GLib.PRIORITY_DEFAULT, child, watch)
    run_loop(loop)
    assert seen == [(child.get_pid(), Spawn.ExitKind.EXITED, 6, None)], seen


def fd_count():
    return len(os.listdir("/proc/self/fd"))


# What od(1) prints for the bytes of the argument after the script.
OD_ARG = ["/bin/sh", "-c", 'printf %s "$1" | od -An -tx1', "sh"]


@case("a non-UTF-8 argv element (type filename): bytes and a surrogate-escaped str reach the child as 0xff")
def _():
    # As for Gio.Subprocess: PyGObject passes a filename as bytes as they
    # are, and a str through os.fsencode() (surrogateescape).
    for arg in (b"caf\xff", "caf\udcff"):
        proc = Spawn.Process.new(OD_ARG + [arg])
        assert proc.get_argv()[-1] == "caf\udcff", proc.get_argv()
        assert proc.start()
        ok, out, err = proc.communicate_utf8(None, None)
        assert ok and out.split() == ["63", "61", "66", "ff"], (arg, out, err)
        assert proc.get_exit_code() == 0
    # The same through the argv property and the working directory.
    proc = Spawn.Process()
    proc.props.argv = OD_ARG + [b"\xfe"]
    proc.set_working_directory(b"/\xff-no-such-dir")
    assert proc.get_working_directory() == "/\udcff-no-such-dir"
    proc.set_working_directory(None)
    assert proc.start()
    ok, out, _err = proc.communicate_utf8(None, None)
    assert out.split() == ["fe"], out
    # An environment variable whose value is not UTF-8.
    proc = Spawn.Process.new(["/bin/sh", "-c", 'printf %s "$V" | od -An -tx1'])
    proc.setenv("V", b"\xfd")
    assert proc.getenv("V") == "\udcfd"
    assert proc.start()
    ok, out, _err = proc.communicate_utf8(None, None)
    assert out.split() == ["fd"], out


@case("spawn_async_fd_with_pipes(): no pipe asked for, no fd; one asked for, one fd; child_setup is not reachable")
def _():
    assert not hasattr(Spawn, "async_fd") and not hasattr(Spawn, "async_fd_full")
    assert not hasattr(Spawn.Process, "set_child_setup")
    before = fd_count()
    child, i, o, e = Spawn.async_fd_with_pipes(None, ["true"], None, GLib.SpawnFlags.SEARCH_PATH,
                                               Spawn.ChildFlags.FLAGS_NONE,
                                               Spawn.PipeFlags.FLAGS_NONE,
                                               -1, -1, -1, None, None)
    assert (i, o, e) == (-1, -1, -1), (i, o, e)
    ok, info = child.wait(None)
    assert ok and info.status == 0
    del child  # the handle's own fd (a pidfd) goes with it
    assert fd_count() == before, (before, fd_count())

    child, i, o, e = Spawn.async_fd_with_pipes(None, ["echo", "hi"], None, GLib.SpawnFlags.SEARCH_PATH,
                                               Spawn.ChildFlags.FLAGS_NONE, Spawn.PipeFlags.STDOUT,
                                               -1, -1, -1, None, None)
    assert i == -1 and e == -1 and o >= 0, (i, o, e)
    with os.fdopen(o, "rb") as f:
        assert f.read() == b"hi\n"
    ok, info = child.wait(None)
    assert ok and info.status == 0
    del child
    assert fd_count() == before, (before, fd_count())


def spawn_callables():
    """Every function, method and constructor of the Spawn typelib, through
    PyGObject's own view of it (gi._gi: the GIRepository 2.0 bindings do
    not wrap the info types)."""
    from gi import _gi
    for info in _gi.Repository.get_default().get_infos("Spawn"):
        if isinstance(info, _gi.FunctionInfo):
            yield info.get_name(), info
        elif isinstance(info, (_gi.ObjectInfo, _gi.StructInfo)):
            for m in info.get_methods():
                yield "%s.%s" % (info.get_name(), m.get_name()), m


SCOPE_CALL = 1  # GI_SCOPE_TYPE_CALL: runs during the call


@case("the typelib has no callback a spawn could run between clone and exec (no child_setup)")
def _():
    # Any callable with a callback parameter that runs during the call (a
    # child_setup is one): a Python callable cannot be async-signal-safe,
    # and a CLONE_VM child would run it in our memory.  The other callbacks
    # (GAsyncReadyCallback, a child watch's) run in the parent, from a
    # main loop.
    from gi import _gi
    bad = []
    n = 0
    for name, fn in spawn_callables():
        n += 1
        for arg in fn.get_arguments():
            iface = arg.get_type().get_interface()
            if not isinstance(iface, _gi.CallbackInfo):
                continue
            if (iface.get_name() == "SpawnChildSetupFunc" or "setup" in arg.get_name()
                    or arg.get_scope() == SCOPE_CALL):
                bad.append("%s(%s: %s)" % (name, arg.get_name(), iface.get_name()))
    assert n > 50, n  # the walk saw the library
    assert not bad, bad
    assert not hasattr(Spawn.Job, "spawn")
    assert hasattr(Spawn.Job, "spawn_with_pipes")


@case("Job.spawn_with_pipes(): the child is in the job, one pipe asked for, one fd")
def _():
    job = Spawn.Job.new()
    before = fd_count()
    child, i, o, e = job.spawn_with_pipes(None, ["echo", "hi"], None, GLib.SpawnFlags.SEARCH_PATH,
                                          Spawn.ChildFlags.FLAGS_NONE, Spawn.PipeFlags.STDOUT,
                                          -1, -1, -1, None, None)
    assert i == -1 and e == -1 and o >= 0, (i, o, e)
    with os.fdopen(o, "rb") as f:
        assert f.read() == b"hi\n"
    ok, info = child.wait(None)
    assert ok and info.status == 0
    mode = job.get_mode()
    assert mode != Spawn.JobMode.NONE
    del child
    if mode == Spawn.JobMode.CGROUP:
        assert job.close(5000)
    else:
        # No cgroup v2 here (a chroot, a container): the job fell back to
        # process groups, and close() says it cannot see a process that left.
        assert mode == Spawn.JobMode.PROCESS_GROUP, mode
        try:
            job.close(5000)
            raise AssertionError("close() of a process-group job returned TRUE")
        except GLib.Error as e:
            assert e.matches(Spawn.error_quark(), Spawn.Error.FAILED), e
            assert "cannot be seen" in e.message, e.message
    assert fd_count() == before, (before, fd_count())


@case("Spawn.Child.wait_async: the callback's source object finishes the wait (src.wait_finish(res))")
def _():
    child, *_ = Spawn.async_fd_with_pipes(None, ["sh", "-c", "exit 7"], None, GLib.SpawnFlags.SEARCH_PATH,
                                          Spawn.ChildFlags.FLAGS_NONE, Spawn.PipeFlags.FLAGS_NONE,
                                          -1, -1, -1, None, None)
    loop = GLib.MainLoop()
    got = {}

    def done(src, res):
        got["child"] = src.get_child()
        got["result"] = src.wait_finish(res)
        loop.quit()

    child.wait_async(None, done)
    run_loop(loop)
    ok, info = got["result"]
    assert ok and info.kind == Spawn.ExitKind.EXITED and info.status == 7, got
    assert got["child"].get_pid() == child.get_pid()


@case("a failed start raises GLib.Error in GLib's G_SPAWN_ERROR domain (NOENT), as Gio.Subprocess does")
def _():
    proc = Spawn.Process.new(["/nonexistent/program"])
    try:
        proc.start()
    except GLib.Error as e:
        assert e.matches(GLib.spawn_error_quark(), GLib.SpawnError.NOENT), e
        assert "/nonexistent/program" in e.message, e
        assert proc.get_error() is not None
    else:
        raise AssertionError("start() of a missing program succeeded")


@case("send_signal(SIGTERM) from Python: get_if_signaled, get_term_sig, wait_check_async's error")
def _():
    proc = Spawn.Process.new(["sh", "-c", "read x"])
    assert proc.start()
    loop = GLib.MainLoop()
    got = {}

    def done(p, res):
        try:
            p.wait_check_finish(res)
            got["error"] = None
        except GLib.Error as e:
            got["error"] = e
        loop.quit()

    proc.wait_check_async(None, done)
    assert proc.send_signal(15)
    run_loop(loop)
    assert got["error"] is not None and got["error"].matches(GLib.spawn_error_quark(), GLib.SpawnError.FAILED), got
    assert proc.get_if_signaled() and proc.get_term_sig() == 15 and not proc.get_if_exited()


@case("properties: argv, kill-timeout and flags set from Python, read back")
def _():
    proc = Spawn.Process(argv=["true"], kill_timeout=1500,
                         flags=Spawn.ProcessFlags.SEARCH_PATH_FROM_ENVP)
    assert list(proc.props.argv) == ["true"]
    assert proc.props.kill_timeout == 1500
    assert proc.props.flags == Spawn.ProcessFlags.SEARCH_PATH_FROM_ENVP
    assert Spawn.ChannelMode.STREAM != Spawn.ChannelMode.PIPE


@case("Process.newv with Gio.SubprocessFlags: communicate_utf8 reads the pipes; kill() on the ended process does not raise")
def _():
    from gi.repository import Gio
    proc = Spawn.Process.newv(["sh", "-c", "cat; echo err >&2"],
                              Gio.SubprocessFlags.STDIN_PIPE | Gio.SubprocessFlags.STDOUT_PIPE |
                              Gio.SubprocessFlags.STDERR_PIPE)
    ok, out, err = proc.communicate_utf8("in", None)
    assert ok and out == "in" and err == "err\n", (ok, out, err)
    assert proc.get_successful()
    assert proc.kill()    # force_exit() on an ended process: nothing, no error
    proc.props.read_buffer_size = 4096
    assert proc.get_read_buffer_size() == 4096
    # argv elements are filenames here too: a non-UTF-8 byte reaches the child.
    proc = Spawn.Process.newv(OD_ARG + [b"caf\xff"], Gio.SubprocessFlags.STDOUT_PIPE)
    ok, out, _err = proc.communicate_utf8(None, None)
    assert ok and out.split() == ["63", "61", "66", "ff"], out


def describe_end(proc):
    if proc.get_if_exited():
        return "exit status %d" % proc.get_exit_code()
    if proc.get_if_signaled():
        return "killed by signal %d" % proc.get_term_sig()
    return "status lost"


@case("a pseudo-terminal: examples/pty-gi.py (password with echo off, SIGWINCH, ^C; Spawn.Pty read to its end of file)")
def _():
    # Run by libspawn itself: the guests' Python carries no subprocess module.
    # Next to us in a build directory (tests/meson.build copies it there),
    # in examples/ when run from the source tree (tests/install-test).
    here = os.path.dirname(os.path.abspath(__file__))
    example = os.path.join(here, "pty-gi.py")
    if not os.path.exists(example):
        example = os.path.join(here, os.pardir, "examples", "pty-gi.py")
    typelibs = sys.argv[2] if len(sys.argv) > 2 else sys.argv[1]
    proc = Spawn.Process.new([sys.executable, example])
    proc.setenv("GI_TYPELIB_PATH", typelibs + os.pathsep + os.environ.get("GI_TYPELIB_PATH", ""))
    proc.setenv("LD_LIBRARY_PATH", sys.argv[1] + os.pathsep + os.environ.get("LD_LIBRARY_PATH", ""))
    proc.set_channel_mode(Spawn.ProcessChannel.STDIN, Spawn.ChannelMode.DISCARD)
    proc.set_channel_mode(Spawn.ProcessChannel.STDERR, Spawn.ChannelMode.MERGE)
    proc.set_kill_timeout(120 * 1000)
    proc.start()
    ok, out, _err = proc.communicate_utf8(None, None)
    assert ok and proc.get_if_exited() and proc.get_exit_code() == 0, \
        "pty-gi.py: %s:\n%s" % (describe_end(proc), out)
    assert "interrupted by ^C (SIGINT)" in out and "resized to 40 132" in out, out
    # From Python directly: the window size a process will start with.
    proc = Spawn.Process.new(["true"])
    proc.set_channel_mode(Spawn.ProcessChannel.STDOUT, Spawn.ChannelMode.PTY)
    assert proc.set_window_size(50, 160)
    assert proc.get_window_size() == (50, 160), proc.get_window_size()
    assert proc.get_pty() is None


print("# typelib %s" % repo.get_typelib_path("Spawn"))
for i, (ok, name, why) in enumerate(results, 1):
    print("%s %d %s%s" % ("ok" if ok else "not ok", i, name, "" if ok else ": " + why))
print("# backend %s" % Spawn.backend_to_string(Spawn.get_backend()))
print("1..%d" % len(results))
sys.exit(0 if all(ok for ok, _, _ in results) else 1)
