/*
 * The status page (see statuspage.h).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sm/ctl/statuspage.h"

/* The health JSON's lists of ports, as ibsmctl(8) "health" names them. */
static const struct {
	const char *key, *title;
} port_lists[] = {
	{ "unhealthy", "Unhealthy ports" },
	{ "flapping", "Flapping ports" },
	{ "degraded", "Degraded links" },
	{ "hot", "Hot ports" },
};
static const char *const baseline_lists[] = { "missing", "extra", "moved" };

static const char style[] =
	"body{font-family:Helvetica,Arial,sans-serif;margin:1em 2em;color:#222}"
	"h1{font-size:1.4em}h2{font-size:1.1em;margin-top:1.5em;border-bottom:1px solid #ccc}"
	"table{border-collapse:collapse;font-size:.9em}"
	"td,th{border:1px solid #ddd;padding:2px 8px;text-align:left;vertical-align:top}"
	"th{background:#f4f4f4}.state{font-weight:bold;padding:2px 8px;border-radius:4px}"
	".MASTER{background:#c8f0c8}.STANDBY{background:#e0e0ff}"
	".DISCOVERING,.NOTACTIVE{background:#ffe0b0}.bad{color:#b00}"
	".none{color:#777}.fabric{overflow:auto;border:1px solid #ddd}"
	".fabric svg{max-width:100%;height:auto}"
	".cols{display:flex;flex-wrap:wrap;gap:0 3em}.cols>div{min-width:18em}";

/* s HTML-escaped (& < > " '): text and attribute values alike. */
static void statuspage_escape(FILE *fp, const char *s)
{
	for (; s && *s; s++) {
		switch (*s) {
		case '&': fputs("&amp;", fp); break;
		case '<': fputs("&lt;", fp); break;
		case '>': fputs("&gt;", fp); break;
		case '"': fputs("&quot;", fp); break;
		case '\'': fputs("&#39;", fp); break;
		default: fputc(*s, fp);
		}
	}
}

/* A JSON value as text, escaped: a string as it is, the rest as compact JSON. */
static void put_value(FILE *fp, const json_t *v)
{
	if (!v || json_is_null(v)) {
		fputs("-", fp);
		return;
	}
	if (json_is_string(v)) {
		statuspage_escape(fp, json_string_value(v));
		return;
	}
	char *s = json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY);
	statuspage_escape(fp, s ? s : "?");
	free(s);
}

/* One cell per key of o (NULL-ended), the first of class first_class. */
static void put_cells(FILE *fp, const json_t *o, const char *const *keys,
		      const char *first_class)
{
	for (size_t k = 0; keys[k]; k++) {
		if (k == 0 && first_class)
			fprintf(fp, "<td class=\"%s\">", first_class);
		else
			fputs("<td>", fp);
		put_value(fp, json_object_get(o, keys[k]));
		fputs("</td>", fp);
	}
}

/* One row "name | value" of o's key, if o has it. */
static void row(FILE *fp, const char *name, const json_t *o, const char *key)
{
	const json_t *v = json_object_get(o, key);
	if (!v)
		return;
	fputs("<tr><th>", fp);
	statuspage_escape(fp, name);
	fputs("</th><td>", fp);
	put_value(fp, v);
	fputs("</td></tr>\n", fp);
}

static void put_sm(FILE *fp, const json_t *st)
{
	fputs("<h2>Subnet manager</h2>\n<table>\n", fp);
	const char *state = json_string_value(json_object_get(st, "state"));
	fputs("<tr><th>state</th><td><span class=\"state ", fp);
	statuspage_escape(fp, state ? state : "?");
	fputs("\">", fp);
	statuspage_escape(fp, state ? state : "?");
	fputs("</span></td></tr>\n", fp);
	row(fp, "priority", st, "priority");
	row(fp, "port GUID", st, "port_guid");
	row(fp, "SM LID", st, "sm_lid");
	row(fp, "master GUID", st, "master_guid");
	row(fp, "master LID", st, "master_lid");
	row(fp, "master priority", st, "master_priority");
	row(fp, "version", st, "version");
	row(fp, "started", st, "started");
	row(fp, "uptime (s)", st, "uptime_s");
	row(fp, "sweeping", st, "sweeping");
	fputs("</table>\n", fp);
}

static void put_sweeps(FILE *fp, const json_t *st)
{
	static const struct { const char *name, *key; } last[] = {
		{ "time", "time" }, { "duration (ms)", "sweep_ms" },
		{ "routing (ms)", "route_ms" }, { "switches", "switches" },
		{ "CAs", "cas" }, { "ports", "ports" }, { "LIDs", "lids" },
		{ "routing engine", "routing" }, { "MADs sent", "mads_sent" },
		{ "MAD timeouts", "mad_timeouts" }, { "unresponsive", "unresponsive" },
		{ "LFT blocks written", "lft_blocks" },
	};
	const json_t *l = json_object_get(st, "last_heavy_sweep");

	fputs("<h2>Sweeps</h2>\n<table>\n", fp);
	row(fp, "heavy sweeps", st, "heavy_sweeps");
	row(fp, "light sweeps", st, "light_sweeps");
	row(fp, "last sweep", st, "last_sweep_date");
	fputs("</table>\n", fp);
	if (!json_is_object(l)) {
		fputs("<p class=\"none\">no heavy sweep has configured the subnet yet</p>\n", fp);
		return;
	}
	fputs("<h3>Last heavy sweep</h3>\n<table>\n", fp);
	for (size_t i = 0; i < sizeof(last) / sizeof(last[0]); i++)
		row(fp, last[i].name, l, last[i].key);
	fputs("</table>\n", fp);
}

/* The performance manager's last sweep (status "perfmgr"). */
static void put_perfmgr(FILE *fp, const json_t *st)
{
	static const struct { const char *name, *key; } last[] = {
		{ "started", "start" }, { "ports read", "read" }, { "failed", "failed" },
		{ "GMPs", "gmps" }, { "duration (ms)", "ms" },
		{ "yielded to the SA (ms)", "yielded_ms" },
		{ "unhealthy", "unhealthy" }, { "hot", "hot" },
	};
	const json_t *pm = json_object_get(st, "perfmgr");
	if (!json_is_object(pm))
		return;
	const json_t *l = json_object_get(pm, "last");
	fputs("<h3>Performance manager</h3>\n<table>\n", fp);
	row(fp, "interval (s)", pm, "interval_s");
	row(fp, "sweeps", pm, "sweeps");
	for (size_t i = 0; json_is_object(l) && i < sizeof(last) / sizeof(last[0]); i++)
		row(fp, last[i].name, l, last[i].key);
	fputs("</table>\n", fp);
}

/* dFtree's hot-spots (status "congestion"), when the mode is on. */
static void put_hotspots(FILE *fp, const json_t *st)
{
	const json_t *c = json_object_get(st, "congestion");
	const json_t *list = json_object_get(c, "list"), *h;
	size_t i;
	if (!json_is_array(list))
		return;
	fputs("<h2>Hot-spots (slow lane)</h2>\n", fp);
	if (!json_array_size(list)) {
		fputs("<p class=\"none\">none</p>\n", fp);
		return;
	}
	fputs("<table>\n<tr><th>node</th><th>LID</th><th>since</th><th>contributors</th></tr>\n", fp);
	static const char *const cols[] = { "node", "lid", "since", "contributors", NULL };
	json_array_foreach(list, i, h) {
		fputs("<tr>", fp);
		put_cells(fp, h, cols, "bad");
		fputs("</tr>\n", fp);
	}
	fputs("</table>\n", fp);
}

static void put_errors(FILE *fp, const json_t *st)
{
	const json_t *errs = json_object_get(st, "errors"), *e;
	size_t i;

	fputs("<h2>Errors</h2>\n<table>\n", fp);
	row(fp, "failed links", st, "failed_links");
	row(fp, "degraded links", st, "degraded_links");
	fputs("</table>\n", fp);
	if (!json_array_size(errs)) {
		fputs("<p class=\"none\">no error</p>\n", fp);
		return;
	}
	fputs("<table>\n<tr><th>kind</th><th>message</th><th>since</th><th>last</th>"
	      "<th>count</th></tr>\n", fp);
	json_array_foreach(errs, i, e) {
		static const char *const keys[] = { "kind", "message", "since", "last", "count" };
		fputs("<tr class=\"bad\">", fp);
		for (size_t k = 0; k < sizeof(keys) / sizeof(keys[0]); k++) {
			fputs("<td>", fp);
			put_value(fp, json_object_get(e, keys[k]));
			fputs("</td>", fp);
		}
		fputs("</tr>\n", fp);
	}
	fputs("</table>\n", fp);
}

/* "a, b, c" of an array's values, or the value itself. */
static void put_list(FILE *fp, const json_t *v)
{
	const json_t *e;
	size_t i;

	if (!json_is_array(v)) {
		put_value(fp, v);
		return;
	}
	json_array_foreach(v, i, e) {
		if (i)
			fputs(", ", fp);
		put_value(fp, e);
	}
}

/* "NAME=VALUE ..." of an object's members, or the value itself. */
static void put_members(FILE *fp, const json_t *v, const char *const *skip)
{
	const char *key;
	const json_t *m;
	int first = 1;

	if (!json_is_object(v)) {
		put_value(fp, v);
		return;
	}
	json_object_foreach((json_t *)v, key, m) {
		int skipped = 0;
		for (size_t i = 0; skip && skip[i]; i++)
			skipped |= !strcmp(skip[i], key);
		if (skipped)
			continue;
		if (!first)
			fputs(" ", fp);
		first = 0;
		statuspage_escape(fp, key);
		fputs("=", fp);
		put_value(fp, m);
	}
}

static void put_ports(FILE *fp, const char *title, const json_t *ports)
{
	static const char *const shown[] = { "node", "port", "guid", "reasons", "counters", NULL };
	const json_t *p;
	size_t i;

	fputs("<h3>", fp);
	statuspage_escape(fp, title);
	fputs("</h3>\n", fp);
	if (!json_array_size(ports)) {
		fputs("<p class=\"none\">none</p>\n", fp);
		return;
	}
	fputs("<table>\n<tr><th>node</th><th>port</th><th>GUID</th><th>reasons</th>"
	      "<th>counters</th><th>more</th></tr>\n", fp);
	static const char *const cols[] = { "node", "port", "guid", NULL };
	json_array_foreach(ports, i, p) {
		fputs("<tr>", fp);
		put_cells(fp, p, cols, NULL);
		fputs("<td class=\"bad\">", fp);
		put_list(fp, json_object_get(p, "reasons"));
		fputs("</td><td>", fp);
		put_members(fp, json_object_get(p, "counters"), NULL);
		fputs("</td><td>", fp);
		put_members(fp, p, shown);
		fputs("</td></tr>\n", fp);
	}
	fputs("</table>\n", fp);
}

static void put_health(FILE *fp, const json_t *h, const char *why)
{
	fputs("<h2>Fabric health</h2>\n", fp);
	if (!h) {
		fputs("<p class=\"none\">not available: ", fp);
		statuspage_escape(fp, why ? why : "?");
		fputs("</p>\n", fp);
		return;
	}
	for (size_t i = 0; i < sizeof(port_lists) / sizeof(port_lists[0]); i++)
		put_ports(fp, port_lists[i].title, json_object_get(h, port_lists[i].key));
	const json_t *b = json_object_get(h, "baseline");
	if (!json_is_object(b))
		return;
	fputs("<h3>Against the baseline</h3>\n<table>\n", fp);
	for (size_t i = 0; i < sizeof(baseline_lists) / sizeof(baseline_lists[0]); i++) {
		const json_t *l = json_object_get(b, baseline_lists[i]), *e;
		size_t k;
		if (!l)
			continue;
		fputs("<tr><th>", fp);
		statuspage_escape(fp, baseline_lists[i]);
		fputs("</th><td>", fp);
		if (!json_array_size(l))
			fputs("<span class=\"none\">none</span>", fp);
		json_array_foreach(l, k, e) {
			fputs(k ? "<br>" : "", fp);
			put_members(fp, e, NULL);
		}
		fputs("</td></tr>\n", fp);
	}
	fputs("</table>\n", fp);
}

static void put_events(FILE *fp, const json_t *st)
{
	const json_t *recent = json_object_get(json_object_get(st, "events"), "recent"), *e;
	size_t i;

	if (!recent)
		return;
	fputs("<h2>Recent events</h2>\n", fp);
	if (!json_array_size(recent)) {
		fputs("<p class=\"none\">none</p>\n", fp);
		return;
	}
	fputs("<table>\n", fp);
	json_array_foreach(recent, i, e) {
		fputs("<tr><td>", fp);
		put_members(fp, e, NULL);
		fputs("</td></tr>\n", fp);
	}
	fputs("</table>\n", fp);
}

/* The picture: the SVG element itself, without its XML prologue. */
static void put_picture(FILE *fp, const char *svg, const char *note)
{
	const char *el = svg ? strstr(svg, "<svg") : NULL;

	fputs("<h2>Fabric</h2>\n", fp);
	if (!el) {
		fputs("<p class=\"none\">", fp);
		statuspage_escape(fp, note ? note : "no picture");
		fputs("</p>\n", fp);
		return;
	}
	fputs("<p>Also at <a href=\"fabric.svg\">fabric.svg</a>.</p>\n<div class=\"fabric\">\n", fp);
	fputs(el, fp);
	fputs("</div>\n", fp);
}

char *statuspage_html(const struct statuspage_in *in, size_t *len)
{
	char *buf = NULL;
	size_t n = 0;
	FILE *fp = open_memstream(&buf, &n);
	if (!fp)
		return NULL;
	fprintf(fp, "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
		"<title>ibsmd</title>\n<style>%s</style>\n</head>\n<body>\n<h1>ibsmd", style);
	const char *guid = json_string_value(json_object_get(in->status, "port_guid"));
	if (guid) {
		fputs(" on ", fp);
		statuspage_escape(fp, guid);
	}
	fputs("</h1>\n", fp);
	if (in->status) {
		fputs("<div class=\"cols\">\n<div>\n", fp);
		put_sm(fp, in->status);
		put_errors(fp, in->status);
		fputs("</div>\n<div>\n", fp);
		put_sweeps(fp, in->status);
		put_perfmgr(fp, in->status);
		fputs("</div>\n</div>\n", fp);
	} else {
		fputs("<p class=\"bad\">no status: ", fp);
		statuspage_escape(fp, in->status_err ? in->status_err : "?");
		fputs("</p>\n", fp);
	}
	put_health(fp, in->health, in->health_err);
	put_hotspots(fp, in->status);
	put_events(fp, in->status);
	put_picture(fp, in->svg, in->svg_note);
	fputs("<p class=\"none\">JSON: <a href=\"api/status\">api/status</a>, "
	      "<a href=\"api/health\">api/health</a>; "
	      "<a href=\"metrics\">metrics</a></p>\n</body>\n</html>\n", fp);
	if (fclose(fp) != 0 || !buf) {
		free(buf);
		return NULL;
	}
	*len = n;
	return buf;
}
