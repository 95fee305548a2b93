/*
 * The control socket's protocol, shared by the daemon's server
 * (control.c) and ibsmctl's client (ctlclient.c): newline-delimited JSON
 * over a UNIX stream socket.
 *
 *   request  {"cmd":"sweep","heavy":true}\n
 *            {"cmd":"vm","op":"migrate","name":"vm1","to":"V-2-0","vf":1}\n
 *   reply    {"ok":true, ...result fields...}\n
 *            {"ok":false,"error":"reason"}\n
 *
 * A request is typed: besides "cmd", the fields its command takes, each
 * of its type (string, integer, true/false); ibsmctl parses its command
 * line into them (sm/ibsmctl/ibsmctl.c), the daemon refuses a field its
 * command does not take or of another type (sm/ctl/ctlcmds.c).  One reply
 * per request, in order; the connection stays open for more.
 */
#ifndef IBSMD_CTLPROTO_H
#define IBSMD_CTLPROTO_H

#define CONTROL_DEFAULT_SOCKET	"/run/ibsmd/ibsmd.sock"
#define CONTROL_MAX_LINE	65536	/* longest request line, without '\n' */

#endif
