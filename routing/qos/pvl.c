/*
 * Partition VLs: Algorithm 5 (corrected) and the SLs.  See pvl.h.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "routing/verify/pverify.h"
#include "routing/qos/pvl.h"

int pvl_needed(const struct part_model *m)
{
	for (uint32_t p = 1; m && p < m->n_parts; p++)
		if (m->parts[p].policy == PART_VLANE || m->parts[p].sl > 0)
			return 1;
	return 0;
}

/* p shares a link with a partition still on VL 0 (as p is, unassigned). */
static int needs_vl(const struct part_model *m, const uint8_t *share,
		    const uint8_t *vl, uint32_t p)
{
	for (uint32_t q = 1; q < m->n_parts; q++)
		if (q != p && share[(size_t)p * m->n_parts + q] && vl[q] == 0)
			return 1;
	return 0;
}

int pvl_assign(const struct part_model *m, const uint8_t *share,
	       unsigned data_vls, uint8_t *vl, char *msg, size_t len)
{
	unsigned next = 1;	/* VLs in use, VL 0 the shared one */
	uint16_t taken = 0;	/* the VLs of policy sls */
	int wrapped = 0;
	if (len)
		msg[0] = '\0';
	memset(vl, 0, m->n_parts);
	for (uint32_t p = 1; p < m->n_parts; p++) {
		int sl = m->parts[p].sl;
		if (m->parts[p].policy != PART_VLANE && sl > 0 &&
		    (unsigned)sl < data_vls) {
			vl[p] = (uint8_t)sl;	/* SL s -> VL s: its own VL */
			taken |= (uint16_t)(1u << sl);
		}
	}
	for (uint32_t p = 1; p < m->n_parts; p++) {
		const struct part *pt = &m->parts[p];
		if (pt->policy != PART_VLANE || !needs_vl(m, share, vl, p))
			continue;
		while (next < data_vls && (taken & (1u << next)))
			next++;
		if (next >= data_vls) {
			if (m->strict) {
				snprintf(msg, len, "partition %s (vlane-isolation) shares links and no data VL is left of %u (strict isolation)",
					 pt->name, data_vls);
				return PVL_STRICT_FAIL;
			}
			size_t l = strlen(msg);
			snprintf(msg + l, len - l, "%spartition %s (vlane-isolation): no data VL left of %u, wrapped to VL 1 (best-effort)",
				 l ? "; " : "", pt->name, data_vls);
			next = 1;
			wrapped = 1;
			if (data_vls < 2)
				continue;	/* VL 0 only: nothing to wrap to */
		}
		vl[p] = (uint8_t)next++;
	}
	return wrapped;
}

/* t->part_sl from vl and the policy's sl; 1 when some SL is not 0. */
static int fill_part_sl(const struct part_model *m, const uint8_t *vl,
			struct lft_tables *t)
{
	int any = 0;
	for (uint32_t p = 0; p < m->n_parts; p++) {
		const struct part *pt = &m->parts[p];
		uint8_t sl = 0;
		if (p && pt->policy == PART_VLANE)
			sl = vl[p];
		else if (p && pt->sl > 0)
			sl = (uint8_t)(pt->sl & 15);
		t->part_sl[p] = sl;
		any |= sl != 0;
	}
	return any;
}

int pvl_apply(const struct fabric *f, struct lft_tables *t,
	      const struct part_model *m, unsigned data_vls, char *msg,
	      size_t len)
{
	struct pverify_report r;
	uint8_t *vl;
	int rc;
	if (len)
		msg[0] = '\0';
	free(t->part_sl);
	t->part_sl = NULL;
	t->n_part_sl = 0;
	if (!pvl_needed(m))
		return 0;
	if (pverify(f, t, m, &r) < 0)
		return -1;
	vl = calloc(m->n_parts, 1);
	t->part_sl = calloc(m->n_parts, 1);
	if (!vl || !t->part_sl) {
		rc = -1;
		goto out;
	}
	t->n_part_sl = m->n_parts;
	rc = pvl_assign(m, r.share, data_vls, vl, msg, len);
	if (rc < 0)
		goto out;
	if (!fill_part_sl(m, vl, t)) {
		free(t->part_sl);	/* every SL 0: nothing to write */
		t->part_sl = NULL;
		t->n_part_sl = 0;
	} else if (!t->sl2vl && lft_sl2vl_identity(f, t, data_vls) < 0) {
		rc = -1;
	}
out:
	if (rc < 0) {
		free(t->part_sl);
		t->part_sl = NULL;
		t->n_part_sl = 0;
	}
	free(vl);
	pverify_free(&r);
	return rc;
}
