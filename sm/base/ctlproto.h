/*
 * The control socket's protocol, shared by the daemon's server
 * (control.c) and ibsmctl's client (ctlclient.c): newline-delimited JSON
 * over a UNIX stream socket.
 *
 *   request  {"cmd":"sweep","args":["--heavy"]}\n      ("args" optional)
 *   reply    {"ok":true, ...result fields...}\n
 *            {"ok":false,"error":"reason"}\n
 *
 * One reply per request, in order; the connection stays open for more.
 * The commands are the daemon's (sm/ctl/ctlcmds.c).
 */
#ifndef IBSMD_CTLPROTO_H
#define IBSMD_CTLPROTO_H

#define CONTROL_DEFAULT_SOCKET	"/run/ibsmd/ibsmd.sock"
#define CONTROL_MAX_LINE	65536	/* longest request line, without '\n' */

#endif
