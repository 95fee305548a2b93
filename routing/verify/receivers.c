/*
 * The receivers of --verify --receivers.  See receivers.h.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "routing/partition.h"
#include "routing/verify/contention.h"
#include "routing/verify/hol.h"
#include "routing/verify/receivers.h"

#define RANDOM_PREFIX "random:"

int receivers_spec(const char *spec, uint32_t *per_leaf, char *part,
		   size_t partlen, char *err, size_t errlen)
{
	size_t pl = strlen(RANDOM_PREFIX);
	if (strncmp(spec, RANDOM_PREFIX, pl))
		return 0;
	const char *s = spec + pl;
	char *end;
	errno = 0;
	unsigned long v = strtoul(s, &end, 10);
	if (errno || end == s || *s == '-' || *s == '+' || v < 1 ||
	    v > RECEIVERS_MAX_PER_LEAF || (*end && *end != ',') ||
	    (*end == ',' && (!end[1] || strlen(end + 1) >= partlen))) {
		snprintf(err, errlen, "'%s': expected random:R[,PARTITION], R 1..%u",
			 spec, RECEIVERS_MAX_PER_LEAF);
		return -1;
	}
	*per_leaf = (uint32_t)v;
	snprintf(part, partlen, "%s", *end == ',' ? end + 1 : "");
	return 1;
}

/* s[0..n) without blanks and double quotes around it, into buf. */
static void trim_name(const char *s, size_t n, char *buf, size_t len)
{
	while (n && (*s == ' ' || *s == '\t'))
		s++, n--;
	while (n && (s[n - 1] == ' ' || s[n - 1] == '\t' || s[n - 1] == '\r'))
		n--;
	if (n >= 2 && s[0] == '"' && s[n - 1] == '"')
		s++, n -= 2;
	if (n >= len)
		n = len - 1;
	memcpy(buf, s, n);
	buf[n] = '\0';
}

int receivers_parse(const struct fabric *f, const char *text,
		    const char *fname, uint8_t *recv, char *err, size_t errlen)
{
	char name[256], why[512];
	unsigned line = 0;
	int count = 0;

	memset(recv, 0, f->n_ports);
	for (const char *s = text; *s; s++) {
		const char *e = strchr(s, '\n');
		size_t n = e ? (size_t)(e - s) : strlen(s);
		const char *hash = memchr(s, '#', n);
		line++;
		trim_name(s, hash ? (size_t)(hash - s) : n, name, sizeof(name));
		s += n;
		if (!name[0]) {
			if (!*s)
				break;
			continue;
		}
		uint32_t pi = endport_find(f, name, why, sizeof(why));
		if (pi != FAB_NONE && !contention_flow_end(f, pi))
			snprintf(why, sizeof(why), "'%s' is not cabled to a switch",
				 name);
		else if (pi != FAB_NONE && recv[pi])
			snprintf(why, sizeof(why), "'%s' is named twice", name);
		if (pi == FAB_NONE || !contention_flow_end(f, pi) || recv[pi]) {
			snprintf(err, errlen, "%s:%u: %s", fname, line, why);
			return -1;
		}
		recv[pi] = 1;
		count++;
		if (!*s)
			break;
	}
	if (!count) {
		snprintf(err, errlen, "%s: names no receiver", fname);
		return -1;
	}
	return count;
}

struct cand {
	uint64_t sw, guid;	/* the switch's node GUID, the port's */
	uint32_t pi;
};

static int by_switch_guid(const void *a, const void *b)
{
	const struct cand *x = a, *y = b;
	if (x->sw != y->sw)
		return x->sw < y->sw ? -1 : 1;
	if (x->guid != y->guid)
		return x->guid < y->guid ? -1 : 1;
	return (x->pi > y->pi) - (x->pi < y->pi);
}

/* splitmix64 */
static uint64_t next_rand(uint64_t *x)
{
	uint64_t z = (*x += 0x9E3779B97F4A7C15ull);
	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
	z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
	return z ^ (z >> 31);
}

static int is_member(const struct part_model *m, uint32_t pi, uint16_t q)
{
	if (pi >= m->n_ports)
		return 0;
	for (uint32_t k = m->mem_off[pi]; k < m->mem_off[pi + 1]; k++)
		if (PART_IDX(m->mem[k]) == q)
			return 1;
	return 0;
}

int receivers_random(const struct fabric *f, const struct part_model *m,
		     uint32_t per_leaf, const char *part, uint64_t seed,
		     uint8_t *recv, char *err, size_t errlen)
{
	uint16_t q = PART_NONE;
	memset(recv, 0, f->n_ports);
	if (part && part[0]) {
		for (uint32_t p = 1; m && m->mem_off && p < m->n_parts; p++)
			if (!strcmp(m->parts[p].name, part))
				q = (uint16_t)p;
		if (q == PART_NONE) {
			snprintf(err, errlen, "random:%u,%s: no partition '%s' in the policy",
				 per_leaf, part, part);
			return -1;
		}
	}
	struct cand *c = malloc(((size_t)f->n_ports + 1) * sizeof(*c));
	if (!c) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	uint32_t n = 0;
	for (uint32_t pi = 0; pi < f->n_ports; pi++) {
		if (!contention_flow_end(f, pi) ||
		    (q != PART_NONE && !is_member(m, pi, q)))
			continue;
		const struct fab_port *p = &f->ports[pi];
		c[n++] = (struct cand){
			.sw = f->nodes[f->ports[p->remote].node].guid,
			.guid = p->guid ? p->guid : f->nodes[p->node].guid,
			.pi = pi,
		};
	}
	qsort(c, n, sizeof(*c), by_switch_guid);
	uint64_t x = seed;
	int count = 0;
	for (uint32_t i = 0, j; i < n; i = j) {
		for (j = i; j < n && c[j].sw == c[i].sw; j++)
			;
		uint32_t k = j - i < per_leaf ? j - i : per_leaf;
		for (uint32_t a = 0; a < k; a++) {	/* partial Fisher-Yates */
			uint32_t b = a + (uint32_t)(next_rand(&x) % (j - i - a));
			struct cand tmp = c[i + a];
			c[i + a] = c[i + b];
			c[i + b] = tmp;
			recv[c[i + a].pi] = 1;
			count++;
		}
	}
	free(c);
	if (!count) {
		snprintf(err, errlen, "random:%u%s%s: no CA port to draw from",
			 per_leaf, q != PART_NONE ? "," : "", q != PART_NONE ? part : "");
		return -1;
	}
	return count;
}
