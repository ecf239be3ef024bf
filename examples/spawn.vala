// SPDX-License-Identifier: LGPL-2.1-or-later
// SPDX-FileCopyrightText: 2026 The libspawn authors
//
// spawn.vala: libspawn from Vala, through the libspawn-1.vapi the build
// makes from Spawn-1.gir (vapigen).  Runs /bin/echo with a Spawn.Process
// and reads its output with communicate_utf8_async(), then starts
// `sh -c 'exit 3'` with Spawn.async_fd_with_pipes() and waits for it with
// Spawn.Child.wait_async().  Checks what each printed and how it ended;
// exit status 0 when all is as expected.
//
//     valac --pkg libspawn-1 examples/spawn.vala && ./spawn

async bool run () throws Error {
    var proc = new Spawn.Process ({ "/bin/echo", "hello from Vala" });
    proc.start ();
    print ("echo: pid %d, %s backend\n", (int) proc.get_pid (), proc.get_backend ().to_string ());
    string? out_buf, err_buf;
    yield proc.communicate_utf8_async (null, null, out out_buf, out err_buf);
    print ("echo wrote: %s", out_buf);
    if (out_buf != "hello from Vala\n" || !proc.get_if_exited () || proc.get_exit_code () != 0) {
        printerr ("spawn.vala: echo wrote \"%s\", exit code %d\n", out_buf ?? "(null)",
                  proc.get_exit_code ());
        return false;
    }

    // The lower level: no pipe asked for, none made (the three fds are -1).
    int in_fd, out_fd, err_fd;
    var child = Spawn.async_fd_with_pipes (null, { "/bin/sh", "-c", "exit 3" }, null, 0,
                                           Spawn.ChildFlags.FLAGS_NONE,
                                           Spawn.PipeFlags.FLAGS_NONE, -1, -1, -1, null, null,
                                           out in_fd, out out_fd, out err_fd);
    Spawn.ExitInfo info;
    yield child.wait_async (null, out info);
    print ("sh (pid %d): %s %d\n", (int) child.get_pid (),
           info.kind == Spawn.ExitKind.EXITED ? "exited" : "killed", info.status);
    if (in_fd != -1 || out_fd != -1 || err_fd != -1
        || info.kind != Spawn.ExitKind.EXITED || info.status != 3) {
        printerr ("spawn.vala: sh -c 'exit 3' ended with %d (kind %d), fds %d %d %d\n",
                  info.status, (int) info.kind, in_fd, out_fd, err_fd);
        return false;
    }
    return true;
}

int main () {
    var loop = new MainLoop ();
    var ok = false;
    run.begin ((obj, res) => {
        try {
            ok = run.end (res);
        } catch (Error e) {
            printerr ("spawn.vala: %s\n", e.message);
        }
        loop.quit ();
    });
    loop.run ();
    return ok ? 0 : 1;
}
