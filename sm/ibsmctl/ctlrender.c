/*
 * The human-readable rendering of a control-socket reply (see
 * ctlrender.h), for ibsmctl without --json.
 */
#include "sm/ibsmctl/ctlrender.h"

#include <string.h>
#include <time.h>

static int is_scalar(const json_t *v)
{
	return !json_is_object(v) && !json_is_array(v);
}

static void print_scalar(FILE *fp, const json_t *v)
{
	switch (json_typeof(v)) {
	case JSON_STRING:
		fputs(json_string_value(v), fp);
		break;
	case JSON_INTEGER:
		fprintf(fp, "%" JSON_INTEGER_FORMAT, json_integer_value(v));
		break;
	case JSON_REAL:
		fprintf(fp, "%.15g", json_real_value(v));
		break;
	case JSON_TRUE:
		fputs("true", fp);
		break;
	case JSON_FALSE:
		fputs("false", fp);
		break;
	default:
		fputs("-", fp);
		break;
	}
}

static int all_scalars(const json_t *a)
{
	size_t i;
	json_t *v;

	json_array_foreach(a, i, v)
		if (!is_scalar(v))
			return 0;
	return 1;
}

static void print_scalar_list(FILE *fp, const json_t *a)
{
	size_t i;
	json_t *v;

	json_array_foreach(a, i, v) {
		if (i > 0)
			fputs(", ", fp);
		print_scalar(fp, v);
	}
}

static void print_object(FILE *, const json_t *, int, const char *);

static void print_array_block(FILE *fp, const json_t *a, int indent)
{
	size_t i;
	json_t *v;
	const json_t *prev = NULL;

	json_array_foreach(a, i, v) {
		if (prev != NULL && (json_is_object(v) || json_is_object(prev)))
			fputc('\n', fp);
		if (json_is_object(v) && json_object_size(v) > 0) {
			print_object(fp, v, indent, NULL);
		} else if (json_is_array(v) && !all_scalars(v)) {
			print_array_block(fp, v, indent + 2);
		} else {
			fprintf(fp, "%*s", indent, "");
			if (json_is_array(v))
				print_scalar_list(fp, v);
			else if (json_is_object(v))
				fputs("(none)", fp);
			else
				print_scalar(fp, v);
			fputc('\n', fp);
		}
		prev = v;
	}
}

#define TIME_SUFFIX	"_time"

/*
 * A time in seconds since the epoch ("X_time" in the JSON): printed as
 * ISO 8601 (UTC); not at all when "X_date" beside it says it already.
 * Returns 1 when key is such a member and was dealt with.
 */
static int print_epoch_member(FILE *fp, const json_t *obj, const char *key,
    const json_t *v, int indent)
{
	size_t n = strlen(key), k = strlen(TIME_SUFFIX);
	char date_key[128], buf[32];
	if (!json_is_integer(v) || n <= k || strcmp(key + n - k, TIME_SUFFIX) ||
	    n - k + sizeof("_date") > sizeof(date_key))
		return 0;
	snprintf(date_key, sizeof(date_key), "%.*s_date", (int)(n - k), key);
	if (json_is_string(json_object_get(obj, date_key)))
		return 1;
	time_t t = (time_t)json_integer_value(v);
	struct tm tm;
	if (t <= 0 || !gmtime_r(&t, &tm) ||
	    !strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%SZ", &tm))
		snprintf(buf, sizeof(buf), "-");
	fprintf(fp, "%*s%s: %s\n", indent, "", key, buf);
	return 1;
}

static void print_member(FILE *fp, const char *key, const json_t *v,
    int indent)
{
	fprintf(fp, "%*s%s:", indent, "", key);
	if (is_scalar(v)) {
		fputc(' ', fp);
		print_scalar(fp, v);
		fputc('\n', fp);
	} else if (json_is_object(v) ? json_object_size(v) == 0 :
	    json_array_size(v) == 0) {
		fputs(" (none)\n", fp);
	} else if (json_is_object(v)) {
		fputc('\n', fp);
		print_object(fp, v, indent + 2, NULL);
	} else if (all_scalars(v)) {
		fputc(' ', fp);
		print_scalar_list(fp, v);
		fputc('\n', fp);
	} else {
		fputc('\n', fp);
		print_array_block(fp, v, indent + 2);
	}
}

static void print_object(FILE *fp, const json_t *obj, int indent,
    const char *skip)
{
	const char *key;
	json_t *v;

	/* json_object_foreach wants a non-const object; it only reads. */
	json_object_foreach((json_t *)obj, key, v) {
		if ((skip == NULL || strcmp(key, skip) != 0) &&
		    !print_epoch_member(fp, obj, key, v, indent))
			print_member(fp, key, v, indent);
	}
}

/* vm list: one VM a line under a header, as ibsmctl(8) shows. */
static void print_vms(FILE *fp, const json_t *vms)
{
	size_t i;
	json_t *v;

	fprintf(fp, "%-20s %6s %-18s %-20s %3s %6s %s\n", "NAME", "LID",
	    "VGUID", "HYPERVISOR", "VF", "WEIGHT", "PRESENT");
	json_array_foreach(vms, i, v) {
		const char *name = json_string_value(json_object_get(v, "name"));
		const char *vg = json_string_value(json_object_get(v, "vguid"));
		const char *hyp = json_string_value(json_object_get(v,
		    "hypervisor"));
		const json_t *prep = json_object_get(v, "prepared");
		fprintf(fp, "%-20s %6" JSON_INTEGER_FORMAT " %-18s %-20s %3"
		    JSON_INTEGER_FORMAT " %6" JSON_INTEGER_FORMAT " %s",
		    name ? name : "?",
		    json_integer_value(json_object_get(v, "lid")),
		    vg ? vg : "?", hyp ? hyp : "?",
		    json_integer_value(json_object_get(v, "vf")),
		    json_integer_value(json_object_get(v, "weight")),
		    json_is_true(json_object_get(v, "present")) ? "yes" : "no");
		if (json_is_true(json_object_get(v, "shared_lid")))
			fputs(" (shared LID: its PF's)", fp);
		if (json_is_object(prep)) {
			const char *to = json_string_value(json_object_get(prep,
			    "hypervisor"));
			fprintf(fp, " (prepared: to %s VF %" JSON_INTEGER_FORMAT
			    ")", to ? to : "?",
			    json_integer_value(json_object_get(prep, "vf")));
		}
		fputc('\n', fp);
	}
}

static const char *member_str(const json_t *o, const char *key)
{
	const char *s = json_string_value(json_object_get(o, key));
	return s ? s : "?";
}

/*
 * routes SWITCH: as ibroute(8) prints a switch's LFT, one valid entry a
 * line, "0xLLLL PPP : (destination)".
 */
static void print_routes(FILE *fp, const json_t *reply)
{
	const json_t *sw = json_object_get(reply, "switch");
	const json_t *routes = json_object_get(reply, "routes");
	size_t i;
	json_t *e;

	fprintf(fp, "Unicast lids of switch Lid %" JSON_INTEGER_FORMAT
	    " guid %s (%s), engine %s:\n",
	    json_integer_value(json_object_get(sw, "lid")),
	    member_str(sw, "guid"), member_str(sw, "description"),
	    member_str(reply, "engine"));
	fputs("  Lid  Out   Destination\n       Port     Info \n", fp);
	json_array_foreach(routes, i, e) {
		const json_t *d = json_object_get(e, "destination");
		fprintf(fp, "0x%04llx %03llu : ",
		    (unsigned long long)json_integer_value(json_object_get(e, "lid")),
		    (unsigned long long)json_integer_value(json_object_get(e, "port")));
		if (json_is_object(d))
			fprintf(fp, "(%s portguid %s: '%s')\n", member_str(d, "type"),
			    member_str(d, "port_guid"), member_str(d, "description"));
		else
			fputs("(no port holds this LID)\n", fp);
	}
	fprintf(fp, "%zu valid lids dumped \n", json_array_size(routes));
}

/* lids: one end port a line, GUID -> LID. */
static void print_lids(FILE *fp, const json_t *lids)
{
	size_t i;
	json_t *e;

	fprintf(fp, "%-18s %-7s %3s %-15s %4s %s\n", "PORT GUID", "LID",
	    "LMC", "TYPE", "PORT", "NODE");
	json_array_foreach(lids, i, e) {
		char lid[16];
		snprintf(lid, sizeof(lid), "0x%04llx",
		    (unsigned long long)json_integer_value(json_object_get(e, "lid")));
		fprintf(fp, "%-18s %-7s %3" JSON_INTEGER_FORMAT " %-15s %4"
		    JSON_INTEGER_FORMAT " %s%s\n", member_str(e, "port_guid"), lid,
		    json_integer_value(json_object_get(e, "lmc")),
		    member_str(e, "type"),
		    json_integer_value(json_object_get(e, "port")),
		    member_str(e, "description"),
		    json_is_true(json_object_get(e, "vlid")) ? " (vLID)" : "");
	}
}

/* partitions: one partition a line, then the P_Key violations by port. */
static void print_partitions(FILE *fp, const json_t *reply)
{
	const json_t *as_of = json_object_get(reply, "as_of");
	if (json_is_string(as_of))
		fprintf(fp, "as of %s, as master\n", json_string_value(as_of));
	size_t i;
	json_t *e;

	fprintf(fp, "%-20s %-6s %-15s %3s %6s %7s\n", "PARTITION", "PKEY",
	    "POLICY", "SL", "FULL", "LIMITED");
	json_array_foreach(json_object_get(reply, "partitions"), i, e) {
		const json_t *sl = json_object_get(e, "sl");
		char slbuf[8] = "-";
		if (json_is_integer(sl))
			snprintf(slbuf, sizeof(slbuf), "%" JSON_INTEGER_FORMAT,
			    json_integer_value(sl));
		fprintf(fp, "%-20s %-6s %-15s %3s %6" JSON_INTEGER_FORMAT " %7"
		    JSON_INTEGER_FORMAT "\n", member_str(e, "name"),
		    member_str(e, "pkey"), member_str(e, "policy"), slbuf,
		    json_integer_value(json_object_get(e, "full")),
		    json_integer_value(json_object_get(e, "limited")));
	}
	const json_t *v = json_object_get(reply, "violations");
	fprintf(fp, "P_Key violations (traps 257): %zu ports\n", json_array_size(v));
	json_array_foreach(v, i, e)
		fprintf(fp, "  %s port %" JSON_INTEGER_FORMAT " LID %" JSON_INTEGER_FORMAT
		    ": %" JSON_INTEGER_FORMAT "\n", member_str(e, "guid"),
		    json_integer_value(json_object_get(e, "port")),
		    json_integer_value(json_object_get(e, "lid")),
		    json_integer_value(json_object_get(e, "count")));
}

/* A JoinState as words joined with +: "full", "non", "send-only-non", "send-only-full". */
static void print_join_state(FILE *fp, json_int_t js)
{
	static const char *const names[4] = { "full", "non", "send-only-non",
	    "send-only-full" };
	int first = 1;

	for (int b = 0; b < 4; b++)
		if (js & (1 << b)) {
			fprintf(fp, "%s%s", first ? "" : "+", names[b]);
			first = 0;
		}
	if (first)
		fputs("none", fp);
}

/*
 * groups: one group a line (MTU in bytes, rate as its IBA code), then its
 * members indented, one a line.
 */
static void print_groups(FILE *fp, const json_t *groups)
{
	size_t i, k;
	json_t *g, *m;

	fprintf(fp, "%-39s %-6s %-6s %-10s %4s %4s %2s %s\n", "MGID", "MLID",
	    "PKEY", "QKEY", "MTU", "RATE", "SL", "MEMBERS");
	json_array_foreach(groups, i, g) {
		const json_t *members = json_object_get(g, "members");
		json_int_t mtu = json_integer_value(json_object_get(g, "mtu"));
		fprintf(fp, "%-39s 0x%04llx %-6s %-10s %4lld %4" JSON_INTEGER_FORMAT
		    " %2" JSON_INTEGER_FORMAT " %zu%s\n", member_str(g, "mgid"),
		    (unsigned long long)json_integer_value(json_object_get(g, "mlid")),
		    member_str(g, "pkey"), member_str(g, "qkey"),
		    mtu >= 1 && mtu <= 5 ? 128LL << mtu : 0LL,
		    json_integer_value(json_object_get(g, "rate")),
		    json_integer_value(json_object_get(g, "sl")),
		    json_array_size(members),
		    json_is_true(json_object_get(g, "well_known")) ?
		    " (well-known)" : "");
		json_array_foreach(members, k, m) {
			fprintf(fp, "  %s LID 0x%04llx ", member_str(m, "guid"),
			    (unsigned long long)json_integer_value(json_object_get(m,
			    "lid")));
			print_join_state(fp, json_integer_value(json_object_get(m,
			    "join_state")));
			fputc('\n', fp);
		}
	}
}

/* Whether reply is a topology document (has "links" and "switches"). */
static int topology_is_reply(const json_t *reply)
{
	return json_is_array(json_object_get(reply, "links")) &&
	       json_is_array(json_object_get(reply, "switches"));
}

static const char *str_of(const json_t *o, const char *key)
{
	const char *s = json_string_value(json_object_get(o, key));
	return s ? s : "?";
}

static void print_end(FILE *fp, const json_t *e)
{
	const char *d = str_of(e, "desc");
	fprintf(fp, "\"%s\"[%" JSON_INTEGER_FORMAT "]", d[0] ? d : str_of(e, "guid"),
		json_integer_value(json_object_get(e, "port")));
}

/* ibsmctl topology: one header line, the switches, then one line per link. */
static void topology_print_text(FILE *fp, const json_t *reply)
{
	const json_t *sws = json_object_get(reply, "switches");
	const json_t *links = json_object_get(reply, "links");
	const json_t *busiest = json_object_get(reply, "busiest_link_routes");
	size_t i;
	json_t *v;

	const json_t *as_of = json_object_get(reply, "as_of");
	if (json_is_string(as_of))
		fprintf(fp, "as of %s, as master\n", json_string_value(as_of));
	fprintf(fp, "%" JSON_INTEGER_FORMAT " switches, %" JSON_INTEGER_FORMAT
		" hosts, %zu links (%" JSON_INTEGER_FORMAT " failed, %" JSON_INTEGER_FORMAT
		" degraded)",
		json_integer_value(json_object_get(reply, "n_switches")),
		json_integer_value(json_object_get(reply, "n_hosts")),
		json_array_size(links),
		json_integer_value(json_object_get(reply, "failed_links")),
		json_integer_value(json_object_get(reply, "degraded_links")));
	if (busiest)
		fprintf(fp, "; busiest link direction: %" JSON_INTEGER_FORMAT " routes",
			json_integer_value(busiest));
	else
		fprintf(fp, "; routes per link left out: %s",
			str_of(reply, "routes_left_out"));
	fputs("\n\nswitches:\n", fp);
	json_array_foreach(sws, i, v) {
		const json_t *rank = json_object_get(v, "rank");
		fprintf(fp, "  %s \"%s\" LID %" JSON_INTEGER_FORMAT " ports %"
			JSON_INTEGER_FORMAT " rank ", str_of(v, "guid"), str_of(v, "desc"),
			json_integer_value(json_object_get(v, "lid")),
			json_integer_value(json_object_get(v, "ports")));
		if (json_is_integer(rank))
			fprintf(fp, "%" JSON_INTEGER_FORMAT "\n", json_integer_value(rank));
		else
			fputs("-\n", fp);
	}
	fputs("\nlinks (switch to switch: routes a->b/b->a between the hosts):\n", fp);
	json_array_foreach(links, i, v) {
		fputs("  ", fp);
		print_end(fp, json_object_get(v, "a"));
		fputs(" -- ", fp);
		print_end(fp, json_object_get(v, "b"));
		if (json_object_get(v, "port_state"))
			fprintf(fp, " %s", str_of(v, "port_state"));
		if (json_object_get(v, "routes_ab"))
			fprintf(fp, " %" JSON_INTEGER_FORMAT "/%" JSON_INTEGER_FORMAT,
				json_integer_value(json_object_get(v, "routes_ab")),
				json_integer_value(json_object_get(v, "routes_ba")));
		const json_t *could = json_object_get(v, "could_be");
		const json_t *rate = json_object_get(v, "rate");
		if (json_is_true(json_object_get(v, "failed")))
			fputs(" FAILED", fp);
		if (json_object_get(v, "since"))
			fprintf(fp, " (lost %s)", str_of(v, "since"));
		if (could)
			fprintf(fp, " DEGRADED %s %s (enabled %s %s)", str_of(rate, "width"),
				str_of(rate, "speed"), str_of(could, "width"), str_of(could, "speed"));
		fputc('\n', fp);
	}
}

/* ---- ibsmctl health (ibsmctl(8), "health") ---- */

/* The port lists of a health reply, worst first. */
static const char *const health_lists[] = { "unhealthy", "flapping", "degraded", "hot" };
#define N_HEALTH_LISTS (sizeof(health_lists) / sizeof(health_lists[0]))
/* The members of a port entry printed in their own way. */
static const char *const port_keys[] = { "guid", "node", "port", "counters", "reasons" };

/* Whether reply is a health document (has the "unhealthy" list). */
static int health_is_reply(const json_t *reply)
{
	return json_is_array(json_object_get(reply, "unhealthy"));
}

static int is_port_key(const char *key)
{
	for (size_t i = 0; i < sizeof(port_keys) / sizeof(port_keys[0]); i++)
		if (!strcmp(key, port_keys[i]))
			return 1;
	return 0;
}

/* "NAME"[PORT] (GUID), a port entry's or a baseline link end's. */
static void print_port_id(FILE *fp, const json_t *e)
{
	fprintf(fp, "\"%s\"[%" JSON_INTEGER_FORMAT "] (%s)", str_of(e, "node"),
		json_integer_value(json_object_get(e, "port")), str_of(e, "guid"));
}

/* One port a line: LIST "NAME"[PORT] (GUID): COUNTER=V ... KEY=V ...; reasons */
static void print_health_port(FILE *fp, const char *list, const json_t *e)
{
	const char *key;
	json_t *v;
	size_t i;

	fprintf(fp, "%-9s ", list);
	print_port_id(fp, e);
	fputc(':', fp);
	json_object_foreach(json_object_get(e, "counters"), key, v) {
		fprintf(fp, " %s=", key);
		print_scalar(fp, v);
	}
	json_object_foreach((json_t *)e, key, v) {
		if (is_port_key(key) || !is_scalar(v))
			continue;
		fprintf(fp, " %s=", key);
		print_scalar(fp, v);
	}
	const json_t *reasons = json_object_get(e, "reasons");
	json_array_foreach(reasons, i, v) {
		fputs(i == 0 ? "; " : ", ", fp);
		print_scalar(fp, v);
	}
	fputc('\n', fp);
}

static void print_baseline_link(FILE *fp, const json_t *a, const json_t *b)
{
	print_port_id(fp, a);
	fputs(" -- ", fp);
	print_port_id(fp, b);
}

/* One baseline difference a line: LIST node|link ..., a move with its old place. */
static void print_baseline_item(FILE *fp, const char *list, const json_t *e)
{
	fprintf(fp, "%-9s ", list);
	if (!strcmp(str_of(e, "kind"), "node")) {
		fprintf(fp, "node \"%s\" (%s) %s\n", str_of(e, "node"),
			str_of(e, "guid"), str_of(e, "type"));
		return;
	}
	fputs("link ", fp);
	print_baseline_link(fp, json_object_get(e, "a"), json_object_get(e, "b"));
	const json_t *was = json_object_get(e, "was");
	if (json_is_object(was)) {
		fputs(", was ", fp);
		print_baseline_link(fp, json_object_get(was, "a"),
				    json_object_get(was, "b"));
	}
	fputc('\n', fp);
}

/* The baseline's differences; how many lines were printed. */
static size_t print_baseline_diff(FILE *fp, const json_t *bl)
{
	static const char *const lists[] = { "missing", "extra", "moved" };
	const json_t *omitted = json_object_get(bl, "omitted");
	size_t n = 0, i;
	json_t *v;

	for (size_t k = 0; k < sizeof(lists) / sizeof(lists[0]); k++) {
		json_array_foreach(json_object_get(bl, lists[k]), i, v) {
			print_baseline_item(fp, lists[k], v);
			n++;
		}
		const json_t *more = json_object_get(omitted, lists[k]);
		if (json_is_integer(more)) {
			fprintf(fp, "%-9s and %" JSON_INTEGER_FORMAT " more\n",
				lists[k], json_integer_value(more));
			n++;
		}
	}
	return n;
}

/*
 * ibsmctl health: one line per port, worst list first, then the
 * differences from the baseline; "healthy" when there is nothing.
 */
static void health_print_text(FILE *fp, const json_t *reply)
{
	const json_t *bl = json_object_get(reply, "baseline");
	size_t n = 0, i;
	json_t *v;

	for (size_t k = 0; k < N_HEALTH_LISTS; k++)
		json_array_foreach(json_object_get(reply, health_lists[k]), i, v) {
			print_health_port(fp, health_lists[k], v);
			n++;
		}
	if (json_is_object(bl) && json_is_string(json_object_get(bl, "error"))) {
		if (n == 0)
			fputs("healthy\n", fp);
		fprintf(fp, "baseline: %s\n", str_of(bl, "error"));
		return;
	}
	if (json_is_object(bl))
		n += print_baseline_diff(fp, bl);
	if (n == 0)
		fputs("healthy\n", fp);
	if (!json_is_object(bl))
		fputs("baseline: none saved (ibsmctl health --save-baseline)\n", fp);
}

/* health --save-baseline: {"baseline": {"saved": PATH, "nodes": N, "links": M}} */
static int baseline_saved_is_reply(const json_t *reply)
{
	return json_is_string(json_object_get(json_object_get(reply, "baseline"),
					      "saved"));
}

static void baseline_saved_print_text(FILE *fp, const json_t *reply)
{
	const json_t *bl = json_object_get(reply, "baseline");
	fprintf(fp, "baseline saved to %s: %" JSON_INTEGER_FORMAT " nodes, %"
		JSON_INTEGER_FORMAT " links\n", str_of(bl, "saved"),
		json_integer_value(json_object_get(bl, "nodes")),
		json_integer_value(json_object_get(bl, "links")));
}

void control_print_text(FILE *fp, const json_t *reply)
{
	const json_t *text = json_object_get(reply, "text");
	const json_t *vms = json_object_get(reply, "vms");
	const json_t *lids = json_object_get(reply, "lids");

	if (topology_is_reply(reply)) {
		topology_print_text(fp, reply);
		return;
	}
	/* job start --wait: one word a prolog can test */
	if (json_is_true(json_object_get(reply, "ready"))) {
		fputs("ready\n", fp);
		return;
	}
	if (health_is_reply(reply)) {
		health_print_text(fp, reply);
		return;
	}
	if (baseline_saved_is_reply(reply)) {
		baseline_saved_print_text(fp, reply);
		return;
	}
	if (json_is_array(vms) && json_object_size(reply) <= 2) {
		print_vms(fp, vms);
		return;
	}
	if (json_is_array(json_object_get(reply, "routes")) &&
	    json_is_object(json_object_get(reply, "switch"))) {
		print_routes(fp, reply);
		return;
	}
	if (json_is_array(lids)) {
		print_lids(fp, lids);
		return;
	}
	if (json_is_array(json_object_get(reply, "groups")) &&
	    json_object_size(reply) <= 2) {
		print_groups(fp, json_object_get(reply, "groups"));
		return;
	}
	if (json_is_array(json_object_get(reply, "partitions")) &&
	    json_is_array(json_object_get(reply, "violations"))) {
		print_partitions(fp, reply);
		return;
	}

	if (json_is_string(text)) {
		const char *s = json_string_value(text);
		size_t n = strlen(s);
		fputs(s, fp);
		if (n > 0 && s[n - 1] != '\n')
			fputc('\n', fp);
		return;
	}
	if (json_is_object(reply))
		print_object(fp, reply, 0, "ok");
}
