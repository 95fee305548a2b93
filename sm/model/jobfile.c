/*
 * The live jobs' file: see jobfile.h.
 */
#include "sm/model/jobfile.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "sm/base/wfile.h"

#define JOBFILE_VERSION 1

int job_id_ok(const char *id)
{
	size_t n = strlen(id);
	if (n == 0 || n >= JOB_ID_LEN)
		return 0;
	return strspn(id, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
			  "0123456789._-") == n;
}

void job_spec_free(struct job_spec *s)
{
	for (uint32_t i = 0; s->name && i < s->n; i++)
		free(s->name[i]);
	free(s->name);
	free(s->guid);
	free(s->text);
	memset(s, 0, sizeof(*s));
}

static json_t *spec_json(const struct job_spec *s)
{
	char seed[24];
	json_t *nodes = json_array();
	snprintf(seed, sizeof(seed), "0x%016" PRIx64, s->seed);
	for (uint32_t i = 0; nodes && i < s->n; i++) {
		char g[24];
		snprintf(g, sizeof(g), "0x%016" PRIx64, s->guid[i]);
		if (json_array_append_new(nodes, json_pack("[s,s]", g, s->name[i])) < 0) {
			json_decref(nodes);
			return NULL;
		}
	}
	json_t *o = json_pack("{s:s,s:I,s:s,s:I,s:s,s:o*}", "id", s->id,
			      "order", (json_int_t)s->order, "seed", seed,
			      "started", (json_int_t)s->started,
			      "pattern", s->pattern, "nodes", nodes);
	if (o && s->text && json_object_set_new(o, "text", json_string(s->text)) < 0) {
		json_decref(o);
		return NULL;
	}
	return o;
}

int jobfile_save(const char *path, struct job_spec *const *s, size_t n,
		 char *err, size_t errlen)
{
	struct wfile w;
	json_t *a = json_array();
	for (size_t i = 0; a && i < n; i++)
		if (json_array_append_new(a, spec_json(s[i])) < 0) {
			json_decref(a);
			a = NULL;
		}
	json_t *doc = a ? json_pack("{s:i,s:o}", "version", JOBFILE_VERSION, "jobs", a) : NULL;
	if (!doc) {
		snprintf(err, errlen, "%s: out of memory", path);
		return -1;
	}
	if (wfile_open(&w, path, err, errlen) < 0) {
		json_decref(doc);
		return -1;
	}
	int rc = json_dumpf(doc, w.fp, JSON_INDENT(1));
	json_decref(doc);
	if (rc < 0 || fputc('\n', w.fp) == EOF) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		wfile_abort(&w);
		return -1;
	}
	return wfile_commit(&w, err, errlen);
}

/* A "0x..." GUID or seed; 0 when it is not one. */
static int hex64(const json_t *v, uint64_t *out)
{
	const char *s = json_string_value(v);
	char *end;
	if (!s || strncmp(s, "0x", 2) || !s[2])
		return 0;
	errno = 0;
	*out = strtoull(s + 2, &end, 16);
	return !*end && !errno;
}

/* One job of the file into s; -1 with err. */
static int spec_of(const json_t *o, struct job_spec *s, char *err, size_t errlen)
{
	const char *id = json_string_value(json_object_get(o, "id"));
	const char *pat = json_string_value(json_object_get(o, "pattern"));
	const json_t *text = json_object_get(o, "text");
	const json_t *nodes = json_object_get(o, "nodes");
	json_int_t order = json_integer_value(json_object_get(o, "order"));
	memset(s, 0, sizeof(*s));
	if (!id || !job_id_ok(id) || !pat || strlen(pat) >= JOB_PATTERN_LEN ||
	    !json_is_array(nodes) || order <= 0 ||
	    !hex64(json_object_get(o, "seed"), &s->seed) ||
	    (text && !json_is_string(text))) {
		snprintf(err, errlen, "a job without a valid id, order, seed, pattern or nodes");
		return -1;
	}
	snprintf(s->id, sizeof(s->id), "%s", id);
	snprintf(s->pattern, sizeof(s->pattern), "%s", pat);
	s->order = (uint64_t)order;
	s->started = (uint64_t)json_integer_value(json_object_get(o, "started"));
	size_t n = json_array_size(nodes);
	s->guid = calloc(n + 1, sizeof(*s->guid));
	s->name = calloc(n + 1, sizeof(*s->name));
	if (!s->guid || !s->name || (text && !(s->text = strdup(json_string_value(text)))))
		goto nomem;
	for (size_t i = 0; i < n; i++) {
		const json_t *e = json_array_get(nodes, i);
		const char *name = json_string_value(json_array_get(e, 1));
		if (!hex64(json_array_get(e, 0), &s->guid[i]) || !name) {
			snprintf(err, errlen, "job %s: node %zu is not [GUID, name]", id, i);
			job_spec_free(s);
			return -1;
		}
		if (!(s->name[i] = strdup(name)))
			goto nomem;
		s->n = (uint32_t)i + 1;
	}
	return 0;
nomem:
	job_spec_free(s);
	snprintf(err, errlen, "out of memory");
	return -1;
}

int jobfile_load(const char *path, struct job_spec **out, size_t *n,
		 char *err, size_t errlen)
{
	json_error_t je;
	*out = NULL;
	*n = 0;
	FILE *fp = rfile_open(path, JOBFILE_MAX_BYTES, err, errlen);
	if (!fp)
		return errno == ENOENT ? 0 : -1;
	json_t *doc = json_loadf(fp, 0, &je);
	fclose(fp);
	const json_t *a = doc ? json_object_get(doc, "jobs") : NULL;
	if (!doc || !json_is_array(a) ||
	    json_integer_value(json_object_get(doc, "version")) != JOBFILE_VERSION) {
		snprintf(err, errlen, "%s: not a jobs file%s%s", path, doc ? "" : ": ",
			 doc ? "" : je.text);
		json_decref(doc);
		return -2;
	}
	size_t k = json_array_size(a);
	struct job_spec *v = calloc(k + 1, sizeof(*v));
	if (!v) {
		json_decref(doc);
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	for (size_t i = 0; i < k; i++) {
		char why[160];
		if (spec_of(json_array_get(a, i), &v[i], why, sizeof(why)) < 0) {
			snprintf(err, errlen, "%s: job %zu: %s", path, i, why);
			while (i--)
				job_spec_free(&v[i]);
			free(v);
			json_decref(doc);
			return -2;
		}
	}
	json_decref(doc);
	*out = v;
	*n = k;
	return 0;
}
