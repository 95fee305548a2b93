/* The conditions ibsmctl status reports until they clear (see errors.h). */
#include "sm/errors.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "sm/base/log.h"
#include "sm/ctl/control.h"

static const char *errors_name(enum sm_error_kind kind)
{
	static const char *const names[SM_ERR_N] = {
		"routing", "reload", "sm_key", "state", "tamper", "multicast",
	};
	return (unsigned)kind < SM_ERR_N ? names[kind] : "?";
}

void errors_set(struct sm_errors *r, enum sm_error_kind kind, const char *fmt, ...)
{
	if ((unsigned)kind >= SM_ERR_N)
		return;
	struct sm_error *e = &r->e[kind];
	uint64_t now = (uint64_t)time(NULL);
	if (!e->active) {
		e->active = 1;
		e->since = now;
		e->count = 0;
	}
	uint64_t seq = 0;
	for (int k = 0; k < SM_ERR_N; k++)
		if (r->e[k].seq > seq)
			seq = r->e[k].seq;
	e->seq = seq + 1;
	e->last = now;
	e->count++;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(e->msg, sizeof(e->msg), fmt, ap);
	va_end(ap);
}

void errors_clear(struct sm_errors *r, enum sm_error_kind kind)
{
	if ((unsigned)kind >= SM_ERR_N || !r->e[kind].active)
		return;
	log_info("cleared: %s error (%s)", errors_name(kind), r->e[kind].msg);
	memset(&r->e[kind], 0, sizeof(r->e[kind]));
}

int errors_active(const struct sm_errors *r, enum sm_error_kind kind)
{
	return (unsigned)kind < SM_ERR_N && r->e[kind].active;
}

static json_t *error_json(const struct sm_error *e, enum sm_error_kind kind)
{
	return json_pack("{s:s,s:s,s:o,s:o,s:I}", "kind", errors_name(kind),
			 "message", e->msg, "since", control_time_json(e->since),
			 "last", control_time_json(e->last), "count", (json_int_t)e->count);
}

void errors_to_ctl(const struct sm_errors *r, json_t *o)
{
	json_t *all = json_array();
	int latest = -1;
	for (int k = 0; k < SM_ERR_N; k++) {
		const struct sm_error *e = &r->e[k];
		if (!e->active)
			continue;
		json_array_append_new(all, error_json(e, (enum sm_error_kind)k));
		if (latest < 0 || e->seq > r->e[latest].seq)
			latest = k;
	}
	json_object_set_new(o, "last_error", latest < 0 ? json_null() :
			    error_json(&r->e[latest], (enum sm_error_kind)latest));
	json_object_set_new(o, "errors", all);
}
