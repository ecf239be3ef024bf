// SPDX-License-Identifier: LGPL-2.1-or-later
// SPDX-FileCopyrightText: 2026 The libspawn authors
//
// spawn.js: libspawn from JavaScript, through GJS and Spawn-1.typelib.
// Runs `sh -c 'echo hello from GJS; exit 4'` with a Spawn.Process and reads
// its output with communicate_utf8_async(), then starts `sleep 0.1` with
// Spawn.async_fd_with_pipes() and waits for it with Spawn.Child.wait_async(),
// finishing the wait from the callback's source object as GIO callbacks do.
// Checks the output and both exit statuses; exit status 0 when all is as
// expected.
//
//     GI_TYPELIB_PATH=build/libspawn LD_LIBRARY_PATH=build/libspawn gjs examples/spawn.js
//
// With libspawn installed, GI_TYPELIB_PATH and LD_LIBRARY_PATH are not needed.

imports.gi.versions.Spawn = '1';
const {GLib, Spawn} = imports.gi;
const System = imports.system;

const loop = new GLib.MainLoop(null, false);
let failures = 0;

function check(ok, what) {
    print(`${ok ? 'ok' : 'FAILED'}: ${what}`);
    if (!ok)
        failures++;
}

function waitForChild() {
    // No pipe asked for: none made, the three fds are -1.
    const [child, inFd, outFd, errFd] = Spawn.async_fd_with_pipes(null, ['sleep', '0.1'], null,
        GLib.SpawnFlags.SEARCH_PATH, Spawn.ChildFlags.FLAGS_NONE, Spawn.PipeFlags.FLAGS_NONE,
        -1, -1, -1, null, null);
    check(inFd === -1 && outFd === -1 && errFd === -1, 'async_fd_with_pipes made no pipe');
    child.wait_async(null, (src, res) => {
        try {
            const [, info] = src.wait_finish(res);
            check(info.kind === Spawn.ExitKind.EXITED && info.status === 0,
                `sleep (pid ${child.get_pid()}) exited with status ${info.status}`);
        } catch (e) {
            check(false, `wait_finish: ${e.message}`);
        }
        loop.quit();
    });
}

const proc = Spawn.Process.new(['sh', '-c', 'echo hello from GJS; exit 4']);
try {
    proc.start();
    print(`sh: pid ${proc.get_pid()}, ${Spawn.Backend.to_string(proc.get_backend())} backend`);
    proc.communicate_utf8_async(null, null, (p, res) => {
        try {
            const [, out] = p.communicate_utf8_finish(res);
            check(out === 'hello from GJS\n', `sh wrote ${JSON.stringify(out)}`);
            check(p.get_if_exited() && p.get_exit_code() === 4,
                `sh exited with status ${p.get_exit_code()}`);
        } catch (e) {
            check(false, `communicate_utf8_finish: ${e.message}`);
        }
        waitForChild();
    });
    loop.run();
} catch (e) {
    check(false, `start: ${e.message}`);
}
System.exit(failures === 0 ? 0 : 1);
