/*
 * ibsmctl status's summary (see ctlstatus.h).  One line per subject, in
 * the order an operator asks: is it the master and healthy (state, the
 * errors that need someone), what the last heavy sweep found (when, how
 * long, the fabric's size, the links lost), how the fabric answers (MAD
 * timeouts, SA errors, traps, M_Key), what it carries (multicast, VMs,
 * jobs) and the performance manager's verdict.  Every count of the reply
 * stays in --verbose and --json.  A member absent from the reply (an
 * older daemon, a state without it) leaves its line or part out.
 */
#include "sm/ibsmctl/ctlstatus.h"

#include <string.h>

/* The member at a dotted path ("last_heavy_sweep.time"), or NULL. */
static const json_t *at(const json_t *o, const char *path)
{
	char key[64];
	while (o && *path) {
		size_t n = strcspn(path, ".");
		if (n >= sizeof(key))
			return NULL;
		memcpy(key, path, n);
		key[n] = '\0';
		o = json_object_get(o, key);
		path += n + (path[n] == '.');
	}
	return o;
}

static json_int_t num(const json_t *o, const char *path)
{
	return json_integer_value(at(o, path));
}

static const char *str(const json_t *o, const char *path, const char *none)
{
	const char *s = json_string_value(at(o, path));
	return s ? s : none;
}

#define SECS_PER_MIN	60
#define SECS_PER_HOUR	3600
#define SECS_PER_DAY	86400

/* "3 s", "5 min 2 s", "2 h 5 min", "3 d 4 h": two units at most */
static void duration(char *buf, size_t len, json_int_t s)
{
	if (s < SECS_PER_MIN)
		snprintf(buf, len, "%lld s", (long long)s);
	else if (s < SECS_PER_HOUR)
		snprintf(buf, len, "%lld min %lld s", (long long)(s / SECS_PER_MIN),
			 (long long)(s % SECS_PER_MIN));
	else if (s < SECS_PER_DAY)
		snprintf(buf, len, "%lld h %lld min", (long long)(s / SECS_PER_HOUR),
			 (long long)(s % SECS_PER_HOUR / SECS_PER_MIN));
	else
		snprintf(buf, len, "%lld d %lld h", (long long)(s / SECS_PER_DAY),
			 (long long)(s % SECS_PER_DAY / SECS_PER_HOUR));
}

static void print_sm(FILE *fp, const json_t *r)
{
	char up[48];
	duration(up, sizeof(up), num(r, "uptime_s"));
	fprintf(fp, "ibsmd %s, up %s (started %s)\n", str(r, "version", "?"), up,
		str(r, "started", "-"));
	fprintf(fp, "state: %s\n", str(r, "state", "?"));
	fprintf(fp, "SM: port %s, LID %lld, priority %lld, %lld silent SM ports\n",
		str(r, "port_guid", "?"), (long long)num(r, "sm_lid"),
		(long long)num(r, "priority"), (long long)num(r, "silent_sm_ports"));
	if (at(r, "master_guid"))
		fprintf(fp, "master: port %s, LID %lld, priority %lld\n",
			str(r, "master_guid", "?"), (long long)num(r, "master_lid"),
			(long long)num(r, "master_priority"));
	if (at(r, "waiting_for_handover_from"))
		fprintf(fp, "handover: waiting for %s\n", str(r, "waiting_for_handover_from", "?"));
	if (at(r, "handing_over_to"))
		fprintf(fp, "handover: to %s\n", str(r, "handing_over_to", "?"));
}

/* The errors still active: one line each, "KIND: MESSAGE (since, last, count)". */
static void print_errors(FILE *fp, const json_t *r)
{
	const json_t *errs = at(r, "errors");
	size_t i;
	json_t *e;
	if (json_array_size(errs) == 0) {
		fputs("errors: none\n", fp);
		return;
	}
	fprintf(fp, "errors: %zu, until they clear\n", json_array_size(errs));
	json_array_foreach(errs, i, e) {
		json_int_t n = num(e, "count");
		fprintf(fp, "  %s: %s (since %s, last %s, ", str(e, "kind", "?"),
			str(e, "message", "?"), str(e, "since", "-"), str(e, "last", "-"));
		if (n == 1)
			fputs("once)\n", fp);
		else
			fprintf(fp, "%lld times)\n", (long long)n);
	}
}

static void print_sweeps(FILE *fp, const json_t *r)
{
	const json_t *l = at(r, "last_heavy_sweep");
	if (json_is_object(l)) {
		fprintf(fp, "last heavy sweep: %s, %lld ms, routed by %s in %lld ms; "
			"%lld unresponsive, %lld MAD timeouts\n",
			str(l, "time", "-"), (long long)num(l, "sweep_ms"),
			str(l, "routing", "?"), (long long)num(l, "route_ms"),
			(long long)num(l, "unresponsive"), (long long)num(l, "mad_timeouts"));
		fprintf(fp, "fabric: %lld switches, %lld CAs, %lld ports, %lld LIDs (max %lld)\n",
			(long long)num(l, "switches"), (long long)num(l, "cas"),
			(long long)num(l, "ports"), (long long)num(l, "lids"),
			(long long)num(l, "max_lid"));
	} else {
		fputs("last heavy sweep: none completed yet\n", fp);
	}
	fprintf(fp, "links: %lld failed, %lld degraded\n", (long long)num(r, "failed_links"),
		(long long)num(r, "degraded_links"));
	fprintf(fp, "sweeps: %lld heavy (%lld failed), %lld light; sweeping: %s\n",
		(long long)num(r, "heavy_sweeps"), (long long)num(r, "heavy_failed"),
		(long long)num(r, "light_sweeps"), str(r, "sweeping", "?"));
}

static void print_traffic(FILE *fp, const json_t *r)
{
	fprintf(fp, "MADs: %lld sent, %lld timeouts, %lld retries, %lld errors, "
		"%lld Sets failed; %lld in flight of %lld\n",
		(long long)num(r, "mads.sent"), (long long)num(r, "mads.timeouts"),
		(long long)num(r, "mads.retries"), (long long)num(r, "mads.errors"),
		(long long)num(r, "mads.failed"), (long long)num(r, "mads.in_flight"),
		(long long)num(r, "mads.window"));
	fprintf(fp, "SA: %lld requests, %lld answered, %lld errors\n",
		(long long)num(r, "sa.requests"), (long long)num(r, "sa.answered"),
		(long long)num(r, "sa.errors"));
	fprintf(fp, "traps: %lld received, %lld spoofed, %lld from unknown issuers\n",
		(long long)num(r, "traps.received"), (long long)num(r, "traps.spoofed"),
		(long long)num(r, "traps.unknown_issuer"));
	fprintf(fp, "M_Key: protect level %lld, %lld ports keyed, %lld violations, "
		"%lld ports held by another SM's key\n",
		(long long)num(r, "m_key.protect_level"), (long long)num(r, "m_key.ports_keyed"),
		(long long)num(r, "m_key.violations"), (long long)num(r, "m_key.ports_foreign"));
	if (json_is_object(at(r, "m_key.unmanageable")))
		fprintf(fp, "  not managed: %s (expected to end %s)\n",
			str(r, "m_key.unmanageable.message", "?"),
			str(r, "m_key.unmanageable.expected_end_date", "-"));
	if (at(r, "sm_key_mismatch"))
		fprintf(fp, "SM_Key: %lld mismatches, the last with %s\n",
			(long long)num(r, "sm_key_mismatch.count"),
			str(r, "sm_key_mismatch.sm_guid", "another SM"));
}

static void print_services(FILE *fp, const json_t *r)
{
	fprintf(fp, "multicast: %lld groups, %lld without a tree\n",
		(long long)num(r, "multicast.groups"),
		(long long)num(r, "multicast.groups_without_tree"));
	fprintf(fp, "VMs: %lld\n", (long long)num(r, "vms.count"));
	fprintf(fp, "jobs: %s, %lld live\n", str(r, "jobs.mode", "?"),
		(long long)num(r, "jobs.live"));
	const json_t *pm = at(r, "perfmgr");
	if (num(pm, "interval_s") == 0)
		fputs("perfmgr: off\n", fp);
	else if (!json_is_object(at(pm, "last")))
		fprintf(fp, "perfmgr: every %lld s, no sweep yet\n", (long long)num(pm, "interval_s"));
	else
		fprintf(fp, "perfmgr: last sweep %s, %lld ports read, %lld failed; "
			"%lld unhealthy, %lld hot, %lld flapping\n",
			str(pm, "last.start", "-"), (long long)num(pm, "last.read"),
			(long long)num(pm, "last.failed"), (long long)num(pm, "last.unhealthy"),
			(long long)num(pm, "last.hot"), (long long)num(pm, "flapping"));
	if (json_is_object(at(r, "events")))
		fprintf(fp, "events: program %s, %lld emitted, %lld failed, %lld dropped\n",
			str(r, "events.program", "-"), (long long)num(r, "events.emitted"),
			(long long)num(r, "events.failed"), (long long)num(r, "events.dropped"));
}

void status_print_summary(FILE *fp, const json_t *reply)
{
	print_sm(fp, reply);
	print_errors(fp, reply);
	print_sweeps(fp, reply);
	print_traffic(fp, reply);
	print_services(fp, reply);
	fputs("(every counter: ibsmctl status --verbose)\n", fp);
}
