/*
 * The conditions ibsmctl status reports until they clear: each kind is set
 * where it happens and cleared where the condition goes.  The registry
 * renders itself for the control socket (errors_to_ctl).
 */
#ifndef IBSMD_ERRORS_H
#define IBSMD_ERRORS_H

#include <stdint.h>

#include <jansson.h>

enum sm_error_kind {
	SM_ERR_ROUTING,		/* no engine could route the fabric */
	SM_ERR_RELOAD,		/* a policy reload was refused */
	SM_ERR_SM_KEY,		/* another SM uses a different SM_Key */
	SM_ERR_STATE,		/* the state directory cannot be written */
	SM_ERR_TAMPER,		/* a device held other tables than the SM wrote */
	SM_ERR_MCAST,		/* multicast groups past a switch's MFT: no tree */
	SM_ERR_N
};

struct sm_error {
	int active;
	uint64_t since;			/* wall clock, seconds: first set */
	uint64_t last;			/* wall clock, seconds: last set */
	uint64_t count;			/* times set since it was last clear */
	uint64_t seq;			/* orders the kinds: the highest was set last */
	char msg[256];
};

struct sm_errors {
	struct sm_error e[SM_ERR_N];
};

/* Records (or refreshes) a condition of that kind; the message is printf's. */
void errors_set(struct sm_errors *r, enum sm_error_kind kind, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* The condition is gone (nothing if it was not set); logged at info. */
void errors_clear(struct sm_errors *r, enum sm_error_kind kind);
int errors_active(const struct sm_errors *r, enum sm_error_kind kind);
/*
 * Into the status object o: "errors", every condition set and not cleared
 * (kind, message, since, last, count), and "last_error", the one set last
 * (null when there is none).
 */
void errors_to_ctl(const struct sm_errors *r, json_t *o);

#endif
