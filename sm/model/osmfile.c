/*
 * OpenSM's configuration files recognised (see osmfile.h).
 */
#include "sm/model/osmfile.h"

#include <regex.h>
#include <stddef.h>

/* Line patterns of OpenSM's files (POSIX extended), and how many lines make a file of that kind. */
static const struct {
	const char *kind;
	const char *re;
	unsigned need;
} kinds[] = {
	/* opensm.conf: "sm_priority 0", "routing_engine minhop" (no YAML colon) */
	{ "opensm.conf", "^[a-z][a-z0-9_]*[ \t]+[^ \t:#][^:]*$", 2 },
	/* partitions.conf: "Default=0x7fff, ipoib : ALL=full;" */
	{ "partitions.conf", "^[ \t]*[A-Za-z0-9_.-]+[ \t]*=[ \t]*0x[0-9a-fA-F]+[^:]*:", 1 },
	/* qos-policy.conf: its section keywords on a line of their own */
	{ "qos-policy.conf", "^[ \t]*(port-groups|qos-levels|qos-match-rules|qos-ulps)[ \t]*$", 1 },
};
#define N_KINDS (sizeof(kinds) / sizeof(kinds[0]))

const char *osmfile_kind(FILE *f)
{
	regex_t re[N_KINDS];
	unsigned hits[N_KINDS] = { 0 };
	const char *kind = NULL;
	char line[512];
	size_t ok = 0;

	for (; ok < N_KINDS; ok++)
		if (regcomp(&re[ok], kinds[ok].re, REG_EXTENDED | REG_NOSUB | REG_NEWLINE) != 0)
			break;
	rewind(f);
	for (unsigned n = 0; ok == N_KINDS && !kind && n < OSMFILE_SCAN_LINES &&
	     fgets(line, sizeof(line), f); n++) {
		for (size_t k = 0; k < N_KINDS && !kind; k++)
			if (regexec(&re[k], line, 0, NULL, 0) == 0 && ++hits[k] >= kinds[k].need)
				kind = kinds[k].kind;
	}
	for (size_t k = 0; k < ok; k++)
		regfree(&re[k]);
	rewind(f);
	return kind;
}
